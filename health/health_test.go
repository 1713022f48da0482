package health_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/health"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

var now = time.Date(2026, 5, 14, 15, 0, 0, 0, cfe.Montevideo)

// healthy is the state of an agent with nothing to report: a certificate
// valid for a year and a range with numbers left.
func healthy() health.State {
	return health.State{
		Certificate: &cfe.CertSummary{CommonName: "Empresa", NotBefore: now.AddDate(-1, 0, 0), NotAfter: now.AddDate(1, 0, 0)},
		CAE: []cfe.RangeUse{{Range: cfe.CAERange{Type: cfe.ETicket, Serie: "A", DNro: 1, HNro: 100,
			Vencimiento: cfe.Date{Year: 2027, Month: 12, Day: 31}}, Remaining: 100}},
	}
}

func assess(st health.State) *apitype.StateReport {
	rep := &apitype.StateReport{HealthReport: apitype.HealthReport{Status: apitype.HealthOK, Warnings: []string{}}}
	health.Assess(rep, st, now)
	return rep
}

// TestAssess: the status is the worst of the checks, each with its Spanish
// warning, from plain facts and the time alone.
func TestAssess(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		change     func(st *health.State)
		wantStatus string
		wantWarn   []string // substrings, one per warning, in order
	}{
		{"nothing to report", func(*health.State) {}, apitype.HealthOK, nil},
		{"no certificate", func(st *health.State) { st.Certificate = nil },
			apitype.HealthError, []string{"no hay certificado de firma configurado: no se puede firmar"}},
		{"certificate that cannot be used", func(st *health.State) {
			st.Certificate, st.CertificateError = nil, "contraseña incorrecta"
		}, apitype.HealthError, []string{"el certificado de firma no se puede usar: contraseña incorrecta: no se puede firmar"}},
		{"certificate expiring in 10 days", func(st *health.State) {
			st.Certificate.NotAfter = now.Add(10*24*time.Hour + time.Hour)
		}, apitype.HealthDegraded, []string{"el certificado de firma vence el 2026-05-24 (quedan 10 días): renuévelo"}},
		{"no CAE numbers", func(st *health.State) { st.CAE = nil },
			apitype.HealthError, []string{"no hay números CAE vigentes para ningún tipo de comprobante: no se puede firmar"}},
		{"outbox waiting for two hours", func(st *health.State) {
			st.Outbox = cfe.Outbox{Pending: 3, OldestPending: now.Add(-2 * time.Hour)}
		}, apitype.HealthDegraded, []string{"comprobantes sin enviar al servicio: 3; el más antiguo espera desde hace 2 h"}},
		{"disk under 20 MB, after the certificate's warning", func(st *health.State) {
			st.Certificate.NotAfter = now.Add(5*24*time.Hour + time.Hour)
			st.Storage = &cfe.Storage{Dir: "/datos", FreeBytes: 10 << 20, TotalBytes: 1 << 30}
		}, apitype.HealthError, []string{"quedan 5 días", "no alcanza para guardar comprobantes"}},
		{"hosted service unreachable", func(st *health.State) {
			st.Hosted = &health.Hosted{BaseURL: "https://h.example", CheckedAt: now.Add(-time.Minute)}
		}, apitype.HealthDegraded, []string{"el servicio en la nube (https://h.example) no responde"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := healthy()
			tc.change(&st)
			rep := assess(st)
			if rep.Status != tc.wantStatus || len(rep.Warnings) != len(tc.wantWarn) {
				t.Fatalf("status %s, warnings %q; want %s with %d", rep.Status, rep.Warnings, tc.wantStatus, len(tc.wantWarn))
			}
			for i, w := range tc.wantWarn {
				if !strings.Contains(rep.Warnings[i], w) {
					t.Errorf("warning %d %q lacks %q", i, rep.Warnings[i], w)
				}
			}
		})
	}
}

