package localapi_test

import (
	"context"
	"errors"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/health"
	"github.com/cfe-agent/cfe-agent/localapi"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

func date(y int, m time.Month, d int) cfe.Date { return cfe.Date{Year: y, Month: m, Day: d} }

func caeRange(t cfe.Type, serie string, dnro, hnro int64, venc cfe.Date) cfe.CAERange {
	return cfe.CAERange{Type: t, Serie: serie, DNro: dnro, HNro: hnro, CAEID: "90260000123", Vencimiento: venc, Source: "dgi"}
}

func TestServer_Health(t *testing.T) {
	t.Run("ok", func(t *testing.T) {
		ts := startServer(t, nil)
		resp, body := ts.send(t, request{path: "/health"})
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d, want 200: %s", resp.StatusCode, body)
		}
		got := decodeObject(t, body)
		want := map[string]any{
			"ok": true, "status": "ok", "base_url": ts.srv.BaseURL(), "version": "1.2.3", "profile": "caja1",
			"environment": "sandbox", "warnings": []any{},
			"zona_horaria": map[string]any{"ok": true, "nombre": "America/Montevideo", "desfase": "-03:00",
				"mensaje": "zona horaria America/Montevideo (-03:00): correcta"},
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("health body\n got %v\nwant %v", got, want)
		}
	})

	t.Run("wrong time zone is an error with 503", func(t *testing.T) {
		ts := startServer(t, nil)
		t.Setenv("TZ", "America/Argentina/Buenos_Aires") // same offset, wrong zone
		h, err := ts.client.Health(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if h.OK || h.Status != apitype.HealthError || h.ZonaHoraria.OK ||
			h.ZonaHoraria.Nombre != "America/Argentina/Buenos_Aires" || h.ZonaHoraria.Desfase != "-03:00" {
			t.Fatalf("health = %+v, want status error naming the zone found", h)
		}
		if len(h.Warnings) != 1 || h.Warnings[0] != h.ZonaHoraria.Mensaje ||
			!strings.Contains(h.ZonaHoraria.Mensaje, "America/Montevideo con desfase -03:00") {
			t.Fatalf("warnings %q, zone message %q: want the zone's explanation", h.Warnings, h.ZonaHoraria.Mensaje)
		}
		resp, _ := ts.send(t, request{path: "/health"})
		if resp.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("status %d, want 503", resp.StatusCode)
		}
	})

	t.Run("degraded still answers 200", func(t *testing.T) {
		st := healthyState()
		// 1 Jun 2026 00:00 is 17 days and ~9 hours after the test clock.
		st.Certificate.NotAfter = time.Date(2026, 6, 1, 0, 0, 0, 0, cfe.Montevideo)
		ts := startServer(t, func(c *localapi.ServerConfig) { c.State = fixedState{st: st} })
		resp, body := ts.send(t, request{path: "/health"})
		h := decodeObject(t, body)
		if resp.StatusCode != http.StatusOK || h["ok"] != true || h["status"] != "degraded" {
			t.Fatalf("status %d body %s, want 200 ok degraded", resp.StatusCode, body)
		}
		want := []any{"el certificado de firma vence el 2026-06-01 (quedan 17 días): renuévelo"}
		if !reflect.DeepEqual(h["warnings"], want) {
			t.Fatalf("warnings %v, want %v", h["warnings"], want)
		}
	})

	t.Run("numbering held is an error with 503, and /state says why", func(t *testing.T) {
		st := healthyState()
		since := time.Date(2026, 5, 14, 9, 30, 0, 0, cfe.Montevideo)
		st.NumberingHold = &health.NumberingHold{Since: since,
			Reason:  "no se sabe por qué número sigue la numeración: el archivo de datos es nuevo o no tiene diario de numeración",
			Settled: []string{"e-Ticket serie A"}}
		ts := startServer(t, func(c *localapi.ServerConfig) { c.State = fixedState{st: st} })
		resp, body := ts.send(t, request{path: "/health"})
		h := decodeObject(t, body)
		want := []any{"no se puede firmar: no se sabe por qué número sigue la numeración: el archivo de datos es nuevo o no tiene " +
			"diario de numeración. Se consulta al servicio en línea el último número usado; si no responde, un técnico debe " +
			"ejecutar «cfe-agent cae used-elsewhere» (ya confirmadas: e-Ticket serie A)"}
		if resp.StatusCode != http.StatusServiceUnavailable || h["ok"] != false || h["status"] != "error" || !reflect.DeepEqual(h["warnings"], want) {
			t.Fatalf("status %d body %s, want 503 error with %v", resp.StatusCode, body, want)
		}
		rep, err := ts.client.State(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if n := rep.Numeracion; n == nil || !n.EnEspera || !n.Desde.Equal(since) || !strings.HasPrefix(n.Motivo, "no se sabe") ||
			!slices.Equal(n.SeriesConfirmadas, []string{"e-Ticket serie A"}) {
			t.Fatalf("/state numeracion = %+v", rep.Numeracion)
		}
		// Without a hold the field is absent.
		ok := startServer(t, nil)
		_, body = ok.send(t, request{path: "/state"})
		if _, present := decodeObject(t, body)["numeracion"]; present {
			t.Fatalf("/state without a hold carries numeracion: %s", body)
		}
	})

	t.Run("state source failure is an error, cause logged not shown", func(t *testing.T) {
		ts := startServer(t, func(c *localapi.ServerConfig) {
			c.State = fixedState{err: errors.New("bolt: /var/lib/cfe-agent/agent.db: input/output error")}
		})
		resp, body := ts.send(t, request{path: "/health"})
		if resp.StatusCode != http.StatusServiceUnavailable || strings.Contains(string(body), "bolt") {
			t.Fatalf("status %d body %s: want 503 without the internal cause", resp.StatusCode, body)
		}
		if !strings.Contains(string(body), "no se pudo leer el estado del agente") {
			t.Fatalf("body %s does not explain the failure", body)
		}
		if !strings.Contains(ts.logs.String(), "input/output error") {
			t.Fatal("the cause of the failure was not logged")
		}
	})
}

func TestServer_State(t *testing.T) {
	st := health.State{
		Certificate: &cfe.CertSummary{
			CommonName: "CN=Comercio de Prueba SA",
			RUC:        "215555550018",
			NotBefore:  time.Date(2025, 7, 1, 0, 0, 0, 0, cfe.Montevideo),
			NotAfter:   time.Date(2026, 7, 1, 0, 0, 0, 0, cfe.Montevideo),
		},
		// As cfe.RangeUse reports them on 14 May 2026 with its defaults
		// (nearly used up from 90 % used, near expiry within 30 days).
		CAE: []cfe.RangeUse{
			// e-Ticket: A is fresh, B used up, Z expired on 30 Apr.
			{Range: caeRange(cfe.ETicket, "Z", 1, 100, date(2026, 4, 30)), Expired: true},
			{Range: caeRange(cfe.ETicket, "B", 1, 500, date(2027, 3, 31))},
			{Range: caeRange(cfe.ETicket, "A", 1, 1000, date(2027, 3, 31)), Used: 50, Remaining: 950},
			// e-Factura: 15 of 200 left (92.5 % used), expiring 1 Jun (18 days away).
			{Range: caeRange(cfe.EFactura, "A", 1, 200, date(2026, 6, 1)), Remaining: 15,
				NearlyUsedUp: true, NearExpiry: true},
			// Credit note of e-Factura: expired yesterday.
			{Range: caeRange(cfe.EFacturaNC, "A", 1, 50, date(2026, 5, 13)), Expired: true},
			// e-Remito: one range nearly used up, but another one fresh.
			{Range: caeRange(cfe.ERemito, "A", 1, 100, date(2027, 3, 31)), Remaining: 5, NearlyUsedUp: true},
			{Range: caeRange(cfe.ERemito, "B", 1, 100, date(2027, 3, 31)), Remaining: 100},
		},
		Outbox: cfe.Outbox{Pending: 3, OldestPending: time.Date(2026, 5, 14, 13, 0, 0, 0, cfe.Montevideo)},
		Receipts: health.Receipts{SignedToday: 42,
			LastSignedAt: time.Date(2026, 5, 14, 18, 0, 0, 0, time.UTC)},
	}
	ts := startServer(t, func(c *localapi.ServerConfig) { c.State = fixedState{st: st} })
	rep, err := ts.client.State(context.Background())
	if err != nil {
		t.Fatal(err)
	}

	if !rep.OK || rep.Status != apitype.HealthDegraded || rep.Version != "1.2.3" || rep.Profile != "caja1" ||
		rep.Environment != "sandbox" || !rep.ZonaHoraria.OK {
		t.Fatalf("report head = %+v, want ok, degraded, the configured identity", rep.HealthReport)
	}
	// 14 May 15:04:05 to 1 Jul 00:00 is 47 days and ~9 hours.
	wantCert := &apitype.CertificateReport{CertSummary: cfe.CertSummary{CommonName: "CN=Comercio de Prueba SA", RUC: "215555550018",
		NotAfter: st.Certificate.NotAfter, NotBefore: st.Certificate.NotBefore,
		SubjectDN: st.Certificate.SubjectDN, Issuer: st.Certificate.Issuer, SerialNumber: st.Certificate.SerialNumber}, DaysLeft: 47}
	if rep.Certificate == nil || !rep.Certificate.NotAfter.Equal(wantCert.NotAfter) ||
		!rep.Certificate.NotBefore.Equal(wantCert.NotBefore) {
		t.Fatalf("certificate = %+v, want %+v", rep.Certificate, wantCert)
	}
	rep.Certificate.NotAfter, rep.Certificate.NotBefore = wantCert.NotAfter, wantCert.NotBefore
	if *rep.Certificate != *wantCert {
		t.Fatalf("certificate = %+v, want %+v", rep.Certificate, wantCert)
	}

	until := func(d cfe.Date) *cfe.Date { return &d }
	wantCAE := []apitype.CAETypeReport{
		{TipoCFE: 101, Nombre: "e-Ticket", Remaining: 950, UsableUntil: until(date(2027, 3, 31)),
			Ranges: []apitype.CAERangeReport{
				{Serie: "A", Desde: 1, Hasta: 1000, Vence: date(2027, 3, 31), Origen: "dgi", RangeUse: cfe.RangeUse{Used: 50, Remaining: 950}},
				{Serie: "B", Desde: 1, Hasta: 500, Vence: date(2027, 3, 31), Origen: "dgi", RangeUse: cfe.RangeUse{Remaining: 0}},
				{Serie: "Z", Desde: 1, Hasta: 100, Vence: date(2026, 4, 30), Origen: "dgi", RangeUse: cfe.RangeUse{Remaining: 0, Expired: true}},
			},
			Warnings: []string{}},
		{TipoCFE: 111, Nombre: "e-Factura", Remaining: 15, UsableUntil: until(date(2026, 6, 1)),
			Ranges: []apitype.CAERangeReport{{Serie: "A", Desde: 1, Hasta: 200, Vence: date(2026, 6, 1),
				Origen: "dgi", RangeUse: cfe.RangeUse{Remaining: 15, NearlyUsedUp: true, NearExpiry: true}}},
			Warnings: []string{
				"quedan 15 números CAE para e-Factura: solicite un nuevo rango",
				"los rangos CAE de e-Factura vencen el 2026-06-01: solicite un nuevo rango",
			}},
		{TipoCFE: 112, Nombre: "Nota de Crédito de e-Factura", Remaining: 0,
			Ranges:   []apitype.CAERangeReport{{Serie: "A", Desde: 1, Hasta: 50, Vence: date(2026, 5, 13), Origen: "dgi", RangeUse: cfe.RangeUse{Remaining: 0, Expired: true}}},
			Warnings: []string{"no quedan números CAE vigentes para Nota de Crédito de e-Factura"}},
		{TipoCFE: 181, Nombre: "e-Remito", Remaining: 105, UsableUntil: until(date(2027, 3, 31)),
			Ranges: []apitype.CAERangeReport{
				{Serie: "A", Desde: 1, Hasta: 100, Vence: date(2027, 3, 31), Origen: "dgi", RangeUse: cfe.RangeUse{Remaining: 5, NearlyUsedUp: true}},
				{Serie: "B", Desde: 1, Hasta: 100, Vence: date(2027, 3, 31), Origen: "dgi", RangeUse: cfe.RangeUse{Remaining: 100}},
			},
			Warnings: []string{}},
	}
	if !reflect.DeepEqual(rep.CAE, wantCAE) {
		t.Fatalf("cae\n got %+v\nwant %+v", rep.CAE, wantCAE)
	}

	// 13:00:00 to 15:04:05 is 2 h 4 min 5 s = 7445 s.
	if !reflect.DeepEqual(rep.Outbox, apitype.OutboxReport{Outbox: cfe.Outbox{Pending: 3}, OldestPendingAgeS: 7445, Quarantine: []apitype.QuarantinedCFE{}}) {
		t.Fatalf("outbox = %+v, want 3 pending, oldest 7445 s", rep.Outbox)
	}
	if rep.Receipts.SignedToday != 42 || rep.Receipts.LastSignedAt == nil ||
		!rep.Receipts.LastSignedAt.Equal(st.Receipts.LastSignedAt) {
		t.Fatalf("receipts = %+v, want 42 today, last at %v", rep.Receipts, st.Receipts.LastSignedAt)
	}

	wantWarnings := []string{
		"quedan 15 números CAE para e-Factura: solicite un nuevo rango",
		"los rangos CAE de e-Factura vencen el 2026-06-01: solicite un nuevo rango",
		"no quedan números CAE vigentes para Nota de Crédito de e-Factura",
		"comprobantes sin enviar al servicio: 3; el más antiguo espera desde hace 2 h 4 min",
	}
	if !reflect.DeepEqual(rep.Warnings, wantWarnings) {
		t.Fatalf("warnings\n got %q\nwant %q", rep.Warnings, wantWarnings)
	}

	// The wire format writes times at -03:00.
	_, body := ts.send(t, request{path: "/state"})
	if !strings.Contains(string(body), `"last_signed_at":"2026-05-14T15:00:00-03:00"`) {
		t.Fatalf("last_signed_at not written at -03:00: %s", body)
	}
}

func TestServer_StateErrors(t *testing.T) {
	tests := []struct {
		name string
		edit func(*health.State)
		want string
	}{
		{"no certificate", func(s *health.State) { s.Certificate = nil },
			"no hay certificado de firma configurado: no se puede firmar"},
		{"certificate that cannot be used", func(s *health.State) {
			s.Certificate, s.CertificateError = nil, "la contraseña del certificado es incorrecta"
		}, "el certificado de firma no se puede usar: la contraseña del certificado es incorrecta: no se puede firmar"},
		{"expired certificate", func(s *health.State) {
			s.Certificate.NotAfter = time.Date(2026, 5, 14, 15, 0, 0, 0, cfe.Montevideo)
		}, "el certificado de firma venció el 2026-05-14: no se puede firmar"},
		{"certificate not yet valid", func(s *health.State) {
			s.Certificate.NotBefore = time.Date(2026, 5, 15, 0, 0, 0, 0, cfe.Montevideo)
		}, "el certificado de firma recién es válido desde el 2026-05-15: no se puede firmar"},
		{"no numbers at all", func(s *health.State) { s.CAE[0].Remaining = 0 },
			"no hay números CAE vigentes para ningún tipo de comprobante: no se puede firmar"},
		{"no ranges at all", func(s *health.State) { s.CAE = nil },
			"no hay números CAE vigentes para ningún tipo de comprobante: no se puede firmar"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := healthyState()
			tc.edit(&st)
			ts := startServer(t, func(c *localapi.ServerConfig) { c.State = fixedState{st: st} })
			rep, err := ts.client.State(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if rep.OK || rep.Status != apitype.HealthError || !contains(rep.Warnings, tc.want) {
				t.Fatalf("report ok=%v status=%s warnings=%q, want error with %q", rep.OK, rep.Status, rep.Warnings, tc.want)
			}
			h, err := ts.client.Health(context.Background())
			if err != nil || h.OK || h.Status != apitype.HealthError {
				t.Fatalf("health = %+v, %v: want the same error", h, err)
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func TestServer_Root(t *testing.T) {
	page := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte("<!doctype html><title>cfe-agent</title>"))
	})
	ts := startServer(t, func(c *localapi.ServerConfig) { c.StatusPage = page })

	_, state := ts.send(t, request{path: "/state"})
	resp, root := ts.send(t, request{path: "/", headers: map[string]string{"Accept": "application/json"}})
	if resp.StatusCode != http.StatusOK || !reflect.DeepEqual(decodeObject(t, root), decodeObject(t, state)) {
		t.Fatalf("GET / for JSON = %d %s\nwant the body of /state %s", resp.StatusCode, root, state)
	}
	resp, _ = ts.send(t, request{path: "/"})
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("GET / without Accept answered %q, want JSON", ct)
	}
	resp, html := ts.send(t, request{path: "/", headers: map[string]string{
		"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}})
	if !strings.HasPrefix(string(html), "<!doctype html>") || resp.Header.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("GET / for a browser = %s (headers %v), want the status page behind the common headers", html, resp.Header)
	}
}

func TestServer_StateRecentReceipts(t *testing.T) {
	signedAt := time.Date(2026, 5, 14, 17, 30, 0, 0, time.UTC) // 14:30 in Montevideo
	st := healthyState()
	st.Receipts.Recent = []*cfe.Issued{
		{UUID: "b2", Type: cfe.EFactura, Serie: "A", Nro: 7, Total: decimal.RequireFromString("1220.50"),
			TmstFirma: signedAt, Delivery: cfe.Delivery{State: cfe.DeliveryAccepted}},
		{UUID: "a1", Type: cfe.ETicket, Serie: "B", Nro: 31, Total: decimal.RequireFromString("100"),
			TmstFirma: signedAt.Add(-time.Minute), Delivery: cfe.Delivery{State: cfe.DeliveryPending}},
	}
	ts := startServer(t, func(c *localapi.ServerConfig) { c.State = fixedState{st: st} })

	_, body := ts.send(t, request{path: "/state"})
	// Newest first, amounts as decimal strings, times at -03:00, names from
	// the CFE type table.
	want := `"recent":[` +
		`{"uuid":"b2","tipo_cfe":111,"nombre":"e-Factura","serie":"A","numero":7,"total":"1220.5","firmado_a":"2026-05-14T14:30:00-03:00","entrega":"aceptado"},` +
		`{"uuid":"a1","tipo_cfe":101,"nombre":"e-Ticket","serie":"B","numero":31,"total":"100","firmado_a":"2026-05-14T14:29:00-03:00","entrega":"pendiente"}]`
	if !strings.Contains(string(body), want) {
		t.Fatalf("/state lacks %s:\n%s", want, body)
	}

	ts = startServer(t, nil) // nothing signed: an empty list, not null
	if _, body := ts.send(t, request{path: "/state"}); !strings.Contains(string(body), `"recent":[]`) {
		t.Fatalf("empty recent list not written as []: %s", body)
	}
}

func TestServer_StateHosted(t *testing.T) {
	checked := time.Date(2026, 5, 14, 18, 0, 0, 0, time.UTC)
	tests := []struct {
		name       string
		hosted     *health.Hosted
		wantJSON   string
		wantStatus string
	}{
		{"not configured", nil, `"hosted":null`, apitype.HealthOK},
		{"not checked yet", &health.Hosted{BaseURL: "https://h.example"},
			`"hosted":{"base_url":"https://h.example","reachable":null,"checked_at":null}`, apitype.HealthOK},
		{"reachable", &health.Hosted{BaseURL: "https://h.example", CheckedAt: checked, Reachable: true},
			`"hosted":{"base_url":"https://h.example","reachable":true,"checked_at":"2026-05-14T15:00:00-03:00"}`, apitype.HealthOK},
		{"unreachable", &health.Hosted{BaseURL: "https://h.example", CheckedAt: checked},
			`"hosted":{"base_url":"https://h.example","reachable":false,"checked_at":"2026-05-14T15:00:00-03:00"}`, apitype.HealthDegraded},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := healthyState()
			st.Hosted = tc.hosted
			ts := startServer(t, func(c *localapi.ServerConfig) { c.State = fixedState{st: st} })
			_, body := ts.send(t, request{path: "/state"})
			if !strings.Contains(string(body), tc.wantJSON) {
				t.Fatalf("/state lacks %s:\n%s", tc.wantJSON, body)
			}
			rep, err := ts.client.State(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if rep.Status != tc.wantStatus || !rep.OK {
				t.Fatalf("status %s (ok %v), want %s and ok: the agent signs without the hosted service", rep.Status, rep.OK, tc.wantStatus)
			}
			want := "el servicio en la nube (https://h.example) no responde: los comprobantes firmados esperan en la cola"
			if got := slices.Contains(rep.Warnings, want); got != (tc.wantStatus == apitype.HealthDegraded) {
				t.Fatalf("warnings %q", rep.Warnings)
			}
		})
	}
}
