package store_test

import (
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/store"
)

func TestDB_MarkUsedElsewhere(t *testing.T) {
	t.Parallel()
	db, path := openStore(t, store.Options{})
	putRanges(t, db, newRange(cfe.ETicket, "A", 1, 100, farAway))
	if err := db.MarkUsedElsewhere(ctx, cfe.ETicket, "A", 40, "  sistema anterior  "); err != nil {
		t.Fatal(err)
	}
	if got := issue(t, db, cfe.ETicket, "first-here"); got.Nro != 41 {
		t.Fatalf("first number after marking 1-40 as used elsewhere = %d, want 41", got.Nro)
	}
	st, err := db.RangeStatus(ctx, today)
	if err != nil {
		t.Fatal(err)
	}
	if s := st[0]; s.Used != 1 || s.Remaining != 59 || s.Skipped != 40 {
		t.Errorf("range status: used %d, remaining %d, skipped %d; want 1, 59, 40", s.Used, s.Remaining, s.Skipped)
	}
	evs, err := db.AuditEvents(ctx, 1, 10)
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, ev := range evs {
		if ev.Kind == store.AuditUsedElsewhere {
			found = ev.Type == cfe.ETicket && ev.Serie == "A" && ev.Nro == 40 &&
				ev.Detail == "numbers 1-40 used elsewhere: sistema anterior"
			if !found {
				t.Errorf("audit event = %+v", ev)
			}
		}
	}
	if !found {
		t.Errorf("no %s audit event in %+v", store.AuditUsedElsewhere, evs)
	}
	db.Close()

	db, err = store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkAtEnd(t, db, path)
	defer db.Close()
	if got := issue(t, db, cfe.ETicket, "after-reopen"); got.Nro != 42 {
		t.Errorf("number after reopening = %d, want 42", got.Nro)
	}
}

func TestDB_MarkUsedElsewhere_WholeRange(t *testing.T) {
	t.Parallel()
	db, _ := openStore(t, store.Options{})
	putRanges(t, db, newRange(cfe.ETicket, "A", 1, 100, farAway), newRange(cfe.ETicket, "A", 101, 200, farAway))
	if err := db.MarkUsedElsewhere(ctx, cfe.ETicket, "A", 100, "otra caja"); err != nil {
		t.Fatal(err)
	}
	if got := issue(t, db, cfe.ETicket, "next-range"); got.Nro != 101 {
		t.Errorf("number after the first range was used elsewhere = %d, want 101", got.Nro)
	}
}

func TestDB_MarkUsedElsewhere_Refused(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		setup  func(t *testing.T, db *store.DB)
		typ    cfe.Type
		upTo   int64
		reason string
		code   string
		want   string // in the message
		next   int64  // the next number afterwards: nothing changed
	}{
		{name: "no reason", typ: cfe.ETicket, upTo: 10, code: cfe.EINVALID, want: "motivo", next: 1},
		{name: "unknown type", typ: 999, upTo: 10, reason: "x", code: cfe.EINVALID, want: "tipo", next: 1},
		{name: "outside every range", typ: cfe.ETicket, upTo: 101, reason: "x", code: cfe.EINVALID,
			want: "no pertenece a ningún rango", next: 1},
		{name: "other type's range", typ: cfe.EFactura, upTo: 10, reason: "x", code: cfe.EINVALID,
			want: "no pertenece a ningún rango", next: 1},
		{name: "not beyond the last used", typ: cfe.ETicket, upTo: 20, reason: "x", code: cfe.EINVALID,
			setup: func(t *testing.T, db *store.DB) {
				if err := db.MarkUsedElsewhere(ctx, cfe.ETicket, "A", 30, "antes"); err != nil {
					t.Fatal(err)
				}
			}, want: "ya es 30", next: 31},
		{name: "the agent already signed in the range", typ: cfe.ETicket, upTo: 50, reason: "x", code: cfe.ECONFLICT,
			setup: func(t *testing.T, db *store.DB) { issue(t, db, cfe.ETicket, "signed-here") },
			want:  "ya firmó 1 comprobante en el rango", next: 2},
		{name: "a CFE of the serie is being signed", typ: cfe.ETicket, upTo: 50, reason: "x", code: cfe.EUNAVAILABLE,
			setup: func(t *testing.T, db *store.DB) {
				r := reserve(t, db, cfe.ETicket)
				t.Cleanup(func() { db.Release(r) })
			}, want: "firmándose", next: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			db, _ := openStore(t, store.Options{})
			putRanges(t, db, newRange(cfe.ETicket, "A", 1, 100, farAway))
			if tc.setup != nil {
				tc.setup(t, db)
			}
			ce := wantCode(t, db.MarkUsedElsewhere(ctx, tc.typ, "A", tc.upTo, tc.reason), tc.code)
			if !strings.Contains(ce.Message, tc.want) {
				t.Errorf("message %q does not say %q", ce.Message, tc.want)
			}
			r := reserve(t, db, cfe.ETicket)
			defer db.Release(r)
			if r.Nro != tc.next {
				t.Errorf("next number after the refusal = %d, want %d", r.Nro, tc.next)
			}
		})
	}
}
