package app

import (
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/shopspring/decimal"
)

// TestCloseOf_CorrectedCountedOnce: a receipt superseded by its corrected
// resend (a keyed-in contingency receipt DGI observed: CorrectedBy) is not
// counted in the day's close; its correction is, once.
func TestCloseOf_CorrectedCountedOnce(t *testing.T) {
	t.Parallel()
	a := newTestAgent(t, nil)
	first := sign(t, a, "cierre-1", 100).Issued
	observed := *sign(t, a, "cierre-2", 250).Issued
	correction := observed
	observed.CorrectedBy, correction.UUID, correction.Corrects = "cierre-2-corregido", "cierre-2-corregido", observed.UUID
	day := cfe.DateOf(first.TmstFirma.In(cfe.Montevideo))

	c := closeOf(day, []*cfe.Issued{first, &observed, &correction})
	if c.Cantidad != 2 || len(c.Cajas) != 1 || c.Cajas[0].Cantidad != 2 {
		t.Fatalf("the close counts %d receipts (%+v), want 2: the superseded one left out", c.Cantidad, c.Cajas)
	}
	if len(c.Totales) != 1 || !c.Totales[0].Total.Equal(decimal.RequireFromString("350")) {
		t.Fatalf("the close's totals %+v, want 350 (100 + 250 once)", c.Totales)
	}
	if all := closeOf(day, []*cfe.Issued{first, &correction}); all.Cantidad != 2 || !all.Totales[0].Total.Equal(c.Totales[0].Total) {
		t.Fatalf("without the superseded receipt the close differs: %+v", all)
	}
}
