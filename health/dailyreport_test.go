package health_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/health"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// TestAssess_dailyReports: the days' reports become dgi.reportes (newest
// first, at most ten); a day still without AR/DR is amber from 12:00 of
// the next business day and red from 18:00 (degraded both: the agent
// signs), counting the weekend out; BR and ER are flagged at once, with
// the command that corrects them.
func TestAssess_dailyReports(t *testing.T) {
	t.Parallel()
	fri := cfe.Date{Year: 2026, Month: time.November, Day: 27}
	at := func(day, h int) time.Time { return time.Date(2026, time.November, day, h, 0, 0, 0, cfe.Montevideo) }
	sent := at(28, 0)
	for _, tc := range []struct {
		name      string
		reports   []cfe.DailyReportState
		now       time.Time
		status    string
		urgencia  string
		wantWarns []string
	}{
		{"received", []cfe.DailyReportState{{Date: fri, Seq: 1, State: "AR", SentAt: sent}}, at(30, 19), apitype.HealthOK, "", nil},
		{"not sent, Saturday", []cfe.DailyReportState{{Date: fri}}, at(28, 19), apitype.HealthOK, "", nil},
		{"not sent, Monday 11:00", []cfe.DailyReportState{{Date: fri}}, at(30, 11), apitype.HealthOK, "", nil},
		{"not sent, Monday 12:00", []cfe.DailyReportState{{Date: fri}}, at(30, 12), apitype.HealthDegraded, "ambar",
			[]string{"el reporte diario del 2026-11-27 todavía no llegó a DGI; el plazo vence hoy a las 18:00"}},
		{"not sent, Monday 18:00, the reporter's reason", []cfe.DailyReportState{{Date: fri.AddDays(2)}, {Date: fri.AddDays(1)}, {Date: fri}},
			at(30, 18), apitype.HealthDegraded, "roja",
			[]string{"el reporte diario del 2026-11-27 no llegó a DGI dentro del plazo (30/11 18:00) (y 2 días más sin reporte): sin conexión"}},
		{"rejected", []cfe.DailyReportState{{Date: fri, Seq: 1, State: "BR", Reasons: []cfe.DGIReason{{Codigo: "R05", Glosa: "Secuencia"}}}},
			at(28, 9), apitype.HealthDegraded, "",
			[]string{"DGI rechazó el reporte diario del 2026-11-27 (secuencia 1: R05 Secuencia): corríjalo y reenvíelo con «cfe-agent reporte reenviar --fecha 2026-11-27»"}},
		{"inconsistent and late", []cfe.DailyReportState{{Date: fri, Seq: 1, State: "ER"}}, at(30, 13), apitype.HealthDegraded, "ambar",
			[]string{"DGI encontró inconsistencias en el reporte diario del 2026-11-27", "el reporte diario del 2026-11-27 todavía no llegó"}},
		{"processed", []cfe.DailyReportState{{Date: fri, Seq: 2, State: "DR"}}, at(30, 13), apitype.HealthOK, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st := healthy()
			st.DGI = &health.DGIStatus{Reports: tc.reports, ReportNote: "sin conexión"}
			if tc.name != "not sent, Monday 18:00, the reporter's reason" {
				st.DGI.ReportNote = ""
			}
			rep := &apitype.StateReport{HealthReport: apitype.HealthReport{OK: true, Status: apitype.HealthOK}}
			health.Assess(rep, st, tc.now)
			if rep.Status != tc.status || rep.DGI.UrgenciaReporte != tc.urgencia {
				t.Fatalf("status %s urgency %q, want %s %q (warnings %q)", rep.Status, rep.DGI.UrgenciaReporte, tc.status, tc.urgencia, rep.Warnings)
			}
			if len(rep.Warnings) != len(tc.wantWarns) {
				t.Fatalf("warnings %q, want %d", rep.Warnings, len(tc.wantWarns))
			}
			for i, w := range tc.wantWarns {
				if !strings.Contains(rep.Warnings[i], w) {
					t.Errorf("warning %d = %q, want it to contain %q", i, rep.Warnings[i], w)
				}
			}
			if len(rep.DGI.Reportes) != len(tc.reports) || rep.DGI.Reportes[0].Fecha != tc.reports[0].Date || rep.DGI.Reportes[0].Estado != tc.reports[0].State {
				t.Fatalf("reportes %+v", rep.DGI.Reportes)
			}
		})
	}
	// At most ten days are listed.
	var many []cfe.DailyReportState
	for i := range 15 {
		many = append(many, cfe.DailyReportState{Date: fri.AddDays(-i), Seq: 1, State: "DR"})
	}
	st := healthy()
	st.DGI = &health.DGIStatus{Reports: many}
	rep := &apitype.StateReport{HealthReport: apitype.HealthReport{OK: true, Status: apitype.HealthOK}}
	health.Assess(rep, st, at(30, 9))
	if len(rep.DGI.Reportes) != 10 || rep.DGI.Reportes[9].Fecha != fri.AddDays(-9) {
		t.Fatalf("listed %d days: %+v", len(rep.DGI.Reportes), rep.DGI.Reportes)
	}
}
