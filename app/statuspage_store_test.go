package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/store"
)

// salesStore is a real store in a temporary folder with ranges for the
// types the tests sign.
func salesStore(t *testing.T, day cfe.Date) *store.DB {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "agent.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	for _, typ := range []cfe.Type{cfe.ETicket, cfe.ETicketNC, cfe.ERemito} {
		r := cfe.CAERange{RUC: "219999830019", Type: typ, Serie: "A", DNro: 1, HNro: 1000, CAEID: "90260012345",
			Autorizado: cfe.Date{Year: 2025, Month: time.January, Day: 2}, Vencimiento: day.AddDays(365), Source: "manual"}
		if err := db.PutRange(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

// commitSale stores a signed CFE of type typ, in currency, for total, signed
// at at.
func commitSale(t *testing.T, db *store.DB, day cfe.Date, typ cfe.Type, uuid, currency, total string, at time.Time) {
	t.Helper()
	ctx := context.Background()
	r, err := db.Reserve(ctx, typ, day)
	if err != nil {
		t.Fatal(err)
	}
	xml := fmt.Sprintf(`<CFE version="1.0" xmlns="http://cfe.dgi.gub.uy"><eTck><Encabezado><IdDoc><TipoCFE>%d</TipoCFE>`+
		`<Serie>A</Serie><Nro>%d</Nro></IdDoc><Totales><TpoMoneda>%s</TpoMoneda></Totales></Encabezado></eTck></CFE>`, int(typ), r.Nro, currency)
	sum := sha256.Sum256([]byte(uuid))
	doc := &cfe.Issued{UUID: uuid, Type: typ, Serie: r.Serie, Nro: r.Nro, RangeID: r.Range.ID, CAE: r.Range.CAEData(),
		TmstFirma: at, XML: []byte(xml), CodSeguridad: "a1B2c3", DatosQR: "https://www.efactura.dgi.gub.uy/consultaQR/cfe?" + uuid,
		Total: decimal.RequireFromString(total), RequestHash: hex.EncodeToString(sum[:])}
	if err := db.Commit(ctx, r, doc); err != nil {
		t.Fatal(err)
	}
}

func TestSalesCache_today(t *testing.T) {
	t.Parallel()
	day := cfe.Date{Year: 2026, Month: time.November, Day: 24}
	at := func(h, m int) time.Time { return time.Date(2026, time.November, 24, h, m, 0, 0, cfe.Montevideo) }
	db := salesStore(t, day)
	commitSale(t, db, day, cfe.ETicket, "u-yesterday", "USD", "99", at(10, 0).AddDate(0, 0, -1))
	commitSale(t, db, day, cfe.ETicket, "u-1", "UYU", "1470", at(9, 15))
	commitSale(t, db, day, cfe.ETicket, "u-2", "UYU", "530.50", at(9, 59))
	commitSale(t, db, day, cfe.ETicketNC, "u-3", "UYU", "200", at(14, 5))
	commitSale(t, db, day, cfe.ETicket, "u-4", "USD", "152.50", at(14, 10))
	commitSale(t, db, day, cfe.ERemito, "u-5", "UYU", "5000", at(15, 0))

	var c salesCache
	s, err := c.today(context.Background(), db, day)
	if err != nil {
		t.Fatal(err)
	}
	if s.count != 5 || s.sold != 3 || !s.total.Equal(decimal.RequireFromString("1800.50")) {
		t.Errorf("read %d, sold %d, total %s; want 5, 3, 1800.50 (the remito and the dollars apart)", s.count, s.sold, s.total)
	}
	if !s.hours[9].Equal(decimal.RequireFromString("2000.50")) || s.receipts[9] != 2 ||
		!s.hours[14].Equal(decimal.RequireFromString("-200")) || !s.hours[15].IsZero() {
		t.Errorf("hours 9 %s (%d), 14 %s, 15 %s", s.hours[9], s.receipts[9], s.hours[14], s.hours[15])
	}
	if got := s.others["USD"]; !got.Equal(decimal.RequireFromString("152.50")) || len(s.others) != 1 {
		t.Errorf("other currencies %v, want USD 152.50 only (yesterday's dollars are not today's)", s.others)
	}
	if s.currency["u-4"] != "USD" || s.currency["u-1"] != "UYU" || s.currency["u-5"] != "UYU" {
		t.Errorf("currencies %v", s.currency)
	}
	// The same count: the same answer, not read again; one more sale: read again.
	if again, _ := c.today(context.Background(), db, day); again != s {
		t.Error("an unchanged day was read again")
	}
	commitSale(t, db, day, cfe.ETicket, "u-6", "UYU", "100", at(16, 30))
	again, err := c.today(context.Background(), db, day)
	if err != nil || again == s || again.sold != 4 || !again.hours[16].Equal(decimal.NewFromInt(100)) {
		t.Errorf("after one more sale: sold %d, 16 h %s (%v)", again.sold, again.hours[16], err)
	}

	// A receipt of another day: its currency from the store, once.
	h := &statusPage{}
	if got := h.currencyOf(context.Background(), db, "u-yesterday"); got != "USD" {
		t.Errorf("currency of yesterday's receipt %q, want USD", got)
	}
	if got := h.currencyOf(context.Background(), db, "no-such-uuid"); got != "" {
		t.Errorf("currency of an unknown receipt %q, want none", got)
	}
	if h.currencies["u-yesterday"] != "USD" {
		t.Error("the currency was not remembered")
	}
}
