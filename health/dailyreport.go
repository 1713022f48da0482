package health

import (
	"fmt"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// reportsListed is how many days /state's dgi.reportes lists.
const reportsListed = 10

// reportDone reports whether DGI holds day's report as it should: received
// (AR) or processed (DR).
func reportDone(s cfe.DailyReportState) bool {
	return s.State == cfe.ReportReceived || s.State == cfe.ReportProcessed
}

// addDailyReports reports the daily reports to DGI: the last days in
// /state's dgi.reportes, and as warnings (degraded: the agent still signs)
// a report DGI rejected (BR) or found inconsistent (ER), and every day
// still without a report DGI received (AR or DR) once 12:00 of the next
// business day has passed; from 18:00, DGI's deadline, dgi.urgencia_reporte
// is "roja" (the tray turns red), before it "ambar".
func addDailyReports(rep *apitype.StateReport, d *DGIStatus, now time.Time) {
	if len(d.Reports) == 0 {
		return
	}
	for i, s := range d.Reports {
		if i == reportsListed {
			break
		}
		rep.DGI.Reportes = append(rep.DGI.Reportes, apitype.DailyReportOf(s))
	}
	var late []cfe.DailyReportState
	for i := len(d.Reports) - 1; i >= 0; i-- { // oldest first
		s := d.Reports[i]
		switch {
		case d.Provider && (s.State == cfe.ReportRejected || s.State == "BA" || s.State == cfe.ReportMismatch):
			Flag(rep, apitype.HealthDegraded, fmt.Sprintf("DGI %s el reporte diario del %s (secuencia %d%s), que envía el servicio en la nube: "+
				"avise al proveedor para que lo corrija y lo reenvíe", providerVerdict(s.State), s.Date, s.Seq, providerReasons(s.Reasons)))
		case s.State == cfe.ReportRejected, s.State == "BA": // BA: the file rejected (ACKRepDiario's XSD)
			Flag(rep, apitype.HealthDegraded, fmt.Sprintf("DGI rechazó el reporte diario del %s (secuencia %d: %s): corríjalo y reenvíelo con "+
				"«cfe-agent reporte reenviar --fecha %s»", s.Date, s.Seq, reasons(s.Reasons), s.Date))
		case s.State == cfe.ReportMismatch:
			Flag(rep, apitype.HealthDegraded, fmt.Sprintf("DGI encontró inconsistencias en el reporte diario del %s (secuencia %d) con los "+
				"comprobantes que recibió: revíselo y reenvíelo corregido con «cfe-agent reporte reenviar --fecha %s»", s.Date, s.Seq, s.Date))
		}
		if level, _ := cfe.ReportUrgency(s.Date, now); !reportDone(s) && level != cfe.ReportOnTime {
			late = append(late, s)
		}
	}
	if len(late) == 0 {
		return
	}
	// The oldest late day is the most overdue: its deadline came first.
	first := late[0]
	level, deadline := cfe.ReportUrgency(first.Date, now)
	rep.DGI.UrgenciaReporte = level
	msg := fmt.Sprintf("el reporte diario del %s no llegó a DGI dentro del plazo (%s)", first.Date, deadline.In(cfe.Montevideo).Format("02/01 15:04"))
	if level == cfe.ReportLate {
		msg = fmt.Sprintf("el reporte diario del %s todavía no llegó a DGI; el plazo vence hoy a las 18:00", first.Date)
	}
	switch n := len(late) - 1; {
	case n == 1:
		msg += " (y 1 día más sin reporte)"
	case n > 1:
		msg += fmt.Sprintf(" (y %d días más sin reporte)", n)
	}
	if d.ReportNote != "" {
		msg += ": " + d.ReportNote
	}
	Flag(rep, apitype.HealthDegraded, msg)
}

// providerVerdict words DGI's BR or ER on a report the provider sent.
func providerVerdict(state string) string {
	if state == cfe.ReportMismatch {
		return "encontró inconsistencias en"
	}
	return "rechazó"
}

// providerReasons is ": reasons" for a report with DGI's reasons, "" without.
func providerReasons(rs []cfe.DGIReason) string {
	if len(rs) == 0 {
		return ""
	}
	return ": " + reasons(rs)
}
