package app

import (
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

func TestFormatInt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		n    int64
		want string
	}{
		{0, "0"}, {7, "7"}, {999, "999"}, {1000, "1.000"}, {21999, "21.999"}, {1000000, "1.000.000"},
		{-1234567, "-1.234.567"}, {-999, "-999"},
	} {
		if got := formatInt(tc.n); got != tc.want {
			t.Errorf("formatInt(%d) = %q, want %q", tc.n, got, tc.want)
		}
	}
}

func TestFormatMoney(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		cur, amount, want string
	}{
		{"UYU", "1470", "UYU 1.470,00"},
		{"UYU", "0.5", "UYU 0,50"},
		{"USD", "1000000.1", "USD 1.000.000,10"},
		{"UYU", "-1234.567", "UYU -1.234,57"},
		{"UYU", "-0.001", "UYU 0,00"},
		{"EUR", "999.99", "EUR 999,99"},
	} {
		if got := formatMoney(tc.cur, decimal.RequireFromString(tc.amount)); got != tc.want {
			t.Errorf("formatMoney(%s, %s) = %q, want %q", tc.cur, tc.amount, got, tc.want)
		}
	}
}

func TestFormatDate(t *testing.T) {
	t.Parallel()
	if got := formatDate(cfe.Date{Year: 2028, Month: time.November, Day: 4}); got != "04/11/2028" {
		t.Errorf("formatDate = %q", got)
	}
	// 21:36:29 UTC is 18:36:29 in Montevideo (-03:00); 02:05 UTC is the day before there.
	for in, want := range map[string]string{
		"2026-11-24T21:36:29Z": "24/11/2026 18:36:29",
		"2026-11-25T02:05:00Z": "24/11/2026 23:05:00",
	} {
		tm, err := time.Parse(time.RFC3339, in)
		if err != nil {
			t.Fatal(err)
		}
		if got := formatDateTime(tm); got != want {
			t.Errorf("formatDateTime(%s) = %q, want %q", in, got, want)
		}
	}
}

