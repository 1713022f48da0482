package localapi

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
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
	switch {
	case !sameMachine(r):
		s.refuse(w, r, "recovery from another machine", &cfe.Error{Code: cfe.EFORBIDDEN,
			Message: "los comprobantes dañados solo se recuperan desde este mismo equipo"})
		return
	case s.cfg.Repairs == nil || s.cfg.AdminToken == "":
		s.writeError(w, r, cfe.Errorf(cfe.EUNAVAILABLE, "este agente no recupera comprobantes dañados"))
		return
	case subtle.ConstantTimeCompare([]byte(r.Header.Get(headerAdmin)), []byte(s.cfg.AdminToken)) != 1:
		s.refuse(w, r, "missing or wrong admin token", &cfe.Error{Code: cfe.EUNAUTHORIZED,
			Message: "falta el token de administración del agente: use «cfe-agent recuperar» en este equipo",
			Fields:  []cfe.FieldError{{Campo: headerAdmin, Mensaje: "el token está en el archivo de ejecución del agente (carpeta de datos)"}}})
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
	b, err := readBody(r.Body)
	if err != nil {
		return nil, err
	}
	var req apitype.RecoverRequest
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || dec.More() {
		return nil, &cfe.Error{Code: cfe.EINVALID, Err: err, Message: "el cuerpo debe ser un objeto JSON",
			Fields: []cfe.FieldError{{Campo: "cuerpo", Mensaje: "se espera {uuid}, y si se desea copias y sin_servicio"}}}
	}
	if req.UUID == "" {
		return nil, cfe.Invalid("localapi.Recover", cfe.FieldError{Campo: "uuid", Mensaje: "es obligatorio"})
	}
	return &req, nil
}
