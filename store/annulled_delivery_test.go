package store_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/store"
)

// TestDB_AnnulledOutbox: provider mode's outbox of annulled numbers — every
// annulled range waits until the hosted service took it or refused it for
// good; a failed attempt keeps it waiting; a refusal keeps its reason and
// is listed; what was answered stays answered after a restart, and a range
// annulled later is listed.
func TestDB_AnnulledOutbox(t *testing.T) {
	t.Parallel()
	storePath, journalPath := journalDirs(t)
	now := time.Date(2026, 3, 14, 15, 0, 0, 0, cfe.Montevideo)
	opts := store.Options{Journal: journalPath, Now: func() time.Time { return now }}
	db := openAt(t, storePath, opts)
	putRanges(t, db, newRange(cfe.ETicket, "A", 1, 50, farAway), newRange(cfe.ETicket, "B", 1, 50, farAway))
	issue(t, db, cfe.ETicket, "a-1")
	today := cfe.DateOf(now)
	void := func(serie string, from, to int64) cfe.AnnulledRange {
		t.Helper()
		r := cfe.AnnulledRange{Type: cfe.ETicket, Serie: serie, From: from, To: to, Note: "prueba"}
		if err := db.AnnulNumbers(ctx, r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	pending := func(db *store.DB) []string {
		t.Helper()
		list, err := db.AnnulledUndelivered(ctx, today, 10)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range list {
			if r.Reason != cfe.AnnulTechnician || r.Note != "prueba" {
				t.Errorf("%s listed with reason %q note %q", r, r.Reason, r.Note)
			}
			out = append(out, r.String())
		}
		return out
	}
	a, b := void("A", 5, 9), void("B", 3, 3)
	a.Reason, b.Reason = cfe.AnnulTechnician, cfe.AnnulTechnician
	if got := strings.Join(pending(db), " "); got != "101:A:5-9 101:B:3" {
		t.Fatalf("pending %q, want both ranges", got)
	}
	if err := db.RecordAnnulledAttempt(ctx, a, errors.New("no se pudo contactar el servicio en la nube"), now); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(pending(db), " "); got != "101:A:5-9 101:B:3" {
		t.Fatalf("after a failed attempt: pending %q, want both ranges still", got)
	}
	if err := db.MarkAnnulledDelivered(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := db.MarkAnnulledDelivered(ctx, a); err != nil {
		t.Fatalf("marking it delivered again: %v", err)
	}
	if err := db.MarkAnnulledRefused(ctx, b, "los números se superponen (409)"); err != nil {
		t.Fatal(err)
	}
	if got := pending(db); len(got) != 0 {
		t.Fatalf("pending %v after both were answered", got)
	}
	if err := db.MarkAnnulledRefused(ctx, a, "x"); cfe.ErrorCode(err) != cfe.ECONFLICT {
		t.Errorf("refusing a delivered range: %v, want ECONFLICT", err)
	}
	if err := db.RecordAnnulledAttempt(ctx, b, errors.New("x"), now); cfe.ErrorCode(err) != cfe.ECONFLICT {
		t.Errorf("an attempt on a refused range: %v, want ECONFLICT", err)
	}
	if err := db.MarkAnnulledRefused(ctx, a, ""); cfe.ErrorCode(err) != cfe.EINVALID {
		t.Errorf("a refusal without reason: %v, want EINVALID", err)
	}

	// Durable: after a restart nothing answered is listed again, and a range
	// annulled the next day is.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	now = now.Add(24 * time.Hour)
	today = cfe.DateOf(now)
	db = openAt(t, storePath, opts)
	defer db.Close()
	if got := pending(db); len(got) != 0 {
		t.Fatalf("pending %v after a restart", got)
	}
	void("A", 12, 12)
	if got := strings.Join(pending(db), " "); got != "101:A:12" {
		t.Fatalf("pending %q, want the new range only", got)
	}
	refusals, err := db.AnnulledRefusals(ctx, today.AddDays(-7), today)
	if err != nil || len(refusals) != 1 || refusals[0].Range.String() != "101:B:3" || !strings.Contains(refusals[0].Reason, "409") {
		t.Fatalf("refusals %+v (%v), want B-3 with its reason", refusals, err)
	}
}
