package health_test

import (
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/health"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// TestAssess_providerReports: in provider mode the hosted service sends the
// reports, so a BR or ER it reports is flagged as the provider's to
// correct, with DGI's reasons, never with the agent's own resend command;
// the days it reports are listed as in direct mode.
func TestAssess_providerReports(t *testing.T) {
	t.Parallel()
	fri := cfe.Date{Year: 2026, Month: time.November, Day: 27}
	now := time.Date(2026, time.November, 28, 9, 0, 0, 0, cfe.Montevideo)
	for _, tc := range []struct {
		state string
		want  string
	}{
		{"BR", "DGI rechazó el reporte diario del 2026-11-27 (secuencia 2: R04 Validaciones), que envía el servicio en la nube: avise al proveedor"},
		{"ER", "DGI encontró inconsistencias en el reporte diario del 2026-11-27 (secuencia 2: R04 Validaciones), que envía el servicio en la nube"},
	} {
		st := healthy()
		st.DGI = &health.DGIStatus{Provider: true, Reports: []cfe.DailyReportState{
			{Date: fri, Seq: 2, State: tc.state, Reasons: []cfe.DGIReason{{Codigo: "R04", Glosa: "Validaciones"}}},
			{Date: fri.AddDays(-1), Seq: 1, State: "DR"},
		}}
		rep := &apitype.StateReport{HealthReport: apitype.HealthReport{OK: true, Status: apitype.HealthOK}}
		health.Assess(rep, st, now)
		if rep.Status != apitype.HealthDegraded || len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], tc.want) ||
			strings.Contains(rep.Warnings[0], "reenviar") {
			t.Errorf("%s: status %s, warnings %q; want one naming the provider: %q", tc.state, rep.Status, rep.Warnings, tc.want)
		}
		if len(rep.DGI.Reportes) != 2 || rep.DGI.Reportes[0].SecEnvio != 2 || rep.DGI.Reportes[1].Estado != "DR" {
			t.Errorf("%s: reportes %+v", tc.state, rep.DGI.Reportes)
		}
	}
}

// TestAssess_annulledRefused: annulled numbers the hosted service refused
// for good (provider mode) are a warning naming them, their day, the
// service's reason and what to do: that day's report lacks them.
func TestAssess_annulledRefused(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, time.November, 28, 9, 0, 0, 0, cfe.Montevideo)
	st := healthy()
	st.DGI = &health.DGIStatus{Provider: true, AnnulledRefused: []health.AnnulledRefusal{{
		Range:  cfe.AnnulledRange{Type: cfe.ETicket, Serie: "A", From: 5, To: 7, Day: cfe.Date{Year: 2026, Month: time.November, Day: 27}},
		Reason: "los números se superponen con el comprobante e-Ticket A-6",
	}}}
	rep := &apitype.StateReport{HealthReport: apitype.HealthReport{OK: true, Status: apitype.HealthOK}}
	health.Assess(rep, st, now)
	want := "el servicio en la nube rechazó los números anulados e-Ticket A-5 a A-7 (del 2026-11-27): " +
		"los números se superponen con el comprobante e-Ticket A-6; el reporte diario de ese día no los incluye: avise al proveedor"
	if rep.Status != apitype.HealthDegraded || len(rep.Warnings) != 1 || rep.Warnings[0] != want {
		t.Fatalf("status %s, warnings %q; want %q", rep.Status, rep.Warnings, want)
	}
	st.DGI.AnnulledRefused = nil
	rep = &apitype.StateReport{HealthReport: apitype.HealthReport{OK: true, Status: apitype.HealthOK}}
	health.Assess(rep, st, now)
	if rep.Status != apitype.HealthOK || len(rep.Warnings) != 0 {
		t.Fatalf("without refusals: status %s, warnings %q", rep.Status, rep.Warnings)
	}
}
