package health_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/health"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// TestAssess_dgi: direct mode's facts become the dgi block and, for what a
// person must act on, degraded warnings in Spanish.
func TestAssess_dgi(t *testing.T) {
	t.Parallel()
	rejection := func(nro int64, at time.Time) cfe.DGIRejection {
		return cfe.DGIRejection{Type: cfe.EFactura, Serie: "A", Nro: nro, TmstFirma: at, At: at,
			Reasons: []cfe.DGIReason{{Codigo: "E05", Glosa: "Formato", Detalle: "falta el RUC"}}}
	}
	for _, tc := range []struct {
		name       string
		dgi        *health.DGIStatus
		wantStatus string
		wantWarn   []string // substrings, one per warning, in order
	}{
		{"provider mode", nil, apitype.HealthOK, nil},
		{"all accepted", &health.DGIStatus{Counts: cfe.DGICounts{Enviados: 9, Aceptados: 9}}, apitype.HealthOK, nil},
		{"a recent rejection", &health.DGIStatus{Counts: cfe.DGICounts{Enviados: 1, Rechazados: 1},
			Rejections: []cfe.DGIRejection{rejection(12, now.Add(-time.Hour))}}, apitype.HealthDegraded,
			[]string{"DGI rechazó el comprobante e-Factura A-12 firmado el 14/05 14:00 (E05 Formato: falta el RUC): su número queda anulado; emita un comprobante nuevo"}},
		{"an old rejection is kept, not flagged", &health.DGIStatus{Counts: cfe.DGICounts{Enviados: 1, Rechazados: 1},
			Rejections: []cfe.DGIRejection{rejection(12, now.AddDate(0, 0, -8))}}, apitype.HealthOK, nil},
		{"many rejections", &health.DGIStatus{Counts: cfe.DGICounts{Rechazados: 7}, Rejections: []cfe.DGIRejection{
			rejection(1, now), rejection(2, now), rejection(3, now), rejection(4, now), rejection(5, now), rejection(6, now), rejection(7, now)}},
			apitype.HealthDegraded, []string{"A-1 ", "A-2 ", "A-3 ", "A-4 ", "A-5 ", "y 2 comprobantes rechazados por DGI más"}},
		{"urgent not received", &health.DGIStatus{Counts: cfe.DGICounts{Pendientes: 2, OldestPending: now.Add(-20 * time.Minute)},
			Overdue: []cfe.DGICFE{{Type: cfe.ERemito, Serie: "B", Nro: 4, TmstFirma: now.Add(-20 * time.Minute)}}, OverdueTotal: 2,
			UrgentAfter: 10 * time.Minute}, apitype.HealthDegraded,
			[]string{"2 comprobantes que DGI debe recibir antes de que salga la mercadería no le llegaron en 10m0s; el más antiguo es e-Remito B-4"}},
		{"unknown outcome", &health.DGIStatus{Counts: cfe.DGICounts{Desconocidos: 3}}, apitype.HealthDegraded,
			[]string{"3 comprobantes enviados a DGI sin respuesta"}},
		{"old backlog with the sender's error", &health.DGIStatus{Counts: cfe.DGICounts{Pendientes: 40, OldestPending: now.Add(-50 * time.Hour)},
			LastError: "no se pudo enviar el sobre 3 a DGI: sin conexión"}, apitype.HealthDegraded,
			[]string{"comprobantes sin recibir por DGI: 40; el más antiguo espera desde hace 2 días (no se pudo enviar el sobre 3 a DGI: sin conexión)"}},
		{"stopped", &health.DGIStatus{Stopped: "el certificado de DGI venció"}, apitype.HealthDegraded,
			[]string{"no se envían comprobantes a DGI: el certificado de DGI venció; se siguen firmando y quedan pendientes"}},
		{"a contingency receipt observed", &health.DGIStatus{Counts: cfe.DGICounts{Enviados: 1, Observados: 1},
			Observations: []cfe.DGIRejection{{UUID: "form-7", Type: 211, Serie: "A", Nro: 7, TmstFirma: now, At: now,
				Reasons: []cfe.DGIReason{{Codigo: "C06", Glosa: "Importe informado en el CFC excede montos habituales"}}}}}, apitype.HealthDegraded,
			[]string{`DGI observó el comprobante de contingencia e-Factura Contingencia A-7 (uuid form-7; C06 Importe informado en el CFC excede montos habituales): corrija el dato y vuelva a ingresarlo con la misma serie y número y «corrige»: "form-7"`}},
		{"a young backlog is fine", &health.DGIStatus{Counts: cfe.DGICounts{Pendientes: 1, OldestPending: now.Add(-time.Minute)}}, apitype.HealthOK, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := healthy()
			st.DGI = tc.dgi
			rep := assess(st)
			if rep.Status != tc.wantStatus {
				t.Errorf("status %s, want %s (warnings %q)", rep.Status, tc.wantStatus, rep.Warnings)
			}
			if len(rep.Warnings) != len(tc.wantWarn) {
				t.Fatalf("warnings %q, want %d", rep.Warnings, len(tc.wantWarn))
			}
			for i, w := range tc.wantWarn {
				if !strings.Contains(rep.Warnings[i], w) {
					t.Errorf("warning %d = %q, want it to contain %q", i, rep.Warnings[i], w)
				}
			}
			if tc.dgi == nil {
				if rep.DGI != nil {
					t.Errorf("dgi block in provider mode: %+v", rep.DGI)
				}
				return
			}
			c := tc.dgi.Counts
			if want := (apitype.DGIReport{Enviados: c.Enviados, Aceptados: c.Aceptados, Rechazados: c.Rechazados, Observados: c.Observados,
				Pendientes: c.Pendientes, Desconocidos: c.Desconocidos}); rep.DGI == nil || !reflect.DeepEqual(*rep.DGI, want) {
				t.Errorf("dgi block %+v, want %+v", rep.DGI, want)
			}
		})
	}
}
