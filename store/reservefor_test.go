package store_test

import (
	"errors"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/store"
)

// TestDB_ReserveFor checks that fits restricts the ranges a reservation may
// come from without ever skipping a number of a serie, and that a refusal of
// every range reserves nothing and answers fits's error.
func TestDB_ReserveFor(t *testing.T) {
	t.Parallel()
	special := func(r cfe.CAERange) cfe.CAERange { r.CAEEspecial = 2; return r }
	errOrdinary := errors.New("ordinary range")
	errSpecial := errors.New("special range")
	wantSpecial := func(r cfe.CAERange) error {
		if r.CAEEspecial != 2 {
			return errOrdinary
		}
		return nil
	}
	wantOrdinary := func(r cfe.CAERange) error {
		if r.CAEEspecial != 0 {
			return errSpecial
		}
		return nil
	}
	expires := today.AddDays(100)

	t.Run("fits picks the serie", func(t *testing.T) {
		t.Parallel()
		db, _ := openStore(t, store.Options{})
		putRanges(t, db, newRange(cfe.ETicket, "A", 1, 10, expires), special(newRange(cfe.ETicket, "B", 1, 10, expires)))
		r, err := db.ReserveFor(ctx, cfe.ETicket, today, wantSpecial)
		if err != nil || r.Serie != "B" || r.Nro != 1 {
			t.Fatalf("ReserveFor special = %+v, %v; want B-1", r, err)
		}
		o, err := db.ReserveFor(ctx, cfe.ETicket, today, wantOrdinary)
		if err != nil || o.Serie != "A" || o.Nro != 1 {
			t.Fatalf("ReserveFor ordinary = %+v, %v; want A-1", o, err)
		}
		db.Release(r)
		db.Release(o)
		if n, err := db.ReserveFor(ctx, cfe.ETicket, today, nil); err != nil || n.Serie != "A" || n.Nro != 1 {
			t.Fatalf("ReserveFor nil = %+v, %v; want A-1 as Reserve", n, err)
		}
	})

	t.Run("a refused serie is passed over, never skipped ahead", func(t *testing.T) {
		t.Parallel()
		// Serie A: an ordinary range 1-2, then a special one 3-10. The next
		// number of A is 1, in the ordinary range: a CFE that needs a special
		// CAE must not take A-3 (that would skip ).
		db, _ := openStore(t, store.Options{})
		putRanges(t, db, newRange(cfe.ETicket, "A", 1, 2, expires), special(newRange(cfe.ETicket, "A", 3, 10, expires)))
		r, err := db.ReserveFor(ctx, cfe.ETicket, today, wantSpecial)
		if !errors.Is(err, errOrdinary) || r != nil {
			t.Fatalf("ReserveFor special = %+v, %v; want fits's error", r, err)
		}
		if n := reserve(t, db, cfe.ETicket); n.Nro != 1 {
			t.Fatalf("after the refusal Reserve took A-%d, want A-1: a number was consumed", n.Nro)
		}
	})

	t.Run("every range refused: fits's error for the preferred one", func(t *testing.T) {
		t.Parallel()
		db, _ := openStore(t, store.Options{})
		// B expires first, so Reserve would take B.
		putRanges(t, db, newRange(cfe.ETicket, "A", 1, 10, expires), newRange(cfe.ETicket, "B", 1, 10, today.AddDays(5)))
		var seen []string
		_, err := db.ReserveFor(ctx, cfe.ETicket, today, func(r cfe.CAERange) error {
			seen = append(seen, r.Serie)
			return errors.New("refused " + r.Serie)
		})
		if err == nil || err.Error() != "refused B" || len(seen) != 2 {
			t.Fatalf("err %v after asking about %v; want fits's error for B after asking about both", err, seen)
		}
		if n := reserve(t, db, cfe.ETicket); n.Serie != "B" || n.Nro != 1 {
			t.Fatalf("after the refusal Reserve took %s-%d, want B-1", n.Serie, n.Nro)
		}
	})

	t.Run("no usable range: RespSinRangoCAE, fits not asked", func(t *testing.T) {
		t.Parallel()
		db, _ := openStore(t, store.Options{})
		putRanges(t, db, newRange(cfe.ETicket, "A", 1, 10, today.AddDays(-1)))
		_, err := db.ReserveFor(ctx, cfe.ETicket, today, func(cfe.CAERange) error {
			t.Fatal("fits asked about an expired range")
			return nil
		})
		if cfe.RespuestaOf(err) != cfe.RespSinRangoCAE {
			t.Fatalf("err %v, want codigo 05", err)
		}
	})
}
