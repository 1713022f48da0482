package cfe

import (
	"regexp"
	"testing"

	"github.com/shopspring/decimal"
)

// line builds a detail line; opts add discounts, surcharges or retentions.
func line(ind int, qty, price string, opts ...func(*Item)) Item {
	it := Item{IndFact: ind, NomItem: "x", UniMed: "N/A", Cantidad: dec(qty), PrecioUnitario: dec(price)}
	for _, o := range opts {
		o(&it)
	}
	return it
}

func discountPct(p string) func(*Item)    { return func(it *Item) { it.DescuentoPct = decp(p) } }
func discountAmount(a string) func(*Item) { return func(it *Item) { it.DescuentoMonto = decp(a) } }
func surchargePct(p string) func(*Item)   { return func(it *Item) { it.RecargoPct = decp(p) } }
func surchargeAmount(a string) func(*Item) {
	return func(it *Item) { it.RecargoMnt = decp(a) }
}
func retention(code, value string) func(*Item) {
	return func(it *Item) {
		it.RetencPercep = append(it.RetencPercep, ItemRetPerc{CodRet: code, ValRetPerc: dec(value)})
	}
}

func global(mov string, tipo int, value string, ind int) GlobalAdjust {
	return GlobalAdjust{TpoMovDR: mov, TpoDR: tipo, GlosaDR: "x", ValorDR: dec(value), IndFactDR: ind}
}

func doc(t Type, mntBruto int, items []Item, globals ...GlobalAdjust) CFE {
	return CFE{IdDoc: IdDoc{TipoCFE: t, MntBruto: mntBruto}, Totales: Totales{TpoMoneda: "UYU"}, Items: items, DscRcgGlobal: globals}
}

