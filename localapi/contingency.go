package localapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// POST /contingencia: "cfe-agent contingencia ingresar" through the running
// agent (which holds the store's lock): paper contingency receipts (2xx)
// keyed in all or nothing, each body a /sign-cfe request with the form's
// serie, number and date (docs/contingencia.md). It is an administrator's
// action on the same terms as POST /backup (backup.go): only from this
// machine, with the agent's admin token in X-CFE-Admin. A single receipt is
// keyed in through /sign-cfe like any CFE.

// KeyIn keys in a batch of contingency receipts, for POST /contingencia.
type KeyIn interface {
	// KeyIn checks every request (a /sign-cfe body each) before it signs
	// any, and stores all or none; the result reports each line.
	KeyIn(ctx context.Context, requests []json.RawMessage) *apitype.KeyInResult
}

func (s *Server) registerContingencyRoutes(r *mux.Router) {
	s.handle(r, http.MethodPost, "/contingencia", s.handleContingency)
}

func (s *Server) handleContingency(w http.ResponseWriter, r *http.Request) {
	if !s.admitAdmin(w, r, adminRoute{what: "contingency key-in", elsewhere: "los comprobantes de contingencia se ingresan en lote solo desde este mismo equipo",
		missing: "este agente no ingresa comprobantes de contingencia en lote", command: "«cfe-agent contingencia ingresar»"}, s.cfg.KeyIn != nil) {
		return
	}
	b, err := readBody(r.Body)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var reqs []json.RawMessage
	if err := json.NewDecoder(bytes.NewReader(b)).Decode(&reqs); err != nil || len(reqs) == 0 {
		s.writeError(w, r, &cfe.Error{Code: cfe.EINVALID, Err: err, Message: "el cuerpo debe ser una lista JSON de solicitudes de firma",
			Fields: []cfe.FieldError{{Campo: "cuerpo", Mensaje: "se espera [{uuid, cfe}, …], al menos una"}}})
		return
	}
	writeJSON(w, http.StatusOK, s.cfg.KeyIn.KeyIn(r.Context(), reqs))
}
