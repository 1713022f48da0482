package localapi

import (
	"context"
	"net/http"

	"github.com/gorilla/mux"

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
	if !s.admitAdmin(w, r, adminRoute{what: "daily report command", elsewhere: "el reporte diario, los números anulados y las cotizaciones solo se manejan desde este mismo equipo",
		missing: "este agente no atiende los comandos del reporte diario", command: "«cfe-agent reporte», «numeros» o «cotizaciones»"}, s.cfg.DailyReports != nil) {
		return
	}
	var req apitype.DailyReportRequest
	if err := decodeObject(r, &req, "se espera {accion, ...}"); err != nil {
		s.writeError(w, r, err)
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
