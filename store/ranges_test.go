package store_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/store"
)

func TestDB_PutRange_RejectsInvalid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		edit  func(*cfe.CAERange)
		field string
	}{
		{"no RUC", func(r *cfe.CAERange) { r.RUC = "" }, "RucE"},
		{"unknown type", func(r *cfe.CAERange) { r.Type = 100 }, "TCFE"},
		{"lower-case serie", func(r *cfe.CAERange) { r.Serie = "a" }, "Serie"},
		{"serie of three letters", func(r *cfe.CAERange) { r.Serie = "ABC" }, "Serie"},
		{"serie starting with 0", func(r *cfe.CAERange) { r.Serie = "0A" }, "Serie"},
		{"no serie", func(r *cfe.CAERange) { r.Serie = "" }, "Serie"},
		{"first number 0", func(r *cfe.CAERange) { r.DNro = 0 }, "DNro"},
		{"last number of 8 digits", func(r *cfe.CAERange) { r.HNro = 10_000_000 }, "HNro"},
		{"last below first", func(r *cfe.CAERange) { r.DNro, r.HNro = 50, 49 }, "HNro"},
		{"CAE number with letters", func(r *cfe.CAERange) { r.CAEID = "9026A012345" }, "NA"},
		{"CAE number of 12 digits", func(r *cfe.CAERange) { r.CAEID = "902600123456" }, "NA"},
		{"no authorization date", func(r *cfe.CAERange) { r.Autorizado = cfe.Date{} }, "FA"},
		{"no expiry date", func(r *cfe.CAERange) { r.Vencimiento = cfe.Date{} }, "FVD"},
		{"expires before it was authorized", func(r *cfe.CAERange) { r.Vencimiento = r.Autorizado.AddDays(-1) }, "FVD"},
		{"exonerated without reason", func(r *cfe.CAERange) { r.CAEEspecial = 1 }, "CausalCAEEsp"},
		{"ID of another range", func(r *cfe.CAERange) { r.ID = "101-A-2" }, "ID"},
	}
	db, _ := openStore(t, store.Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRange(cfe.ETicket, "A", 1, 100, farAway)
			tt.edit(&r)
			ce := wantCode(t, db.PutRange(ctx, r), cfe.EINVALID)
			if len(ce.Fields) != 1 || ce.Fields[0].Campo != tt.field {
				t.Errorf("fields = %+v, want one on %s", ce.Fields, tt.field)
			}
		})
	}
	// Nothing was stored or audited.
	if rs, err := db.Ranges(ctx); err != nil || len(rs) != 0 {
		t.Errorf("ranges after refusals = %v, %v", rs, err)
	}
	if evs, err := db.AuditEvents(ctx, 1, 10); err != nil || len(evs) != 0 {
		t.Errorf("audit after refusals = %v, %v", evs, err)
	}
}

func TestDB_PutRange_Conflicts(t *testing.T) {
	t.Parallel()
	db, _ := openStore(t, store.Options{})
	base := newRange(cfe.ETicket, "A", 100, 199, farAway)
	putRanges(t, db, base)
	tests := []struct {
		name string
		r    cfe.CAERange
		code string // "" when accepted
	}{
		{"the same range again", base, cfe.ECONFLICT},
		{"overlapping its start", newRange(cfe.ETicket, "A", 50, 100, farAway), cfe.ECONFLICT},
		{"overlapping its end", newRange(cfe.ETicket, "A", 199, 300, farAway), cfe.ECONFLICT},
		{"inside it", newRange(cfe.ETicket, "A", 120, 130, farAway), cfe.ECONFLICT},
		{"around it", newRange(cfe.ETicket, "A", 1, 500, farAway), cfe.ECONFLICT},
		{"right after it", newRange(cfe.ETicket, "A", 200, 299, farAway), ""},
		{"right before it", newRange(cfe.ETicket, "A", 1, 99, farAway), ""},
		{"same numbers, another serie", newRange(cfe.ETicket, "B", 100, 199, farAway), ""},
		{"same numbers, another type", newRange(cfe.ETicketNC, "A", 100, 199, farAway), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := db.PutRange(ctx, tt.r)
			if tt.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			wantCode(t, err, tt.code)
		})
	}
	rs, err := db.Ranges(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range rs {
		ids = append(ids, r.ID)
	}
	if want := "[101-A-1 101-A-100 101-A-200 101-B-100 102-A-100]"; fmt.Sprint(ids) != want {
		t.Errorf("ranges = %v, want %s", ids, want)
	}
}

