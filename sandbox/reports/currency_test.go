package reports

import (
	"slices"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/sandbox/data"
)

// TestExports_Currency: the exports name a CFE's currency by cfe's rule, as
// the charts count it: TpoMoneda, and UYU for a CFE that names none (DGI's
// sample e-Remito). Both exports and the charts agree on each sample.
func TestExports_Currency(t *testing.T) {
	t.Parallel()
	col := slices.Index(accountingHeader, "moneda")
	excel := slices.IndexFunc(exportColumns, func(c exportColumn) bool { return c.name == "moneda" })
	if col < 0 || excel < 0 {
		t.Fatal("no moneda column in the exports")
	}
	for _, tc := range []struct {
		sample string
		typ    cfe.Type
		want   string
	}{
		{"Sob_Ej_Mod_19072016__CFE_181_A1.xml", cfe.ERemito, "UYU"}, // no TpoMoneda
		{"Sob_Ej_Mod_19072016__CFE_111_A1.xml", cfe.EFactura, "UYU"},
		{"Sob_Ej_Mod_19072016__CFE_182_A1.xml", cfe.EResguardo, "UYU"},
	} {
		t.Run(tc.sample, func(t *testing.T) {
			t.Parallel()
			signed := testtool.DGISample(t, tc.sample)
			doc, err := cfe.ParseXML(signed)
			if err != nil {
				t.Fatal(err)
			}
			row := exportRow{rec: &data.CFERecord{ID: 1, Type: tc.typ, XML: signed}, doc: doc}
			for _, line := range accountingLines(row) {
				if line[col] != tc.want {
					t.Errorf("accounting row moneda %q, want %q", line[col], tc.want)
				}
			}
			if got := exportColumns[excel].value(row); got != tc.want {
				t.Errorf("Excel moneda %v, want %q", got, tc.want)
			}
			e, err := entryOf(row.rec, "2016-07")
			if err != nil || e.currency != tc.want {
				t.Errorf("the charts count it in %q (%v), want %q", e.currency, err, tc.want)
			}
		})
	}

	// Another currency passes through unchanged.
	usd := &cfe.CFE{Totales: cfe.Totales{TpoMoneda: "USD"}}
	row := exportRow{rec: &data.CFERecord{ID: 2, Type: cfe.ETicket}, doc: usd}
	if got := exportColumns[excel].value(row); got != "USD" {
		t.Errorf("Excel moneda of a CFE in dollars: %v", got)
	}
	if got := accountingLines(row)[0][col]; got != "USD" {
		t.Errorf("accounting moneda of a CFE in dollars: %q", got)
	}
}
