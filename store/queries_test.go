package store_test

import (
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/store"
)

// datedStore holds four CFEs signed on three Montevideo days, committed out
// of signature order:
//
//	late9  2026-03-09 23:59:59 -03:00 (already March 10 in UTC)  101
//	early  2026-03-10 00:00:00 -03:00                             101
//	noon   2026-03-10 12:00:00 -03:00                             111
//	next   2026-03-11 08:00:00 -03:00                             101
func datedStore(t *testing.T) (*store.DB, map[string]*cfe.Issued) {
	t.Helper()
	db, _ := openStore(t, store.Options{})
	putRanges(t, db, newRange(cfe.ETicket, "A", 1, 100, farAway), newRange(cfe.EFactura, "A", 1, 100, farAway))
	docs := map[string]*cfe.Issued{}
	for _, c := range []struct {
		uuid string
		typ  cfe.Type
		at   time.Time
	}{
		{"noon", cfe.EFactura, time.Date(2026, 3, 10, 12, 0, 0, 0, cfe.Montevideo)},
		{"late9", cfe.ETicket, time.Date(2026, 3, 10, 2, 59, 59, 0, time.UTC)},
		{"next", cfe.ETicket, time.Date(2026, 3, 11, 8, 0, 0, 0, cfe.Montevideo)},
		{"early", cfe.ETicket, time.Date(2026, 3, 10, 0, 0, 0, 0, cfe.Montevideo)},
	} {
		r, err := db.Reserve(ctx, c.typ, cfe.DateOf(c.at.In(cfe.Montevideo)))
		if err != nil {
			t.Fatal(err)
		}
		doc := issuedFor(r, c.uuid, c.at)
		if err := db.Commit(ctx, r, doc); err != nil {
			t.Fatal(err)
		}
		docs[c.uuid] = doc
	}
	return db, docs
}

func uuids(docs []*cfe.Issued) []string {
	out := []string{}
	for _, d := range docs {
		out = append(out, d.UUID)
	}
	return out
}

func TestDB_ListByDate(t *testing.T) {
	t.Parallel()
	db, _ := datedStore(t)
	day := func(d int) cfe.Date { return cfe.Date{Year: 2026, Month: time.March, Day: d} }
	tests := []struct {
		name     string
		from, to cfe.Date
		limit    int
		want     string
	}{
		{"the day before, by Montevideo date", day(9), day(9), 10, "[late9]"},
		{"one day", day(10), day(10), 10, "[early noon]"},
		{"three days", day(9), day(11), 10, "[late9 early noon next]"},
		{"limited", day(9), day(11), 2, "[late9 early]"},
		{"a day without CFEs", day(12), day(20), 10, "[]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := db.ListByDate(ctx, tt.from, tt.to, tt.limit)
			if err != nil {
				t.Fatal(err)
			}
			if s := fmtList(uuids(got)); s != tt.want {
				t.Errorf("got %s, want %s", s, tt.want)
			}
		})
	}
	_, err := db.ListByDate(ctx, cfe.Date{}, day(10), 0)
	if ce := wantCode(t, err, cfe.EINVALID); len(ce.Fields) != 2 {
		t.Errorf("fields = %+v, want desde and limite", ce.Fields)
	}
	_, err = db.ListByDate(ctx, day(11), day(10), 1)
	if ce := wantCode(t, err, cfe.EINVALID); len(ce.Fields) != 1 || ce.Fields[0].Campo != "hasta" {
		t.Errorf("fields = %+v", ce.Fields)
	}
}

func TestDB_CountByDate(t *testing.T) {
	t.Parallel()
	db, _ := datedStore(t)
	day := func(d int) cfe.Date { return cfe.Date{Year: 2026, Month: time.March, Day: d} }
	for _, tt := range []struct {
		from, to cfe.Date
		want     int
	}{
		{day(9), day(9), 1}, {day(10), day(10), 2}, {day(9), day(11), 4}, {day(12), day(20), 0},
	} {
		got, err := db.CountByDate(ctx, tt.from, tt.to)
		if err != nil || got != tt.want {
			t.Errorf("CountByDate(%s, %s) = %d, %v; want %d", tt.from, tt.to, got, err, tt.want)
		}
	}
	if _, err := db.CountByDate(ctx, day(11), day(10)); cfe.ErrorCode(err) != cfe.EINVALID {
		t.Errorf("reversed dates: %v, want EINVALID", err)
	}
}

func fmtList(s []string) string {
	out := "["
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out + "]"
}

func TestDB_Last(t *testing.T) {
	t.Parallel()
	db, _ := datedStore(t)
	for n, want := range map[int]string{1: "[next]", 2: "[next noon]", 10: "[next noon early late9]"} {
		got, err := db.Last(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		if s := fmtList(uuids(got)); s != want {
			t.Errorf("Last(%d) = %s, want %s", n, s, want)
		}
	}
	_, err := db.Last(ctx, 0)
	wantCode(t, err, cfe.EINVALID)
}

func TestDB_Find(t *testing.T) {
	t.Parallel()
	db, docs := datedStore(t)
	got, err := db.FindByUUID(ctx, "late9")
	if err != nil {
		t.Fatal(err)
	}
	sameIssued(t, got, docs["late9"])
	if got.TmstFirma.Location() != cfe.Montevideo {
		t.Errorf("signature time comes back in %v, want Montevideo", got.TmstFirma.Location())
	}
	if got.Delivery.State != cfe.DeliveryPending {
		t.Errorf("delivery state = %q, want pending", got.Delivery.State)
	}
	// 101-A numbers in commit order: late9 1, next 2, early 3.
	got, err = db.FindByNumber(ctx, cfe.ETicket, "A", 2)
	if err != nil {
		t.Fatal(err)
	}
	sameIssued(t, got, docs["next"])

	_, err = db.FindByNumber(ctx, cfe.ETicket, "A", 4)
	wantCode(t, err, cfe.ENOTFOUND)
	_, err = db.FindByNumber(ctx, cfe.ETicket, "B", 1)
	wantCode(t, err, cfe.ENOTFOUND)
	_, err = db.FindByUUID(ctx, "nobody")
	wantCode(t, err, cfe.ENOTFOUND)
	_, err = db.FindByUUID(ctx, "")
	wantCode(t, err, cfe.EINVALID)
}