// The expected figures are worked out by hand in the comments from DGI's
// formulas (V24 A-C112..C130, B-C24, D-C6/C7), with the rounding documented
// in totals.go: half away from zero, on each computed amount.
func TestComputeTotals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		cfe   CFE
		want  map[string]string // by request name; every other amount must be nil
		lines int
		ret   []RetPerc
	}{
		{
			// MntBruto 1: lines include IVA. 122.00/1.22 = 100.00 net, 22.00 IVA;
			// 2 × 55.00 = 110.00/1.10 = 100.00 net, 10.00 IVA; 30.00 exempt.
			// C124 = 30 + 100 + 100 + 10 + 22 = 262.00, the sum of the gross lines.
			name: "gross amounts, mixed rates",
			cfe:  doc(ETicket, 1, []Item{line(3, "1", "122"), line(2, "2", "55"), line(1, "1", "30")}),
			want: map[string]string{"montoNoGravado": "30", "montoNetoIvaTasaMinima": "100", "montoNetoIvaTasaBasica": "100",
				"tasaIvaMinima": "10", "tasaIvaBasica": "22", "montoIvaTasaMinima": "10", "montoIvaTasaBasica": "22",
				"montoTotal": "262", "montoPagar": "262"},
			lines: 3,
		},
		{
			// MntBruto 1 where the division is not exact: C117 = 100.01/1.22 =
			// 81.9754… → 81.98; C122 = C117 × C120 = 81.98 × 0.22 = 18.0356 → 18.04
			// (not 100.01 − 81.98 = 18.03); C124 = 81.98 + 18.04 = 100.02, a cent
			// above the gross lines: DGI's C124 is the sum of nets and IVAs.
			name:  "gross amount, IVA on the net, a cent more",
			cfe:   doc(ETicket, 1, []Item{line(3, "1", "100.01")}),
			want:  map[string]string{"montoNetoIvaTasaBasica": "81.98", "tasaIvaBasica": "22", "montoIvaTasaBasica": "18.04", "montoTotal": "100.02", "montoPagar": "100.02"},
			lines: 1,
		},
		{
			// 100.07/1.22 = 82.0245… → 82.02; 82.02 × 0.22 = 18.0444 → 18.04
			// (100.07 − 82.02 would be 18.05); C124 = 100.06, a cent below.
			name:  "gross amount, IVA on the net, a cent less",
			cfe:   doc(ETicket, 1, []Item{line(3, "1", "100.07")}),
			want:  map[string]string{"montoNetoIvaTasaBasica": "82.02", "tasaIvaBasica": "22", "montoIvaTasaBasica": "18.04", "montoTotal": "100.06", "montoPagar": "100.06"},
			lines: 1,
		},
		{
			// 100.40/1.22 = 82.2950… → 82.30; 82.30 × 0.22 = 18.106 → 18.11
			// (difference 18.10); the two lines 2 × 50.20 are summed before
			// dividing: C117 is computed on ∑ B-C24, not line by line.
			name:  "gross amounts of two lines, one division",
			cfe:   doc(ETicket, 1, []Item{line(3, "1", "50.2"), line(3, "1", "50.2")}),
			want:  map[string]string{"montoNetoIvaTasaBasica": "82.3", "tasaIvaBasica": "22", "montoIvaTasaBasica": "18.11", "montoTotal": "100.41", "montoPagar": "100.41"},
			lines: 2,
		},
		{
			// Minimum rate: 100.04/1.10 = 90.9454… → 90.95; C121 = 90.95 × 0.10 =
			// 9.095 → 9.10 (half away from zero; the difference would be 9.09);
			// C124 = 100.05.
			name:  "gross amount at the minimum rate, half-cent IVA",
			cfe:   doc(ETicket, 1, []Item{line(2, "1", "100.04")}),
			want:  map[string]string{"montoNetoIvaTasaMinima": "90.95", "tasaIvaMinima": "10", "montoIvaTasaMinima": "9.1", "montoTotal": "100.05", "montoPagar": "100.05"},
			lines: 1,
		},
		{
			// Where the division is exact nothing changes: 305.00/1.22 = 250.00,
			// IVA 55.00, C124 = 305.00.
			name:  "gross amount, exact division",
			cfe:   doc(EFactura, 1, []Item{line(3, "2", "152.5")}),
			want:  map[string]string{"montoNetoIvaTasaBasica": "250", "tasaIvaBasica": "22", "montoIvaTasaBasica": "55", "montoTotal": "305", "montoPagar": "305"},
			lines: 1,
		},
		{
			// Net prices with line discounts and surcharges:
			// L1 3 × 10.00 = 30.00 − 10 % (3.00) = 27.00 (basic)
			// L2 1 × 50.00 + 5.00 = 55.00 (minimum)
			// L3 2 × 12.50 = 25.00 − 1.00 = 24.00 (exempt)
			// L4 1.5 × 20.00 = 30.00 + 10 % (3.00) = 33.00 (basic)
			// basic 60.00 → IVA 13.20; minimum 55.00 → IVA 5.50;
			// C124 = 24 + 55 + 60 + 5.50 + 13.20 = 157.70.
			name: "line discounts and surcharges, amount and percent",
			cfe: doc(EFactura, 0, []Item{
				line(3, "3", "10", discountPct("10")),
				line(2, "1", "50", surchargeAmount("5")),
				line(1, "2", "12.5", discountAmount("1")),
				line(3, "1.5", "20", surchargePct("10")),
			}),
			want: map[string]string{"montoNoGravado": "24", "montoNetoIvaTasaMinima": "55", "montoNetoIvaTasaBasica": "60",
				"tasaIvaMinima": "10", "tasaIvaBasica": "22", "montoIvaTasaMinima": "5.5", "montoIvaTasaBasica": "13.2",
				"montoTotal": "157.7", "montoPagar": "157.7"},
			lines: 4,
		},
		{
			// Global adjustments by IndFactDR: basic 200.00 − 20.00 + 5.00 = 185.00 → IVA 40.70;
			// minimum 100.00 − 10 % of 100.00 = 90.00 → IVA 9.00;
			// C124 = 185 + 90 + 40.70 + 9 = 324.70.
			name: "global discounts and surcharges per indicator",
			cfe: doc(EFactura, 0, []Item{line(3, "1", "200"), line(2, "1", "100")},
				global("D", 1, "20", 3), global("D", 2, "10", 2), global("R", 1, "5", 3)),
			want: map[string]string{"montoNetoIvaTasaMinima": "90", "montoNetoIvaTasaBasica": "185",
				"tasaIvaMinima": "10", "tasaIvaBasica": "22", "montoIvaTasaMinima": "9", "montoIvaTasaBasica": "40.7",
				"montoTotal": "324.7", "montoPagar": "324.7"},
			lines: 2,
		},
		{
			// Non-billable lines: C129 = (50.00 − 5.00 global discount on 6) − 20.00 = 25.00;
			// the free delivery (5) adds nothing. C124 = 100 + 22 = 122.00;
			// C130 = C124 + C129 = 147.00.
			name: "non-billable lines 6 and 7, free delivery 5",
			cfe: doc(ETicket, 0, []Item{line(3, "1", "100"), line(6, "1", "50"), line(7, "1", "20"), line(5, "1", "0")},
				global("D", 1, "5", 6)),
			want: map[string]string{"montoNetoIvaTasaBasica": "100", "tasaIvaBasica": "22", "montoIvaTasaBasica": "22",
				"montoTotal": "122", "montoNoFacturable": "25", "montoPagar": "147"},
			lines: 4,
		},
		{
			// Export: 10 × 15.50 = 155.00; 3 × 14.333333 = 42.999999 → 43.00;
			// a global discount given as 10 % carries its amount, 19.80, in
			// ValorDR (D-C6), which C113 subtracts: 198.00 − 19.80 = 178.20 = C124;
			// non-billable 12.00; C130 = 178.20 + 12.00 = 190.20.
			name: "e-Factura de Exportación",
			cfe: doc(EFacturaExp, 0, []Item{line(10, "10", "15.5"), line(10, "3", "14.333333"), line(6, "1", "12")},
				global("D", 2, "19.8", 10)),
			want:  map[string]string{"montoExportacion": "178.2", "montoTotal": "178.2", "montoNoFacturable": "12", "montoPagar": "190.2"},
			lines: 3,
		},
		{
			// e-Remito: totals are the line count only.
			name:  "e-Remito",
			cfe:   CFE{IdDoc: IdDoc{TipoCFE: ERemito}, Items: []Item{{NomItem: "a", Cantidad: dec("2")}, {NomItem: "b", Cantidad: dec("1")}, {NomItem: "c", Cantidad: dec("5")}}},
			want:  map[string]string{},
			lines: 3,
		},
		{
			// e-Remito de Exportación: C113 = Σ lines − Σ lines with IndFact 8
			// = 2 × 100.00 − 1 × 50.00 = 150.00 = C124 (no C129, no C130).
			name:  "e-Remito de Exportación with a deduction line",
			cfe:   doc(ERemitoExp, 0, []Item{line(0, "2", "100"), line(8, "1", "50"), line(5, "1", "0")}),
			want:  map[string]string{"montoExportacion": "150", "montoTotal": "150"},
			lines: 3,
		},
		{
			// e-Resguardo: per code, Σ values − Σ values of lines with IndFact 9:
			// 2183211: 100.00 + 50.00 − 20.00 = 130.00 → C125; 2181410 (fiscal credit) 30.00 → C125.1.
			name: "e-Resguardo with retention and fiscal-credit codes",
			cfe: CFE{IdDoc: IdDoc{TipoCFE: EResguardo}, Totales: Totales{TpoMoneda: "UYU"}, Items: []Item{
				{RetencPercep: []ItemRetPerc{{CodRet: "2183211", ValRetPerc: dec("100")}, {CodRet: "2181410", ValRetPerc: dec("30")}}},
				{RetencPercep: []ItemRetPerc{{CodRet: "2183211", ValRetPerc: dec("50")}}},
				{IndFact: 9, RetencPercep: []ItemRetPerc{{CodRet: "2183211", ValRetPerc: dec("20")}}},
			}},
			want:  map[string]string{"montoRetenido": "130", "montoCreditoFiscal": "30"},
			lines: 3,
			ret:   []RetPerc{{"2183211", dec("130")}, {"2181410", dec("30")}},
		},
		{
			// e-Ticket with a perception (added to C130) and a fiscal credit (not added):
			// basic 1000.00 + 100.00 = 1100.00 → IVA 242.00 → C124 1342.00;
			// C130 = 1342.00 + 15.00 = 1357.00.
			name: "perception and fiscal credit on an e-Ticket",
			cfe: doc(ETicket, 0, []Item{
				line(3, "1", "1000", retention("2183213", "15")),
				line(3, "1", "100", retention("2181410", "3")),
			}),
			want: map[string]string{"montoNetoIvaTasaBasica": "1100", "tasaIvaBasica": "22", "montoIvaTasaBasica": "242",
				"montoTotal": "1342", "montoRetenido": "15", "montoCreditoFiscal": "3", "montoPagar": "1357"},
			lines: 2,
			ret:   []RetPerc{{"2183213", dec("15")}, {"2181410", dec("3")}},
		},
		{
			// e-Boleta, lines with IMEBA included (MntBruto 2): C112 = 10 × 100.00 − 50.00 = 950.00;
			// C115 = 200.00; C124 = 1150.00; C130 = C124 − C125 + C129 = 1150.00 − 4.00 = 1146.00.
			name: "e-Boleta with IMEBA included",
			cfe: doc(EBoleta, 2, []Item{line(15, "10", "100", retention("2142111", "4")), line(12, "1", "200")},
				global("D", 1, "50", 15)),
			want: map[string]string{"montoNoGravado": "950", "montoIvaSuspenso": "200", "montoTotal": "1150",
				"montoRetenido": "4", "montoPagar": "1146"},
			lines: 2,
			ret:   []RetPerc{{"2142111", dec("4")}},
		},
		{
			// The same e-Boleta without MntBruto 2: C130 = 1150.00 + 4.00 = 1154.00.
			name: "e-Boleta, retention added",
			cfe: doc(EBoleta, 0, []Item{line(15, "10", "100", retention("2142111", "4")), line(12, "1", "200")},
				global("D", 1, "50", 15)),
			want: map[string]string{"montoNoGravado": "950", "montoIvaSuspenso": "200", "montoTotal": "1150",
				"montoRetenido": "4", "montoPagar": "1154"},
			lines: 2,
			ret:   []RetPerc{{"2142111", dec("4")}},
		},
		{
			// Half-cent cases round away from zero (banker's rounding would differ):
			// 3 × 0.335 = 1.005 → 1.01; 12.25 % of 10.00 = 1.225 → 1.23, line 8.77;
			// 1.75 (basic) → basic 1.01 + 8.77 + 1.75 = 11.53, IVA 2.5366 → 2.54;
			// 0.45 (minimum) → IVA 0.045 → 0.05. C124 = 11.53 + 0.45 + 2.54 + 0.05 = 14.57.
			name: "rounding of x.xx5",
			cfe: doc(ETicket, 0, []Item{
				line(3, "3", "0.335"),
				line(3, "1", "10", discountPct("12.25")),
				line(3, "1", "1.75"),
				line(2, "1", "0.45"),
			}),
			want: map[string]string{"montoNetoIvaTasaMinima": "0.45", "montoNetoIvaTasaBasica": "11.53",
				"tasaIvaMinima": "10", "tasaIvaBasica": "22", "montoIvaTasaMinima": "0.05", "montoIvaTasaBasica": "2.54",
				"montoTotal": "14.57", "montoPagar": "14.57"},
			lines: 4,
		},
		{
			// IVA of a single x.xx5: 1.75 × 22 % = 0.385 → 0.39 (half-even would give 0.38).
			name: "IVA of exactly half a cent",
			cfe:  doc(ETicket, 0, []Item{line(3, "1", "1.75")}),
			want: map[string]string{"montoNetoIvaTasaBasica": "1.75", "tasaIvaBasica": "22", "montoIvaTasaBasica": "0.39",
				"montoTotal": "2.14", "montoPagar": "2.14"},
			lines: 1,
		},
		{
			// Exempt, perceived tax, IVA en suspenso, export and IVA-mínimo seller buckets:
			// C112 = 10.00 (1) + 20.00 (16) = 30.00; C113 40.00; C114 5.00; C115 7.00;
			// other rate 100.00 with its IVA given (9.00); C124 = 30 + 40 + 5 + 7 + 100 + 9 = 191.00.
			name: "every domestic bucket",
			cfe: func() CFE {
				c := doc(EFactura, 0, []Item{line(1, "1", "10"), line(16, "1", "20"), line(10, "1", "40"),
					line(11, "1", "5"), line(12, "1", "7"), line(4, "1", "100")})
				c.Totales.MntIVAOtra = decp("9")
				return c
			}(),
			want: map[string]string{"montoNoGravado": "30", "montoExportacion": "40", "montoImpuestoPercibido": "5",
				"montoIvaSuspenso": "7", "montoNetoIvaOtraTasa": "100", "montoIvaOtraTasa": "9", "montoTotal": "191", "montoPagar": "191"},
			lines: 6,
		},
		{
			// Own collection cancelled (IndFact 7 only): C129 = −300.00 and C130 = 0 + 0 − 300.00.
			name: "negative amount to pay",
			cfe: func() CFE {
				c := doc(ETicket, 0, []Item{line(7, "1", "300")})
				c.IdDoc.IndCobPropia = 1
				return c
			}(),
			want:  map[string]string{"montoTotal": "0", "montoNoFacturable": "-300", "montoPagar": "-300"},
			lines: 1,
		},
	}
	names := map[string]bool{}
	for _, f := range totalFields {
		names[f.json] = true
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ComputeTotals(&tt.cfe, DefaultTaxConfig())
			if err != nil {
				t.Fatal(err)
			}
			for k := range tt.want {
				if !names[k] {
					t.Fatalf("test names an unknown total %q", k)
				}
			}
			for _, f := range totalFields {
				g := f.get(&got)
				w, want := tt.want[f.json]
				switch {
				case !want && g != nil:
					t.Errorf("%s = %s, want it absent", f.json, g)
				case want && g == nil:
					t.Errorf("%s absent, want %s", f.json, w)
				case want && !g.Equal(dec(w)):
					t.Errorf("%s = %s, want %s", f.json, g, w)
				}
			}
			if got.CantLinDet != tt.lines {
				t.Errorf("CantLinDet = %d, want %d", got.CantLinDet, tt.lines)
			}
			if !sameRetentions(got.RetencPercep, tt.ret) {
				t.Errorf("RetencPercep = %v, want %v", got.RetencPercep, tt.ret)
			}
		})
	}
}

