package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/store"
)

func TestDB_Outbox(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, time.March, 10, 10, 0, 0, 0, cfe.Montevideo)
	now := t0
	db, path := openStore(t, store.Options{Now: func() time.Time { return now }})
	putRanges(t, db, newRange(cfe.ETicket, "A", 1, 100, farAway))
	for i, uuid := range []string{"a", "b", "c"} {
		now = t0.Add(time.Duration(i) * time.Minute)
		issue(t, db, cfe.ETicket, uuid)
	}
	now = t0.Add(time.Hour)

	pending, err := db.PendingOutbox(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if s := fmtList(uuids(pending)); s != "[a b]" {
		t.Fatalf("pending = %s, want [a b]", s)
	}
	wantStats(t, db, store.Stats{CFEs: 3, Outbox: cfe.Outbox{Pending: 3, OldestPending: t0}, OldestPendingAge: time.Hour, Ranges: 1})

	// A failed attempt keeps the CFE pending.
	attempt := t0.Add(30 * time.Minute)
	if err := db.RecordAttempt(ctx, "a", errors.New("servicio no disponible (503)"), attempt); err != nil {
		t.Fatal(err)
	}
	a, _ := db.FindByUUID(ctx, "a")
	if d := a.Delivery; d.State != cfe.DeliveryPending || d.Attempts != 1 || d.Reason != "servicio no disponible (503)" || !d.LastAttempt.Equal(attempt) {
		t.Errorf("after a failed attempt: %+v", d)
	}

	// Accepted: out of the outbox; marking again is harmless.
	if err := db.MarkDelivered(ctx, "a", 5501); err != nil {
		t.Fatal(err)
	}
	if err := db.MarkDelivered(ctx, "a", 5501); err != nil {
		t.Errorf("marking delivered twice: %v", err)
	}
	a, _ = db.FindByUUID(ctx, "a")
	if d := a.Delivery; d.State != cfe.DeliveryAccepted || d.HostedID != 5501 || d.Attempts != 2 || d.Reason != "" || !d.LastAttempt.Equal(now) {
		t.Errorf("after delivery: %+v", d)
	}

	// Rejected for good: out of the outbox, into the rejected list.
	if err := db.MarkRejected(ctx, "b", "RUC del receptor inválido"); err != nil {
		t.Fatal(err)
	}
	if err := db.MarkRejected(ctx, "b", "RUC del receptor inválido"); err != nil {
		t.Errorf("marking rejected twice: %v", err)
	}
	b, _ := db.FindByUUID(ctx, "b")
	if d := b.Delivery; d.State != cfe.DeliveryRejected || d.Reason != "RUC del receptor inválido" || d.Attempts != 1 {
		t.Errorf("after rejection: %+v", d)
	}

	conflicts := []struct {
		name string
		err  error
	}{
		{"deliver a rejected CFE", db.MarkDelivered(ctx, "b", 1)},
		{"deliver under another id", db.MarkDelivered(ctx, "a", 5502)},
		{"reject an accepted CFE", db.MarkRejected(ctx, "a", "x")},
		{"attempt on an accepted CFE", db.RecordAttempt(ctx, "a", errors.New("x"), now)},
		{"attempt on a rejected CFE", db.RecordAttempt(ctx, "b", errors.New("x"), now)},
	}
	for _, c := range conflicts {
		if cfe.ErrorCode(c.err) != cfe.ECONFLICT {
			t.Errorf("%s: %v, want ECONFLICT", c.name, c.err)
		}
	}
	wantCode(t, db.MarkDelivered(ctx, "zzz", 1), cfe.ENOTFOUND)
	wantCode(t, db.MarkRejected(ctx, "zzz", "x"), cfe.ENOTFOUND)
	wantCode(t, db.RecordAttempt(ctx, "zzz", errors.New("x"), now), cfe.ENOTFOUND)
	wantCode(t, db.MarkRejected(ctx, "c", ""), cfe.EINVALID)
	wantCode(t, db.RecordAttempt(ctx, "c", nil, now), cfe.EINVALID)
	wantCode(t, db.MarkDelivered(ctx, "", 1), cfe.EINVALID)

	check := func() {
		t.Helper()
		pending, err := db.PendingOutbox(ctx, 10)
		if err != nil {
			t.Fatal(err)
		}
		if s := fmtList(uuids(pending)); s != "[c]" {
			t.Errorf("pending = %s, want [c]", s)
		}
		rejected, err := db.Rejected(ctx, 10)
		if err != nil {
			t.Fatal(err)
		}
		if s := fmtList(uuids(rejected)); s != "[b]" {
			t.Errorf("rejected = %s, want [b]", s)
		}
		wantStats(t, db, store.Stats{CFEs: 3, Outbox: cfe.Outbox{Pending: 1, OldestPending: t0.Add(2 * time.Minute), Rejected: 1},
			OldestPendingAge: 58 * time.Minute, Ranges: 1})
	}
	check()
	db.Close()
	db, err = store.Open(path, store.Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	checkAtEnd(t, db, path)
	defer db.Close()
	check()

	evs, err := db.AuditEvents(ctx, 5, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 {
		t.Fatalf("events from 5: %+v", evs)
	}
	if e := evs[0]; e.Seq != 5 || e.Kind != store.AuditDelivered || e.UUID != "a" || e.HostedID != 5501 || e.Nro != 1 {
		t.Errorf("event 5 = %+v", e)
	}
	if e := evs[1]; e.Seq != 6 || e.Kind != store.AuditRejected || e.UUID != "b" || e.Detail != "RUC del receptor inválido" {
		t.Errorf("event 6 = %+v", e)
	}
}

func wantStats(t *testing.T, db *store.DB, want store.Stats) {
	t.Helper()
	got, err := db.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.CFEs != want.CFEs || got.ByType[cfe.ETicket] != want.CFEs || got.Pending != want.Pending ||
		!got.OldestPending.Equal(want.OldestPending) || got.OldestPendingAge != want.OldestPendingAge ||
		got.Rejected != want.Rejected || got.Ranges != want.Ranges {
		t.Errorf("stats = %+v\nwant %+v", got, want)
	}
}

func TestDB_Outbox_BadLimit(t *testing.T) {
	t.Parallel()
	db, _ := openStore(t, store.Options{})
	_, err := db.PendingOutbox(ctx, 0)
	wantCode(t, err, cfe.EINVALID)
	_, err = db.Rejected(ctx, -1)
	wantCode(t, err, cfe.EINVALID)
	_, err = db.AuditEvents(ctx, 1, 0)
	wantCode(t, err, cfe.EINVALID)
}
