package sandbox_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/sandbox"
	"github.com/cfe-agent/cfe-agent/sandbox/auth"
	"github.com/cfe-agent/cfe-agent/sandbox/reports"
)

// usdTicketRequest is an e-Ticket in dollars: one line of 100.00 with IVA at
// the basic rate included, so MntTotal is 100.00 USD.
func usdTicketRequest(uuid string) map[string]any {
	return map[string]any{"uuid": uuid, "cfe": map[string]any{
		"idDoc":    map[string]any{"tipoCfe": 101, "formaPago": 1, "montoBruto": 1},
		"detalles": []map[string]any{{"indicadorFacturacion": 3, "nombreItem": "Servicio", "cantidad": 1, "precioUnitario": "100.00"}},
		"totales":  map[string]any{"tipoMoneda": "USD", "tipoCambio": "39.500"},
	}}
}

// mvd is a time of day in Montevideo.
func mvd(year int, month time.Month, day, hour, minute int) time.Time {
	return time.Date(year, month, day, hour, minute, 0, 0, cfe.Montevideo)
}

// chartFixture issues Alfa's CFEs through emitir and anular with the clock
// set to each signing time, and one CFE of Beta, then sets the clock back to
// t0 (2026-03-02 10:00:30 in Montevideo). ticketRequest bills 415.00 UYU.
//
//	2025-03-31 23:30  e-Ticket 415           (UTC: 1 April; outside the 12 months)
//	2025-04-01 00:30  e-Ticket 415           (first month of the window)
//	2026-01-31 22:00  e-Ticket 415           (UTC: 1 February; outside the 30 days)
//	2026-02-01 10:00  e-Ticket 100 USD       (first day of the window)
//	2026-03-02 09:00  e-Ticket 415, its annulment (credit note 102, −415), the
//	                  annulment of that (debit note 103, +415), another
//	                  e-Ticket 415, an own collection (101, MntTotal 0) and an
//	                  e-Remito (181, bills nothing); Beta's e-Ticket
func chartFixture(t *testing.T, e *env) {
	t.Helper()
	at := func(tm time.Time) { e.clock.Set(tm) }
	at(mvd(2025, time.March, 31, 23, 30))
	e.emit(ticketRequest("g-1"))
	at(mvd(2025, time.April, 1, 0, 30))
	e.emit(ticketRequest("g-2"))
	at(mvd(2026, time.January, 31, 22, 0))
	e.emit(ticketRequest("g-3"))
	at(mvd(2026, time.February, 1, 10, 0))
	e.emit(usdTicketRequest("g-4"))
	at(mvd(2026, time.March, 2, 9, 0))
	annulled := e.emit(ticketRequest("g-5"))
	credit, _ := e.annulOK(annulled.ID, today)
	if debit, _ := e.annulOK(credit.ID, today); credit.TipoCfe != 102 || debit.TipoCfe != 103 {
		t.Fatalf("annulments are %d and %d, want 102 and 103", credit.TipoCfe, debit.TipoCfe)
	}
	e.emit(ticketRequest("g-6"))
	e.emit(collectionRequest("g-7"))
	e.emit(remitoRequest("g-8"))
	e.do("POST", "/api/v1/comprobante/emitir", ticketRequest("g-beta"), "X-API-Key", keyBeta).expect(t, http.StatusOK)
	at(t0)
}

func (e *env) chart(t *testing.T, path string, headers ...string) reports.ChartResponse {
	t.Helper()
	var c reports.ChartResponse
	e.do("GET", path, nil, headers...).expect(t, http.StatusOK).decode(t, &c)
	return c
}