func TestComputeTotals_currencyIsCarried(t *testing.T) {
	t.Parallel()
	c := doc(EFacturaExp, 0, []Item{line(10, "1", "10")})
	c.Totales = Totales{TpoMoneda: "USD", TpoCambio: decp("40.125")}
	got, err := ComputeTotals(&c, DefaultTaxConfig())
	if err != nil {
		t.Fatal(err)
	}
	if got.TpoMoneda != "USD" || got.TpoCambio == nil || !got.TpoCambio.Equal(dec("40.125")) {
		t.Fatalf("currency %q rate %v, want USD 40.125", got.TpoMoneda, got.TpoCambio)
	}
}

func TestComputeTotals_configuredRates(t *testing.T) {
	t.Parallel()
	// A 20 % basic rate from configuration: 100.00 → IVA 20.00.
	tax := DefaultTaxConfig()
	tax.IVATasaBasica = decimal.NewFromInt(20)
	c := doc(ETicket, 0, []Item{line(3, "1", "100")})
	got, err := ComputeTotals(&c, tax)
	if err != nil {
		t.Fatal(err)
	}
	if !got.MntIVATasaBasica.Equal(dec("20")) || !got.IVATasaBasica.Equal(dec("20")) {
		t.Fatalf("IVA %s at %s %%, want 20 at 20 %%", got.MntIVATasaBasica, got.IVATasaBasica)
	}
	if _, err := ComputeTotals(&c, TaxConfig{}); ErrorCode(err) != EINTERNAL {
		t.Fatalf("zero rates: %v, want EINTERNAL", err)
	}
}

