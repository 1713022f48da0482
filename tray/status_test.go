package tray

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/cfe-agent/cfe-agent/assets"
	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/health"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

func TestAssess(t *testing.T) {
	t.Parallel()
	report := func(status string, warnings ...string) *apitype.StateReport {
		return &apitype.StateReport{HealthReport: apitype.HealthReport{Status: status, Warnings: warnings}}
	}
	cases := []struct {
		name   string
		rep    *apitype.StateReport
		err    error
		state  assets.IconState
		reason string
	}{
		{"ok", report("ok"), nil, assets.IconOK, ""},
		{"expiring", report("degraded", "el certificado de firma vence el 2026-12-01 (quedan 9 días): renuévelo"), nil,
			assets.IconWarning, "el certificado de firma vence el 2026-12-01 (quedan 9 días): renuévelo"},
		{"zone and CAE", report("error", "zona horaria incorrecta", "no quedan números"), nil,
			assets.IconError, "zona horaria incorrecta\nno quedan números"},
		{"error without reason", report("error"), nil, assets.IconError, "el agente no puede firmar"},
		{"numbering held", report("error", "no se puede firmar: no se sabe por qué número sigue la numeración: el archivo de datos es nuevo o no tiene diario de numeración. Se consulta al servicio en línea el último número usado; si no responde, un técnico debe ejecutar «cfe-agent cae used-elsewhere»"), nil,
			assets.IconError, "no se puede firmar: no se sabe por qué número sigue la numeración: el archivo de datos es nuevo o no tiene diario de numeración. Se consulta al servicio en línea el último número usado; si no responde, un técnico debe ejecutar «cfe-agent cae used-elsewhere»"},
		{"unreachable", nil, errors.New("connection refused"), assets.IconError, "el agente no responde"},
		{"disk full", report("error",
			"no se pudo guardar el último comprobante (24/11 20:31:07): el disco está lleno; los comprobantes no se firman hasta que se pueda escribir en /var/lib/cfe-agent/store/local",
			"quedan 0 KB libres de 256,0 MB en el disco de los datos (/var/lib/cfe-agent/store/local): no alcanza para guardar comprobantes; libere espacio"), nil,
			assets.IconError, "no se pudo guardar el último comprobante (24/11 20:31:07): el disco está lleno; los comprobantes no se firman hasta que se pueda escribir en /var/lib/cfe-agent/store/local\n" +
				"quedan 0 KB libres de 256,0 MB en el disco de los datos (/var/lib/cfe-agent/store/local): no alcanza para guardar comprobantes; libere espacio"},
		{"disk running low", report("degraded", "quedan 150,0 MB libres de 16,0 GB en el disco de los datos (/var/lib/cfe-agent/store/local): libere espacio pronto"), nil,
			assets.IconWarning, "quedan 150,0 MB libres de 16,0 GB en el disco de los datos (/var/lib/cfe-agent/store/local): libere espacio pronto"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := Assess(c.rep, c.err)
			if a.State != c.state || a.Reason != c.reason {
				t.Errorf("Assess = %+v, want state %d reason %q", a, c.state, c.reason)
			}
		})
	}
	if got := (Assessment{}).Tooltip("sandbox"); got != "Agente CFE (sandbox): funcionando" {
		t.Errorf("tooltip %q", got)
	}
	if got := (Assessment{State: assets.IconError, Reason: "el agente no responde"}).Tooltip(""); got != "Agente CFE: el agente no responde" {
		t.Errorf("tooltip %q", got)
	}
}

func TestStatusLines(t *testing.T) {
	t.Parallel()
	rep := &apitype.StateReport{
		HealthReport: apitype.HealthReport{Profile: "local", Environment: "produccion", BaseURL: "http://127.0.0.1:18787"},
		Outbox:       apitype.OutboxReport{Outbox: cfe.Outbox{Pending: 3}, OldestPendingAgeS: 2*3600 + 5*60 + 7},
		Receipts: apitype.ReceiptsReport{Recent: []apitype.RecentReceipt{{UUID: "u1", Nombre: "e-Factura", Serie: "A",
			Numero: 42, Total: decimal.RequireFromString("1220"), FirmadoA: time.Date(2026, 11, 21, 13, 5, 0, 0, time.UTC)}}},
	}
	want := [4]string{
		"Perfil: local (producción)",
		"Dirección: http://127.0.0.1:18787",
		"Último comprobante: e-Factura A-42 (21/11 10:05)", // 13:05 UTC is 10:05 in Montevideo
		"Envíos pendientes: 3 (el más antiguo hace 2 h 5 min)",
	}
	if got := statusLines(rep, "local"); got != want {
		t.Errorf("statusLines =\n%q\nwant\n%q", got, want)
	}
	if lastReceipt(rep) != "u1" || lastReceipt(nil) != "" {
		t.Error("lastReceipt")
	}
	if got := statusLines(nil, "local")[0]; got != "Perfil: local" {
		t.Errorf("without a report: %q", got)
	}
}