func TestDB_RangeStatus(t *testing.T) {
	t.Parallel()
	db, path := openStore(t, store.Options{})
	putRanges(t, db,
		newRange(cfe.ETicket, "A", 1, 10, farAway),           // 9 of 10 used
		newRange(cfe.ETicket, "B", 1, 10, today.AddDays(-1)), // expired with 3 used
		newRange(cfe.EFactura, "A", 1, 10, today.AddDays(30)),
		newRange(cfe.EFactura, "B", 1, 10, today.AddDays(31)),
	)
	// Five days ago, 101-B expired first, so it was used; it expired
	// yesterday.
	past := today.AddDays(-5)
	for i := range 3 {
		r, err := db.Reserve(ctx, cfe.ETicket, past)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Commit(ctx, r, issuedFor(r, fmt.Sprint("past-", i), signAt.AddDate(0, 0, -5))); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 9 {
		issue(t, db, cfe.ETicket, fmt.Sprint("now-", i))
	}

	// 2026-03-10 to 2027-12-31: 365 days to 2027-03-10, then 21 (rest of
	// March) + 30+31+30+31+31+30+31+30+31 = 296.
	const daysToFarAway = 365 + 296
	want := map[string]cfe.RangeUse{
		"101-A-1": {Used: 9, Remaining: 1, Skipped: 0, DaysLeft: daysToFarAway, NearlyUsedUp: true},
		"101-B-1": {Used: 3, Remaining: 0, Skipped: 7, DaysLeft: -1, Expired: true},
		"111-A-1": {Used: 0, Remaining: 10, DaysLeft: 30, NearExpiry: true},
		"111-B-1": {Used: 0, Remaining: 10, DaysLeft: 31},
	}
	checkStatus(t, db, want)

	// Thresholds are options: 95% and 31 days.
	db.Close()
	db, err := store.Open(path, store.Options{NearlyUsedUpPercent: 95, NearExpiryDays: 31})
	if err != nil {
		t.Fatal(err)
	}
	checkAtEnd(t, db, path)
	defer db.Close()
	want["101-A-1"] = cfe.RangeUse{Used: 9, Remaining: 1, DaysLeft: daysToFarAway}
	want["111-B-1"] = cfe.RangeUse{Remaining: 10, DaysLeft: 31, NearExpiry: true}
	checkStatus(t, db, want)
}

func checkStatus(t *testing.T, db *store.DB, want map[string]cfe.RangeUse) {
	t.Helper()
	got, err := db.RangeStatus(ctx, today)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d statuses, want %d", len(got), len(want))
	}
	for _, st := range got {
		w := want[st.Range.ID]
		if st.Used != w.Used || st.Remaining != w.Remaining || st.Skipped != w.Skipped || st.Expired != w.Expired ||
			st.DaysLeft != w.DaysLeft || st.NearlyUsedUp != w.NearlyUsedUp || st.NearExpiry != w.NearExpiry {
			id := st.Range.ID
			st.Range = cfe.CAERange{}
			t.Errorf("%s: status %+v\nwant %+v", id, st, w)
		}
	}
}

func TestDB_RangeStatus_BadDate(t *testing.T) {
	t.Parallel()
	db, _ := openStore(t, store.Options{})
	_, err := db.RangeStatus(ctx, cfe.Date{})
	wantCode(t, err, cfe.EINVALID)
}

// The audit log records each imported range.
func TestDB_PutRange_Audited(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, time.March, 10, 9, 0, 0, 0, cfe.Montevideo)
	db, _ := openStore(t, store.Options{Now: func() time.Time { return at }})
	putRanges(t, db, newRange(cfe.ETicket, "A", 1, 10, farAway))
	evs, err := db.AuditEvents(ctx, 1, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 {
		t.Fatalf("%d events, want 1", len(evs))
	}
	e := evs[0]
	if e.Seq != 1 || e.Kind != store.AuditRangeImported || e.RangeID != "101-A-1" || !e.At.Equal(at) ||
		e.Detail != "numbers 1-10, CAE 90260012345, expires 2027-12-31, source manual" {
		t.Errorf("event = %+v", e)
	}
}