// TestAssess_hostedRateLimit: the report carries the key's quota as a copy
// of the facts' (one type on both sides, no sharing).
func TestAssess_hostedRateLimit(t *testing.T) {
	t.Parallel()
	st := healthy()
	rl := &apitype.RateLimit{LimitMinute: 60, RemainingMinute: 59, LimitHour: 1000, RemainingHour: 990, ObservedAt: now}
	st.Hosted = &health.Hosted{BaseURL: "https://h.example", CheckedAt: now, Reachable: true, RateLimit: rl,
		WaitUntil: now.Add(90 * time.Second)}
	rep := assess(st)
	h := rep.Hosted
	if h == nil || h.RateLimit == nil || *h.RateLimit != *rl || h.WaitS != 90 || h.Reachable == nil || !*h.Reachable {
		t.Fatalf("hosted report %+v", h)
	}
	rl.RemainingMinute = 0
	if h.RateLimit.RemainingMinute != 59 {
		t.Error("the report shares the facts' rate limit instead of copying it")
	}
	if rep.Status != apitype.HealthOK {
		t.Errorf("a reachable service: status %s %q", rep.Status, rep.Warnings)
	}
}

// TestFlag: the status only rises, and every reason is kept.
func TestFlag(t *testing.T) {
	t.Parallel()
	rep := &apitype.StateReport{HealthReport: apitype.HealthReport{Status: apitype.HealthOK}}
	health.Flag(rep, apitype.HealthError, "a")
	health.Flag(rep, apitype.HealthDegraded, "b")
	if rep.Status != apitype.HealthError || !slices.Equal(rep.Warnings, []string{"a", "b"}) {
		t.Fatalf("status %s, warnings %q", rep.Status, rep.Warnings)
	}
}

// TestAssess_quarantine: a CFE held out of delivery because its stored
// record cannot be read back degrades the status with a warning naming it
// (type, serie-number) and the command that recovers it; the report lists
// it; more than the listed ones are counted.
func TestAssess_quarantine(t *testing.T) {
	t.Parallel()
	st := healthy()
	since := now.Add(-10 * time.Minute)
	st.Outbox = cfe.Outbox{Pending: 19, OldestPending: now.Add(-time.Minute), Quarantined: 3, Quarantine: []cfe.Quarantined{
		{UUID: "caja-0008", Type: cfe.ETicket, Serie: "A", Nro: 8, CommittedAt: now.Add(-2 * time.Hour), Since: since,
			Reason: "su XML firmado guardado está dañado"},
		{UUID: "caja-0011", Since: since, Reason: "su registro no se puede leer"},
	}}
	rep := assess(st)
	if rep.Status != apitype.HealthDegraded || len(rep.Warnings) != 3 {
		t.Fatalf("status %s, warnings %q; want degraded with 3", rep.Status, rep.Warnings)
	}
	for i, want := range [][]string{
		{"el comprobante e-Ticket A-8 está dañado", "no se envía al servicio en la nube", "desde el 14/05 14:50",
			"su XML firmado guardado está dañado", "«cfe-agent recuperar caja-0008»"},
		{"el comprobante con uuid caja-0011 está dañado", "«cfe-agent recuperar caja-0011»"},
		{"y 1 comprobante dañado más", "cfe-agent doctor"},
	} {
		for _, w := range want {
			if !strings.Contains(rep.Warnings[i], w) {
				t.Errorf("warning %d %q lacks %q", i, rep.Warnings[i], w)
			}
		}
	}
	o := rep.Outbox
	if o.Quarantined != 3 || len(o.Quarantine) != 2 || o.Pending != 19 {
		t.Fatalf("outbox report %+v", o)
	}
	q := o.Quarantine[0]
	if q.UUID != "caja-0008" || q.Nombre != "e-Ticket" || q.Serie != "A" || q.Nro != 8 || !q.Since.Equal(since) ||
		q.CommittedAt.IsZero() || !q.CommittedAt.Equal(now.Add(-2*time.Hour)) || q.Reason != "su XML firmado guardado está dañado" {
		t.Errorf("quarantined report %+v", q)
	}
	if q := o.Quarantine[1]; q.Nombre != "" || q.Type != 0 || !q.CommittedAt.IsZero() {
		t.Errorf("a record that does not say its number is reported %+v", q)
	}
	// Nothing quarantined: an empty list, no warning.
	if rep := assess(healthy()); rep.Status != apitype.HealthOK || rep.Outbox.Quarantine == nil || len(rep.Outbox.Quarantine) != 0 {
		t.Errorf("healthy: status %s, quarantine %v", rep.Status, rep.Outbox.Quarantine)
	}
}
