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

// POST /reporte/reenviar: "cfe-agent reporte reenviar --fecha D" through the
// running agent (which holds the store's lock): the day's daily report to
// DGI is built again and recorded with SecEnvio + 1, and the agent sends
// it. An administrator's action on the same terms as POST /backup
// (backup.go): only from this machine, with the agent's admin token in
// X-CFE-Admin.

// ReportResends resends a day's daily report, for POST /reporte/reenviar.
type ReportResends interface {
	// ResendReport records the corrected report of req.Fecha. It returns
	// EINVALID for a date that is not one or a day not over yet, ECONFLICT
	// while the day's last report has no answer from DGI, EUNAVAILABLE when
	// the agent does not send reports.
	ResendReport(ctx context.Context, req apitype.ReportResendRequest) (*apitype.ReportResendResult, error)
}

func (s *Server) registerReportResendRoutes(r *mux.Router) {
	s.handle(r, http.MethodPost, "/reporte/reenviar", s.handleReportResend)
}

func (s *Server) handleReportResend(w http.ResponseWriter, r *http.Request) {
	switch {
	case !sameMachine(r):
		s.refuse(w, r, "report resend from another machine", &cfe.Error{Code: cfe.EFORBIDDEN,
			Message: "los reportes diarios solo se reenvían desde este mismo equipo"})
		return
	case s.cfg.ReportResends == nil || s.cfg.AdminToken == "":
		s.writeError(w, r, cfe.Errorf(cfe.EUNAVAILABLE, "este agente no envía reportes diarios a DGI"))
		return
	case subtle.ConstantTimeCompare([]byte(r.Header.Get(headerAdmin)), []byte(s.cfg.AdminToken)) != 1:
		s.refuse(w, r, "missing or wrong admin token", &cfe.Error{Code: cfe.EUNAUTHORIZED,
			Message: "falta el token de administración del agente: use «cfe-agent reporte reenviar» en este equipo",
			Fields:  []cfe.FieldError{{Campo: headerAdmin, Mensaje: "el token está en el archivo de ejecución del agente (carpeta de datos)"}}})
		return
	}
	b, err := readBody(r.Body)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var req apitype.ReportResendRequest
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || dec.More() {
		s.writeError(w, r, &cfe.Error{Code: cfe.EINVALID, Err: err, Message: "el cuerpo debe ser un objeto JSON",
			Fields: []cfe.FieldError{{Campo: "cuerpo", Mensaje: "se espera {fecha}"}}})
		return
	}
	res, err := s.cfg.ReportResends.ResendReport(r.Context(), req)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	res.OK = true
	writeJSON(w, http.StatusOK, res)
}
