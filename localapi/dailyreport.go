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

// POST /reporte-diario: the technician's daily-report commands (cfe-agent
// reporte, numeros anular, cotizaciones) while the agent runs and holds the
// store. An administrator's action on the same terms as POST /backup: only
// from this machine, with the agent's admin token in X-CFE-Admin.

// DailyReports runs the technician's daily-report commands.
type DailyReports interface {
	DailyReport(ctx context.Context, req apitype.DailyReportRequest) (*apitype.DailyReportResult, error)
}

func (s *Server) registerDailyReportRoutes(r *mux.Router) {
	s.handle(r, http.MethodPost, "/reporte-diario", s.handleDailyReport)
}

func (s *Server) handleDailyReport(w http.ResponseWriter, r *http.Request) {
	switch {
	case !sameMachine(r):
		s.refuse(w, r, "daily report command from another machine", &cfe.Error{Code: cfe.EFORBIDDEN,
			Message: "el reporte diario, los números anulados y las cotizaciones solo se manejan desde este mismo equipo"})
		return
	case s.cfg.DailyReports == nil || s.cfg.AdminToken == "":
		s.writeError(w, r, cfe.Errorf(cfe.EUNAVAILABLE, "este agente no atiende los comandos del reporte diario"))
		return
	case subtle.ConstantTimeCompare([]byte(r.Header.Get(headerAdmin)), []byte(s.cfg.AdminToken)) != 1:
		s.refuse(w, r, "missing or wrong admin token", &cfe.Error{Code: cfe.EUNAUTHORIZED,
			Message: "falta el token de administración del agente: use «cfe-agent reporte», «numeros» o «cotizaciones» en este equipo",
			Fields:  []cfe.FieldError{{Campo: headerAdmin, Mensaje: "el token está en el archivo de ejecución del agente (carpeta de datos)"}}})
		return
	}
	b, err := readBody(r.Body)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var req apitype.DailyReportRequest
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || dec.More() {
		s.writeError(w, r, &cfe.Error{Code: cfe.EINVALID, Err: err, Message: "el cuerpo debe ser un objeto JSON",
			Fields: []cfe.FieldError{{Campo: "cuerpo", Mensaje: "se espera {accion, ...}"}}})
		return
	}
	res, err := s.cfg.DailyReports.DailyReport(r.Context(), req)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	res.OK = true
	writeJSON(w, http.StatusOK, res)
}