func TestComputeTotals_rejectsWhatItCannotTotal(t *testing.T) {
	t.Parallel()
	c := doc(ETicket, 0, []Item{line(3, "1", "10"), line(13, "1", "10"), line(4, "1", "10")},
		global("D", 1, "1", 9))
	_, err := ComputeTotals(&c, DefaultTaxConfig())
	wantField(t, err, "cfe.detalles[1].indicadorFacturacion", "solo se admite en e-Boleta")
	wantField(t, err, "cfe.descuentosRecargosGlobales[0].indicadorFacturacion", "solo se admite en e-Resguardo")
	wantField(t, err, "cfe.totales.montoIvaOtraTasa", "obligatorio")
}

// TestGlobalPercentAmount checks the amount a global percentage gives
// (TpoDR 2): round(Σ B-C24 of the lines of its indicator × pct / 100).
func TestGlobalPercentAmount(t *testing.T) {
	t.Parallel()
	items := []Item{
		line(3, "1", "200"), line(3, "3", "14.333333"), // 200.00 + 43.00 = 243.00 basic
		line(2, "1", "99.99"),                 // minimum
		line(5, "1", "0"),                     // free delivery: amount 0
		line(3, "1", "10", discountPct("50")), // 10.00 − 5.00 = 5.00 basic
	}
	tests := []struct {
		ind       int
		pct, want string
	}{
		{3, "10", "24.8"},      // 248.00 × 10 % = 24.80
		{3, "12.5", "31"},      // 248.00 × 12.5 % = 31.00
		{3, "0.125", "0.31"},   // 248.00 × 0.125 % = 0.31
		{2, "7.5", "7.5"},      // 99.99 × 7.5 % = 7.49925 → 7.50
		{2, "33.333", "33.33"}, // 99.99 × 33.333 % = 33.3296… → 33.33
		{1, "10", "0"},         // no exempt lines
		{5, "10", "0"},         // free deliveries add nothing
		{3, "100", "248"},      // all of it
		{2, "0.005", "0"},      // 0.0049995 → 0.00
		{2, "0.0051", "0.01"},  // 0.00509949 → 0.01
	}
	for _, tt := range tests {
		got := globalPercentAmount(items, tt.ind, dec(tt.pct))
		if !got.Equal(dec(tt.want)) {
			t.Errorf("%s %% of indicator %d = %s, want %s", tt.pct, tt.ind, got, tt.want)
		}
	}
}

