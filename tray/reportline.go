package tray

import (
	"fmt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// reportLine is the menu's status line on the daily report to DGI: the
// last day's report and its state, and how late an overdue one is; ""
// (the line hidden) when the agent knows no report.
func reportLine(rep *apitype.StateReport) string {
	if rep == nil || rep.DGI == nil || len(rep.DGI.Reportes) == 0 {
		return ""
	}
	last := rep.DGI.Reportes[0]
	if rep.DGI.UrgenciaReporte != "" {
		// The oldest day listed that DGI has not received is the late one.
		for _, r := range rep.DGI.Reportes {
			if r.Estado != cfe.ReportReceived && r.Estado != cfe.ReportProcessed {
				last = r
			}
		}
	}
	state := map[string]string{
		"": "sin enviar", cfe.ReportReceived: "recibido", cfe.ReportRejected: "rechazado", "BA": "rechazado",
		cfe.ReportProcessed: "procesado", cfe.ReportMismatch: "con inconsistencias", cfe.ReportSuperseded: "reemplazado",
	}[last.Estado]
	line := fmt.Sprintf("Reporte diario DGI: %02d/%02d %s", last.Fecha.Day, last.Fecha.Month, state)
	switch rep.DGI.UrgenciaReporte {
	case cfe.ReportLate:
		line += " (atrasado: vence hoy a las 18:00)"
	case cfe.ReportUrgent:
		line += " (fuera de plazo)"
	}
	return line
}