// amounts maps "currency" to "count amount" and "type/currency" likewise.
func amounts(tot reports.ChartTotals) map[string]string {
	out := map[string]string{"": strconv.Itoa(tot.Cantidad)}
	for _, m := range tot.Montos {
		out[m.Moneda] = strconv.Itoa(m.Cantidad) + " " + m.Monto.StringFixed(2)
	}
	for _, b := range tot.PorTipo {
		out[strconv.Itoa(b.TipoCfe)+"/"+b.Moneda] = strconv.Itoa(b.Cantidad) + " " + b.Monto.StringFixed(2)
	}
	return out
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// zeros is what an empty period holds with the fixture's series.
var zeros = map[string]string{"": "0", "UYU": "0 0.00", "USD": "0 0.00",
	"101/UYU": "0 0.00", "101/USD": "0 0.00", "102/UYU": "0 0.00", "103/UYU": "0 0.00", "181/UYU": "0 0.00"}

// with returns zeros updated by the pairs.
func with(pairs ...string) map[string]string {
	out := map[string]string{}
	for k, v := range zeros {
		out[k] = v
	}
	for i := 0; i+1 < len(pairs); i += 2 {
		out[pairs[i]] = pairs[i+1]
	}
	return out
}

// today's CFEs: two e-Tickets of 415 and a collection (101: 3, 830), the
// credit note (−415), the debit note (+415) and the e-Remito.
var todayWant = with("", "6", "UYU", "6 830.00", "101/UYU", "3 830.00", "102/UYU", "1 -415.00", "103/UYU", "1 415.00", "181/UYU", "1 0.00")

// checkSums checks that the periods add up to the totals and that in every
// period the types add up to the currencies.
func checkSums(t *testing.T, c reports.ChartResponse) {
	t.Helper()
	count := 0
	byCurrency := map[string]decimal.Decimal{}
	for _, p := range c.Periodos {
		count += p.Cantidad
		typeSums := map[string]decimal.Decimal{}
		typeCounts := map[string]int{}
		for _, b := range p.PorTipo {
			typeSums[b.Moneda] = typeSums[b.Moneda].Add(b.Monto)
			typeCounts[b.Moneda] += b.Cantidad
		}
		n := 0
		for _, m := range p.Montos {
			n += m.Cantidad
			byCurrency[m.Moneda] = byCurrency[m.Moneda].Add(m.Monto)
			if !typeSums[m.Moneda].Equal(m.Monto) || typeCounts[m.Moneda] != m.Cantidad {
				t.Errorf("%s %s: types add up to %d %s, the currency says %d %s", p.Periodo, m.Moneda,
					typeCounts[m.Moneda], typeSums[m.Moneda], m.Cantidad, m.Monto)
			}
		}
		if n != p.Cantidad {
			t.Errorf("%s: currencies count %d, the period %d", p.Periodo, n, p.Cantidad)
		}
	}
	if count != c.Totales.Cantidad {
		t.Errorf("periods count %d, totals %d", count, c.Totales.Cantidad)
	}
	for _, m := range c.Totales.Montos {
		if !byCurrency[m.Moneda].Equal(m.Monto) {
			t.Errorf("%s: periods add up to %s, totals say %s", m.Moneda, byCurrency[m.Moneda], m.Monto)
		}
	}
}

func TestCharts_Daily(t *testing.T) {
	t.Parallel()
	e := start(t)
	chartFixture(t, e)
	ana := bearer(e.login("ana", anaPassword).Token)
	c := e.chart(t, "/api/v1/cfeemitido/graficaDiaria", "X-API-Key", keyAlfa)

	if c.Agrupacion != "dia" || c.Desde != "2026-02-01" || c.Hasta != "2026-03-02" || c.ZonaHoraria != "America/Montevideo" {
		t.Fatalf("window %s %s..%s %s", c.Agrupacion, c.Desde, c.Hasta, c.ZonaHoraria)
	}
	if len(c.Monedas) != 2 || c.Monedas[0] != "UYU" || c.Monedas[1] != "USD" {
		t.Errorf("currencies %v, want [UYU USD]", c.Monedas)
	}
	wantTypes := map[int]int{101: 1, 102: -1, 103: 1, 181: 0}
	if len(c.Tipos) != len(wantTypes) {
		t.Errorf("types %+v", c.Tipos)
	}
	for _, ty := range c.Tipos {
		if sign, ok := wantTypes[ty.TipoCfe]; !ok || sign != ty.Signo || ty.Nombre == "" {
			t.Errorf("type %+v, want sign %d", ty, sign)
		}
	}
	if len(c.Periodos) != 30 {
		t.Fatalf("%d periods, want 30", len(c.Periodos))
	}
	for i, p := range c.Periodos {
		want := zeros
		switch p.Periodo {
		case "2026-02-01":
			want = with("", "1", "USD", "1 100.00", "101/USD", "1 100.00")
		case "2026-03-02":
			want = todayWant
		}
		if day := cfe.DateOf(time.Date(2026, time.February, 1+i, 0, 0, 0, 0, time.UTC)).String(); p.Periodo != day {
			t.Errorf("period %d is %s, want %s", i, p.Periodo, day)
		}
		if got := amounts(p.ChartTotals); !equalMaps(got, want) {
			t.Errorf("%s: %v, want %v", p.Periodo, got, want)
		}
	}
	if got, want := amounts(c.Totales), with("", "7", "UYU", "6 830.00", "USD", "1 100.00", "101/UYU", "3 830.00",
		"101/USD", "1 100.00", "102/UYU", "1 -415.00", "103/UYU", "1 415.00", "181/UYU", "1 0.00"); !equalMaps(got, want) {
		t.Errorf("totals %v, want %v", got, want)
	}
	checkSums(t, c)

	t.Run("each day counts what buscar finds on it", func(t *testing.T) {
		for _, p := range c.Periodos {
			var list []sandbox.IssuedSummary
			e.do("GET", "/api/v1/cfeemitido/buscar?fechaFirmaDesde="+p.Periodo+"&fechaFirmaHasta="+p.Periodo, nil, ana...).
				expect(t, http.StatusOK).decode(t, &list)
			if len(list) != p.Cantidad {
				t.Errorf("%s: chart counts %d, buscar finds %d", p.Periodo, p.Cantidad, len(list))
			}
		}
	})
	t.Run("a company without CFEs gets its zeros", func(t *testing.T) {
		e2 := start(t)
		c := e2.chart(t, "/api/v1/cfeemitido/graficaDiaria", "X-API-Key", keyAlfa)
		if len(c.Periodos) != 30 || len(c.Monedas) != 1 || c.Monedas[0] != "UYU" || len(c.Tipos) != 0 || c.Totales.Cantidad != 0 {
			t.Fatalf("empty chart %+v", c)
		}
		for _, p := range c.Periodos {
			if p.Cantidad != 0 || len(p.Montos) != 1 || !p.Montos[0].Monto.IsZero() || len(p.PorTipo) != 0 {
				t.Errorf("%s: %+v", p.Periodo, p.ChartTotals)
			}
		}
	})
	t.Run("the window follows the clock", func(t *testing.T) {
		e.clock.Set(mvd(2026, time.March, 3, 0, 10)) // 03:10 UTC: a day later in Montevideo
		c := e.chart(t, "/api/v1/cfeemitido/graficaDiaria", "X-API-Key", keyAlfa)
		if c.Desde != "2026-02-02" || c.Hasta != "2026-03-03" || c.Totales.Cantidad != 6 {
			t.Errorf("window %s..%s holds %d CFEs, want 2026-02-02..2026-03-03 and 6", c.Desde, c.Hasta, c.Totales.Cantidad)
		}
		e.clock.Set(t0)
	})
}

func TestCharts_Monthly(t *testing.T) {
	t.Parallel()
	e := start(t)
	chartFixture(t, e)
	c := e.chart(t, "/api/v1/cfeemitido/graficaFacturacionMensual", "X-API-Key", keyAlfa)
	if c.Agrupacion != "mes" || c.Desde != "2025-04-01" || c.Hasta != "2026-03-02" {
		t.Fatalf("window %s %s..%s", c.Agrupacion, c.Desde, c.Hasta)
	}
	if len(c.Periodos) != 12 {
		t.Fatalf("%d periods, want 12", len(c.Periodos))
	}
	months := []string{"2025-04", "2025-05", "2025-06", "2025-07", "2025-08", "2025-09", "2025-10", "2025-11", "2025-12",
		"2026-01", "2026-02", "2026-03"}
	for i, p := range c.Periodos {
		want := zeros
		switch p.Periodo {
		case "2025-04", "2026-01":
			// 2025-03-31 23:30 and 2026-02-01 01:00 UTC are March and January in Montevideo.
			want = with("", "1", "UYU", "1 415.00", "101/UYU", "1 415.00")
		case "2026-02":
			want = with("", "1", "USD", "1 100.00", "101/USD", "1 100.00")
		case "2026-03":
			want = todayWant
		}
		if p.Periodo != months[i] {
			t.Errorf("period %d is %s, want %s", i, p.Periodo, months[i])
		}
		if got := amounts(p.ChartTotals); !equalMaps(got, want) {
			t.Errorf("%s: %v, want %v", p.Periodo, got, want)
		}
	}
	if got, want := amounts(c.Totales), with("", "9", "UYU", "8 1660.00", "USD", "1 100.00", "101/UYU", "5 1660.00",
		"101/USD", "1 100.00", "102/UYU", "1 -415.00", "103/UYU", "1 415.00", "181/UYU", "1 0.00"); !equalMaps(got, want) {
		t.Errorf("totals %v, want %v", got, want)
	}
	checkSums(t, c)
}

func TestCharts_Access(t *testing.T) {
	t.Parallel()
	e := start(t)
	e.emit(ticketRequest("a-1")) // Alfa, today
	e.do("POST", "/api/v1/comprobante/emitir", ticketRequest("b-1"), "X-API-Key", keyBeta).expect(t, http.StatusOK)
	e.do("POST", "/api/v1/comprobante/emitir", ticketRequest("b-2"), "X-API-Key", keyBeta).expect(t, http.StatusOK)
	var companies []auth.CompanyResponse
	beto := bearer(e.login("beto", betoPassword).Token) // Alfa and Beta
	e.do("GET", "/api/v1/usuario/empresas", nil, beto...).expect(t, http.StatusOK).decode(t, &companies)
	ids := map[string]string{}
	for _, c := range companies {
		ids[c.RUC] = strconv.FormatInt(c.IdEmpresa, 10)
	}
	alfa, beta := ids[rucAlfa], ids[rucBeta]
	ana := bearer(e.login("ana", anaPassword).Token)
	carla := bearer(e.login("carla", carlaPassword).Token)

	for _, path := range []string{"/api/v1/cfeemitido/graficaDiaria", "/api/v1/cfeemitido/graficaFacturacionMensual"} {
		t.Run(path, func(t *testing.T) {
			for _, c := range []struct {
				name    string
				query   string
				headers []string
				company string
				count   int
			}{
				{"API key in X-API-Key", "", []string{"X-API-Key", keyAlfa}, alfa, 1},
				{"API key as Bearer", "", []string{"Authorization", "Bearer " + keyAlfa}, alfa, 1},
				{"API key with its own idEmpresa", "?idEmpresa=" + alfa, []string{"X-API-Key", keyAlfa}, alfa, 1},
				{"JWT of a one-company user", "", ana, alfa, 1},
				{"JWT of a two-company user naming one", "?idEmpresa=" + beta, beto, beta, 2},
			} {
				got := e.chart(t, path+c.query, c.headers...)
				if strconv.FormatInt(got.IdEmpresa, 10) != c.company || got.Totales.Cantidad != c.count {
					t.Errorf("%s: company %d with %d CFEs, want %s with %d", c.name, got.IdEmpresa, got.Totales.Cantidad, c.company, c.count)
				}
			}
			r := e.do("GET", path, nil, "X-API-Key", keyAlfa)
			if r.header.Get("X-RateLimit-Limit-Minute") != "120" || r.header.Get("X-RateLimit-Remaining-Hour") == "" {
				t.Errorf("a key's answer carries no rate-limit headers: %v", r.header)
			}
			for _, c := range []struct {
				name    string
				query   string
				headers []string
				status  int
				code    string
				campo   string
			}{
				{"no credentials", "", nil, 401, cfe.EUNAUTHORIZED, ""},
				{"a bad JWT", "", bearer("no.es.un-jwt"), 401, cfe.EUNAUTHORIZED, ""},
				{"an unknown key", "", []string{"X-API-Key", "xx_test_no-existe"}, 401, cfe.EUNAUTHORIZED, ""},
				{"a key naming another company", "?idEmpresa=" + alfa, []string{"X-API-Key", keyBeta}, 403, cfe.EFORBIDDEN, ""},
				{"a user naming a company not theirs", "?idEmpresa=" + alfa, carla, 403, cfe.EFORBIDDEN, ""},
				{"idEmpresa not a number", "?idEmpresa=abc", ana, 400, cfe.EINVALID, "idEmpresa"},
				{"idEmpresa negative", "?idEmpresa=-1", []string{"X-API-Key", keyAlfa}, 400, cfe.EINVALID, "idEmpresa"},
				{"idEmpresa zero is not sent: a two-company user must name one", "?idEmpresa=0", beto, 400, cfe.EINVALID, "idEmpresa"},
				{"a two-company user naming none", "", beto, 400, cfe.EINVALID, "idEmpresa"},
			} {
				b := e.do("GET", path+c.query, nil, c.headers...).expect(t, c.status).errBody(t)
				if b.Code != c.code || b.Error == "" || (c.campo != "" && (len(b.Details) != 1 || b.Details[0].Campo != c.campo)) {
					t.Errorf("%s: %+v", c.name, b)
				}
			}
			e.do("POST", path, nil, ana...).expect(t, http.StatusBadRequest)
		})
	}
}

// An e-Boleta de entrada documents a purchase (cfe.SaleSign): the chart
// counts it, with amount 0 and sign 0, beside a sale of the same day.
func TestCharts_purchaseBillsNothing(t *testing.T) {
	t.Parallel()
	e := start(t)
	raw, err := os.ReadFile(filepath.Join(testtool.RepoRoot(t), "examples", "e-boleta.json"))
	if err != nil {
		t.Fatal(err)
	}
	boleta := e.emit(string(raw))
	if boleta.TipoCfe != 151 {
		t.Fatalf("the example is type %d, want an e-Boleta (151)", boleta.TipoCfe)
	}
	e.emit(ticketRequest("sale-1"))
	c := e.chart(t, "/api/v1/cfeemitido/graficaDiaria", "X-API-Key", keyAlfa)
	signs := map[int]int{}
	for _, ty := range c.Tipos {
		signs[ty.TipoCfe] = ty.Signo
	}
	if len(signs) != 2 || signs[101] != 1 || signs[151] != 0 {
		t.Errorf("types %+v, want 101 with sign 1 and 151 with sign 0", c.Tipos)
	}
	got := amounts(c.Totales)
	if got[""] != "2" || got["UYU"] != "2 415.00" || got["151/UYU"] != "1 0.00" || got["101/UYU"] != "1 415.00" {
		t.Errorf("totals %v: want the e-Boleta counted with 0 and the sale's 415.00", got)
	}
}