func TestCurrencyOf(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, xml, want string
	}{
		{"dollars", `<CFE xmlns="http://cfe.dgi.gub.uy"><eTck><Encabezado><Totales><TpoMoneda>USD</TpoMoneda><TpoCambio>39.5</TpoCambio></Totales></Encabezado></eTck></CFE>`, "USD"},
		{"pesos", `<ns0:CFE xmlns:ns0="http://cfe.dgi.gub.uy"><ns0:eFact><ns0:Encabezado><ns0:Totales><ns0:TpoMoneda>UYU</ns0:TpoMoneda></ns0:Totales></ns0:Encabezado></ns0:eFact></ns0:CFE>`, "UYU"},
		{"none named", `<CFE><eRem><Encabezado><Totales><CantLinDet>1</CantLinDet></Totales></Encabezado></eRem></CFE>`, "UYU"},
		{"not XML", `<CFE><eTck>`, "UYU"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := currencyOf([]byte(tc.xml)); got != tc.want {
				t.Errorf("currencyOf = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestStatusView_addCAE(t *testing.T) {
	t.Parallel()
	until := cfe.Date{Year: 2028, Month: time.November, Day: 24}
	cases := []struct {
		name    string
		types   []apitype.CAETypeReport
		summary string
		open    bool
		first   string // the first row's type
	}{
		{"no warnings", []apitype.CAETypeReport{
			{TipoCFE: 101, Nombre: "e-Ticket", Remaining: 1000000, UsableUntil: &until},
			{TipoCFE: 111, Nombre: "e-Factura", Remaining: 999999, UsableUntil: &until},
		}, "2 tipos de comprobante, 1.999.999 números restantes, sin avisos", false, "101"},
		{"one warned, listed first", []apitype.CAETypeReport{
			{TipoCFE: 101, Nombre: "e-Ticket", Remaining: 1000000, UsableUntil: &until},
			{TipoCFE: 111, Nombre: "e-Factura", Remaining: 150, Warnings: []string{"quedan 150 números de e-Factura"}},
			{TipoCFE: 181, Nombre: "e-Remito", Remaining: 0},
		}, "3 tipos de comprobante, 1.000.150 números restantes, 1 con avisos", true, "111"},
		{"one type", []apitype.CAETypeReport{{TipoCFE: 101, Nombre: "e-Ticket", Remaining: 12, Warnings: []string{"a", "b"}}},
			"1 tipo de comprobante, 12 números restantes, 1 con avisos", true, "101"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var v statusView
			v.addCAE(tc.types)
			if v.CAESummary != tc.summary || v.CAEOpen != tc.open || v.CAE[0].Type != tc.first {
				t.Errorf("summary %q open %v first %s; want %q %v %s", v.CAESummary, v.CAEOpen, v.CAE[0].Type, tc.summary, tc.open, tc.first)
			}
		})
	}
	var v statusView
	v.addCAE(cases[1].types)
	if r := v.CAE[1]; r.Remaining != "1.000.000" || r.Until != "24/11/2028" || r.Warnings != "—" || r.Warn {
		t.Errorf("e-Ticket row %+v", r)
	}
	if r := v.CAE[0]; r.Until != "—" || r.Warnings != "quedan 150 números de e-Factura" || !r.Warn {
		t.Errorf("e-Factura row %+v", r)
	}
}

func TestNewSalesChart(t *testing.T) {
	t.Parallel()
	day := cfe.Date{Year: 2026, Month: time.November, Day: 24}
	s := &salesToday{day: day, others: map[string]decimal.Decimal{"USD": decimal.RequireFromString("152.5"), "EUR": decimal.RequireFromString("10")}}
	s.hours[9] = decimal.RequireFromString("1470")
	s.receipts[9] = 1
	s.hours[14] = decimal.RequireFromString("2940.50")
	s.receipts[14] = 3
	s.hours[15] = decimal.RequireFromString("-100") // only a credit note
	s.receipts[15] = 1
	s.total = decimal.RequireFromString("4310.50")
	s.sold = 5
	now := time.Date(2026, time.November, 24, 14, 30, 0, 0, cfe.Montevideo)
	c := newSalesChart(s, now)

	if len(c.Bars) != 24 || len(c.Ticks) != 8 || c.Ticks[1].Label != "3 h" {
		t.Fatalf("%d bars, %d ticks (%+v)", len(c.Bars), len(c.Ticks), c.Ticks)
	}
	if want := "Ventas de hoy: UYU 4.310,50 en 5 comprobantes"; c.Caption != want {
		t.Errorf("caption %q, want %q", c.Caption, want)
	}
	if want := "Además, en otras monedas (no están en el gráfico): EUR 10,00; USD 152,50"; c.Others != want {
		t.Errorf("others %q, want %q", c.Others, want)
	}
	if c.Max != "UYU 2.940,50" {
		t.Errorf("axis maximum %q", c.Max)
	}
	plot := float64(chartHeight - chartTop - chartBottom)
	tallest, nine := c.Bars[14], c.Bars[9]
	if tallest.H != plot || tallest.Y != chartTop || !tallest.Current {
		t.Errorf("the hour with most sales %+v: want the full height %.0f from %d, marked as now", tallest, plot, chartTop)
	}
	if want := round1(plot * 1470 / 2940.50); nine.H != want || nine.Y+nine.H != float64(chartHeight-chartBottom) {
		t.Errorf("9 h bar %+v, want height %.1f standing on the baseline", nine, want)
	}
	if c.Bars[15].H != 0 || c.Bars[3].H != 0 || c.Bars[9].Current {
		t.Errorf("empty or negative hours drawn: 15 h %+v, 3 h %+v", c.Bars[15], c.Bars[3])
	}
	if want := "14:00 a 14:59: UYU 2.940,50 (3 comprobantes)"; tallest.Title != want {
		t.Errorf("title %q, want %q", tallest.Title, want)
	}
	if want := "09:00 a 09:59: UYU 1.470,00 (1 comprobante)"; nine.Title != want {
		t.Errorf("title %q, want %q", nine.Title, want)
	}
	for _, b := range c.Bars {
		if b.X < chartLeft || b.X+b.W > chartWidth-chartRight {
			t.Errorf("bar outside the chart: %+v", b)
		}
	}
	if empty := newSalesChart(&salesToday{day: day}, now.AddDate(0, 0, 1)); !empty.Empty || empty.Bars[14].Current ||
		!strings.HasPrefix(empty.Caption, "Ventas de hoy: UYU 0,00 en 0 comprobantes") {
		t.Errorf("a day without sales: %+v", empty)
	}
}

func TestPendingAge(t *testing.T) {
	t.Parallel()
	for s, want := range map[int64]string{0: "", 30: " (el más antiguo hace menos de 1 min)", 125: " (el más antiguo hace 2 min)",
		3*3600 + 7*60: " (el más antiguo hace 3 h 7 min)", 1200 * 3600: " (el más antiguo hace 50 días)"} {
		if got := pendingAge(s); got != want {
			t.Errorf("pendingAge(%d) = %q, want %q", s, got, want)
		}
	}
}

// TestNewStatusView_testMode: a sandbox profile's page says MODO PRUEBA in
// its header; a production profile's does not.
func TestNewStatusView_testMode(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 28, 10, 0, 0, 0, cfe.Montevideo)
	for env, want := range map[string]bool{"sandbox": true, "produccion": false} {
		rep := &apitype.StateReport{HealthReport: apitype.HealthReport{Status: apitype.HealthOK, Environment: env}}
		if got := newStatusView(rep, nil, func(string) string { return "UYU" }, now).TestMode; got != want {
			t.Errorf("%s: TestMode = %v, want %v", env, got, want)
		}
	}
}
