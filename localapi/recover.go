package localapi

import (
	"context"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// POST /recuperar: "cfe-agent recuperar" through the running agent (which
// holds the store's lock). A signed CFE whose stored record cannot be read
// back waits in the quarantine; the technician recovers it from a backup
// that holds it intact, or from the hosted service's copy, and the agent
// delivers it. It is an administrator's action on the same terms as POST
// /backup (backup.go): only from this machine, with the agent's admin token
// in X-CFE-Admin. The files it names are read, never written.

// Repairs recovers stored CFEs that cannot be read back, for POST
// /recuperar.
type Repairs interface {
	// Recover puts the CFE back from the first copy that holds it intact.
	// It returns EINVALID for a request without uuid, ENOTFOUND for a uuid
	// the store does not hold, and ECONFLICT when the CFE can be read (there
	// is nothing to recover) or no copy gives it back (the message names
	// each copy and why).
	Recover(ctx context.Context, req apitype.RecoverRequest) (*apitype.RecoverResult, error)
}

func (s *Server) registerRecoverRoutes(r *mux.Router) {
	s.handle(r, http.MethodPost, "/recuperar", s.handleRecover)
}

func (s *Server) handleRecover(w http.ResponseWriter, r *http.Request) {
	if !s.admitAdmin(w, r, adminRoute{what: "recovery", elsewhere: "los comprobantes dañados solo se recuperan desde este mismo equipo",
		missing: "este agente no recupera comprobantes dañados", command: "«cfe-agent recuperar»"}, s.cfg.Repairs != nil) {
		return
	}
	req, err := decodeRecoverRequest(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	res, err := s.cfg.Repairs.Recover(r.Context(), *req)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	res.OK = true
	writeJSON(w, http.StatusOK, res)
}

// decodeRecoverRequest reads {uuid, copias, sin_servicio}; anything else is
// refused.
func decodeRecoverRequest(r *http.Request) (*apitype.RecoverRequest, error) {
	var req apitype.RecoverRequest
	if err := decodeObject(r, &req, "se espera {uuid}, y si se desea copias y sin_servicio"); err != nil {
		return nil, err
	}
	if req.UUID == "" {
		return nil, cfe.Invalid("localapi.Recover", cfe.FieldError{Campo: "uuid", Mensaje: "es obligatorio"})
	}
	return &req, nil
}
