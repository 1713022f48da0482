package localapi

import (
	"context"
	"net/http"

	"github.com/gorilla/mux"

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
	if !s.admitAdmin(w, r, adminRoute{what: "report resend", elsewhere: "los reportes diarios solo se reenvían desde este mismo equipo",
		missing: "este agente no envía reportes diarios a DGI", command: "«cfe-agent reporte reenviar»"}, s.cfg.ReportResends != nil) {
		return
	}
	var req apitype.ReportResendRequest
	if err := decodeObject(r, &req, "se espera {fecha}"); err != nil {
		s.writeError(w, r, err)
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
