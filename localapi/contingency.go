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
	switch {
	case !sameMachine(r):
		s.refuse(w, r, "contingency key-in from another machine", &cfe.Error{Code: cfe.EFORBIDDEN,
			Message: "los comprobantes de contingencia se ingresan en lote solo desde este mismo equipo"})
		return
	case s.cfg.KeyIn == nil || s.cfg.AdminToken == "":
		s.writeError(w, r, cfe.Errorf(cfe.EUNAVAILABLE, "este agente no ingresa comprobantes de contingencia en lote"))
		return
	case subtle.ConstantTimeCompare([]byte(r.Header.Get(headerAdmin)), []byte(s.cfg.AdminToken)) != 1:
		s.refuse(w, r, "missing or wrong admin token", &cfe.Error{Code: cfe.EUNAUTHORIZED,
			Message: "falta el token de administración del agente: use «cfe-agent contingencia ingresar» en este equipo",
			Fields:  []cfe.FieldError{{Campo: headerAdmin, Mensaje: "el token está en el archivo de ejecución del agente (carpeta de datos)"}}})
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