func TestReasonLine(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		a    Assessment
		want string
	}{
		{"ok", Assessment{State: assets.IconOK}, ""},
		{"amber", Assessment{State: assets.IconWarning, Reason: "quedan 12 números de e-Ticket"}, "Atención: quedan 12 números de e-Ticket"},
		{"amber, three reasons", Assessment{State: assets.IconWarning, Reason: "uno\ndos\ntres"}, "Atención: uno (y 2 avisos más)"},
		{"red, two reasons", Assessment{State: assets.IconError, Reason: "la zona horaria no es la de Uruguay\nno quedan números"},
			"No puede firmar: la zona horaria no es la de Uruguay (y 1 aviso más)"},
		{"red, said already", Assessment{State: assets.IconError, Reason: "no se puede firmar: el disco está lleno"},
			"No puede firmar: el disco está lleno"},
		{"not answering", Assess(nil, errors.New("connection refused")), "No puede firmar: el agente no responde"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := reasonLine(tc.a); got != tc.want {
				t.Errorf("reasonLine = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestRedWatch_turnedRed(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		states []assets.IconState
		want   []bool
	}{
		{"red from the start", []assets.IconState{assets.IconError, assets.IconError, assets.IconError}, []bool{true, false, false}},
		{"red, well, red again", []assets.IconState{assets.IconOK, assets.IconError, assets.IconError, assets.IconOK, assets.IconError},
			[]bool{false, true, false, false, true}},
		{"amber is not red", []assets.IconState{assets.IconWarning, assets.IconWarning, assets.IconError, assets.IconWarning},
			[]bool{false, false, true, false}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var w redWatch
			for i, s := range tc.states {
				if got := w.turnedRed(s); got != tc.want[i] {
					t.Errorf("refresh %d (state %v): turnedRed = %v, want %v", i, s, got, tc.want[i])
				}
			}
		})
	}
}

// TestAssess_quarantine: a signed CFE whose stored record cannot be read
// back turns the icon amber (the agent signs), with the module's warning
// naming it as the reason and the menu's first line; the pending line
// counts it.
func TestAssess_quarantine(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 5, 14, 15, 0, 0, 0, cfe.Montevideo)
	st := health.State{
		Certificate: &cfe.CertSummary{CommonName: "Empresa", NotBefore: now.AddDate(-1, 0, 0), NotAfter: now.AddDate(1, 0, 0)},
		CAE: []cfe.RangeUse{{Range: cfe.CAERange{Type: cfe.ETicket, Serie: "A", DNro: 1, HNro: 100,
			Vencimiento: cfe.Date{Year: 2027, Month: 12, Day: 31}}, Remaining: 80}},
		Outbox: cfe.Outbox{Pending: 2, OldestPending: now.Add(-time.Minute), Quarantined: 1, Quarantine: []cfe.Quarantined{
			{UUID: "caja-0008", Type: cfe.ETicket, Serie: "A", Nro: 8, Since: now.Add(-time.Minute), Reason: "su XML firmado guardado está dañado"}}},
	}
	rep := &apitype.StateReport{HealthReport: apitype.HealthReport{Status: apitype.HealthOK, Warnings: []string{}}}
	health.Assess(rep, st, now)
	rep.Outbox.OldestPendingAgeS = 60

	a := Assess(rep, nil)
	if a.State != assets.IconWarning || !strings.Contains(a.Reason, "el comprobante e-Ticket A-8 está dañado") ||
		!strings.Contains(a.Reason, "«cfe-agent recuperar caja-0008»") {
		t.Fatalf("Assess = %+v, want amber naming e-Ticket A-8 and how to recover it", a)
	}
	if l := reasonLine(a); !strings.HasPrefix(l, "Atención: el comprobante e-Ticket A-8 está dañado") {
		t.Errorf("menu line %q", l)
	}
	if l := statusLines(rep, "local")[3]; l != "Envíos pendientes: 2 (el más antiguo hace 1 min); 1 dañado en cuarentena" {
		t.Errorf("pending line %q", l)
	}
}

// TestPendingAge_pageForm: the menu says the oldest delivery's age as the
// status page does — "hace menos de 1 min", never "hace 0 min" — and in
// hours and minutes without a leading zero.
func TestPendingAge_pageForm(t *testing.T) {
	t.Parallel()
	for s, want := range map[int64]string{0: "", 30: " (el más antiguo hace menos de 1 min)", 60: " (el más antiguo hace 1 min)",
		2*3600 + 5*60: " (el más antiguo hace 2 h 5 min)", 3 * 86400: " (el más antiguo hace 3 días)"} {
		if got := pendingAge(s); got != want {
			t.Errorf("pendingAge(%d) = %q, want %q", s, got, want)
		}
	}
}