// TestRequest_ToCFE_globalPercent maps a request with global adjustments in
// percent: ValorDR carries the amount, TpoDR stays 2, and the totals subtract
// ValorDR as DGI's formulas do (C116, C117 = Σ B-C24 ∓ Σ D-C6).
func TestRequest_ToCFE_globalPercent(t *testing.T) {
	t.Parallel()
	r := validRequest(EFactura)
	r.CFE.Detalles = []RequestDetalle{
		{IndicadorFacturacion: indTasaBasica, NombreItem: "Yerba", Cantidad: decp("3"), PrecioUnitario: decp("66.66")}, // 199.98
		{IndicadorFacturacion: indTasaMin, NombreItem: "Pan", Cantidad: decp("1"), PrecioUnitario: decp("45.55")},      // 45.55
	}
	r.CFE.DescuentosRecargosGlobales = []RequestGlobalAdjust{
		{TipoMovimiento: "D", Tipo: 2, Glosa: "Pago contado", Valor: dec("7.5"), IndicadorFacturacion: indTasaBasica},
		{TipoMovimiento: "R", Tipo: 2, Glosa: "Envío", Valor: dec("5"), IndicadorFacturacion: indTasaMin},
		{TipoMovimiento: "D", Tipo: 1, Glosa: "Cupón", Valor: dec("2"), IndicadorFacturacion: indTasaBasica},
	}
	c, err := issue(r)
	if err != nil {
		t.Fatalf("%v\n%s", err, describeFields(ErrorFields(err)))
	}
	// 199.98 × 7.5 % = 14.9985 → 15.00; 45.55 × 5 % = 2.2775 → 2.28.
	for i, want := range []string{"15", "2.28", "2"} {
		if g := c.DscRcgGlobal[i]; !g.ValorDR.Equal(dec(want)) || g.TpoDR != r.CFE.DescuentosRecargosGlobales[i].Tipo {
			t.Errorf("DRG_Item %d: TpoDR %d ValorDR %s, want TpoDR %d ValorDR %s", i+1, g.TpoDR, g.ValorDR,
				r.CFE.DescuentosRecargosGlobales[i].Tipo, want)
		}
	}
	// C117 = 199.98 − 15.00 − 2.00 = 182.98 → C122 = 40.2556 → 40.26;
	// C116 = 45.55 + 2.28 = 47.83 → C121 = 4.783 → 4.78;
	// C124 = 182.98 + 47.83 + 40.26 + 4.78 = 275.85.
	tot := c.Totales
	for name, got := range map[string]*decimal.Decimal{"C117": tot.MntNetoIVATasaBasica, "C116": tot.MntNetoIvaTasaMin,
		"C122": tot.MntIVATasaBasica, "C121": tot.MntIVATasaMin, "C124": tot.MntTotal} {
		want := map[string]string{"C117": "182.98", "C116": "47.83", "C122": "40.26", "C121": "4.78", "C124": "275.85"}[name]
		if got == nil || !got.Equal(dec(want)) {
			t.Errorf("%s = %v, want %s", name, got, want)
		}
	}
	// The XML carries the amount.
	c.IdDoc.Serie, c.IdDoc.Nro = "A", 1
	c.CAEData = CAEData{CAEID: "90269999990", DNro: 1, HNro: 100, FecVenc: Date{2027, 12, 31}}
	x, err := MarshalXML(c)
	if err != nil {
		t.Fatal(err)
	}
	want := regexp.MustCompile(`<TpoDR>2</TpoDR>(<CodDR>\d+</CodDR>)?<GlosaDR>Pago contado</GlosaDR><ValorDR>15(\.0{1,2})?</ValorDR>`)
	if !want.Match(x) {
		t.Errorf("the XML does not carry ValorDR 15.00 with TpoDR 2:\n%s", x)
	}
}

func TestRequest_ToCFE_globalPercentRejected(t *testing.T) {
	t.Parallel()
	for _, pct := range []string{"0", "-5", "1000", "12.3456"} {
		r := validRequest(ETicket)
		r.CFE.DescuentosRecargosGlobales = []RequestGlobalAdjust{
			{TipoMovimiento: "D", Tipo: 2, Glosa: "x", Valor: dec(pct), IndicadorFacturacion: indTasaBasica}}
		_, err := r.ToCFE(testParams())
		wantField(t, err, "cfe.descuentosRecargosGlobales[0].valor", "")
	}
}
