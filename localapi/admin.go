package localapi

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// An administrator's route (POST /backup, /recuperar, /reporte-diario,
// /reporte/reenviar, /contingencia) runs a technician's command through the
// running agent, which holds the store's lock. Every one is on the same
// terms: only from this machine, and with the agent's admin token in
// X-CFE-Admin (the token is in the agent's run file, which only the user
// running the agent can read).

// adminRoute is what an administrator's route says when it refuses.
type adminRoute struct {
	what      string // for the log: "backup", "report resend", ...
	elsewhere string // Spanish: why another machine may not ask
	missing   string // Spanish: the agent does not offer the action
	command   string // the technician's command, «cfe-agent backup»
}

// admitAdmin reports whether r may run route a; when it may not it has
// answered (403 from another machine, 503 when the agent does not offer
// the action, 401 without the admin token). offered: the agent has the
// action's implementation.
func (s *Server) admitAdmin(w http.ResponseWriter, r *http.Request, a adminRoute, offered bool) bool {
	switch {
	case !sameMachine(r):
		s.refuse(w, r, a.what+" from another machine", &cfe.Error{Code: cfe.EFORBIDDEN, Message: a.elsewhere})
		return false
	case !offered || s.cfg.AdminToken == "":
		s.writeError(w, r, cfe.Errorf(cfe.EUNAVAILABLE, "%s", a.missing))
		return false
	case subtle.ConstantTimeCompare([]byte(r.Header.Get(headerAdmin)), []byte(s.cfg.AdminToken)) != 1:
		s.refuse(w, r, "missing or wrong admin token", &cfe.Error{Code: cfe.EUNAUTHORIZED,
			Message: "falta el token de administración del agente: use " + a.command + " en este equipo",
			Fields:  []cfe.FieldError{{Campo: headerAdmin, Mensaje: "el token está en el archivo de ejecución del agente (carpeta de datos)"}}})
		return false
	}
	return true
}

// decodeObject reads r's body into out: one JSON object and nothing after
// it, no field out does not know. shape is the Spanish "se espera …" of
// the refusal.
func decodeObject(r *http.Request, out any, shape string) error {
	b, err := readBody(r.Body)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil || dec.More() {
		if name, ok := strings.CutPrefix(errString(err), "json: unknown field "); ok {
			name = strings.Trim(name, `"`)
			return &cfe.Error{Code: cfe.EINVALID, Err: err, Message: "el cuerpo trae el campo «" + name + "», que este pedido no tiene",
				Fields: []cfe.FieldError{{Campo: name, Mensaje: "no es un campo de este pedido (" + shape + ")"}}}
		}
		return &cfe.Error{Code: cfe.EINVALID, Err: err, Message: "el cuerpo debe ser un objeto JSON",
			Fields: []cfe.FieldError{{Campo: "cuerpo", Mensaje: shape}}}
	}
	return nil
}

// errString is err's text, "" for nil.
func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
