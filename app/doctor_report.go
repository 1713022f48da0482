package app

import (
	"fmt"
	"strings"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// dailyReports reports the daily reports to DGI ("Reporte diario"): the
// last day's state and how many days have no report DGI received, WARN
// when a report is late (from 12:00 of the next business day), rejected
// (BR) or inconsistent (ER), FAIL once DGI's deadline passed (18:00 of the
// next business day), each of the state's warnings about them on a line
// of its own. Nothing is said where the agent knows no report.
func (d *doctor) dailyReports(r *apitype.StateReport) {
	g := r.DGI
	if g == nil || len(g.Reportes) == 0 {
		return
	}
	const check = "Reporte diario"
	var problems []string
	for _, w := range r.Warnings {
		if strings.Contains(w, "reporte diario") {
			problems = append(problems, w)
		}
	}
	status := CheckOK
	switch {
	case g.UrgenciaReporte == cfe.ReportUrgent:
		status = CheckFail
	case len(problems) > 0:
		status = CheckWarn
	}
	last := g.Reportes[0]
	missing := 0
	for _, rep := range g.Reportes {
		if rep.Estado != cfe.ReportReceived && rep.Estado != cfe.ReportProcessed {
			missing++
		}
	}
	d.line(status, check, "último día %s: %s; %d de los últimos %d días sin reporte recibido por DGI", last.Fecha, reportWord(last), missing, len(g.Reportes))
	for _, p := range problems {
		d.line(CheckWarn, check, "%s", p)
	}
}

// reportWord says a day's report state for a person.
func reportWord(r apitype.DailyReportReport) string {
	name := map[string]string{
		cfe.ReportReceived: "recibido por DGI (AR)", cfe.ReportRejected: "rechazado por DGI (BR)", cfe.ReportProcessed: "procesado por DGI (DR)",
		cfe.ReportMismatch: "con inconsistencias (ER)", cfe.ReportSuperseded: "reemplazado (FR)", "BA": "rechazado por DGI (BA)",
	}[r.Estado]
	if name == "" {
		return "sin enviar"
	}
	return fmt.Sprintf("%s, secuencia %d", name, r.SecEnvio)
}
