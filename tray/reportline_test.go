package tray

import (
	"testing"

	"github.com/cfe-agent/cfe-agent/assets"
	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// TestReportLine_andRed: the daily report's menu line names the last day
// and its state, or the late day and how late; a report late is amber
// ("Atención"), past DGI's deadline red while the agent signs ("Urgente",
// the report's warning first), and no report known hides the line.
func TestReportLine_andRed(t *testing.T) {
	t.Parallel()
	fri, thu := cfe.Date{Year: 2026, Month: 11, Day: 27}, cfe.Date{Year: 2026, Month: 11, Day: 26}
	state := func(urg string, days ...apitype.DailyReportReport) *apitype.StateReport {
		status := apitype.HealthOK
		var warnings []string
		if urg != "" {
			status = apitype.HealthDegraded
			warnings = []string{"quedan 12 números de e-Ticket", "el reporte diario del 2026-11-26 no llegó a DGI dentro del plazo (27/11 18:00)"}
		}
		return &apitype.StateReport{HealthReport: apitype.HealthReport{OK: true, Status: status, Warnings: warnings},
			DGI: &apitype.DGIReport{Reportes: days, UrgenciaReporte: urg}}
	}
	if got := reportLine(state("", apitype.DailyReportReport{Fecha: fri, SecEnvio: 1, Estado: "DR"})); got != "Reporte diario DGI: 27/11 procesado" {
		t.Errorf("line %q", got)
	}
	if got := reportLine(state("")); got != "" {
		t.Errorf("no report known: %q", got)
	}
	if got := reportLine(&apitype.StateReport{}); got != "" {
		t.Errorf("provider mode without reports: %q", got)
	}
	late := state("ambar", apitype.DailyReportReport{Fecha: fri, SecEnvio: 1, Estado: "AR"}, apitype.DailyReportReport{Fecha: thu})
	if got := reportLine(late); got != "Reporte diario DGI: 26/11 sin enviar (atrasado: vence hoy a las 18:00)" {
		t.Errorf("late line %q", got)
	}
	if a := Assess(late, nil); a.State != assets.IconWarning || reasonLine(a) != "Atención: quedan 12 números de e-Ticket (y 1 aviso más)" {
		t.Errorf("amber: %+v / %q", a, reasonLine(a))
	}
	red := state("roja", apitype.DailyReportReport{Fecha: fri, SecEnvio: 1, Estado: "AR"}, apitype.DailyReportReport{Fecha: thu, SecEnvio: 1, Estado: "ER"})
	if got := reportLine(red); got != "Reporte diario DGI: 26/11 con inconsistencias (fuera de plazo)" {
		t.Errorf("red line %q", got)
	}
	a := Assess(red, nil)
	if a.State != assets.IconError || !a.Signs {
		t.Fatalf("red: %+v", a)
	}
	if got := reasonLine(a); got != "Urgente: el reporte diario del 2026-11-26 no llegó a DGI dentro del plazo (27/11 18:00) (y 1 aviso más)" {
		t.Errorf("red reason line %q", got)
	}
}
