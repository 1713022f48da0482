package store_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/store"
)

func TestDB_Reserve_NoUsableRange(t *testing.T) {
	t.Parallel()
	yesterday := today.AddDays(-1)
	tests := []struct {
		name   string
		ranges []cfe.CAERange
	}{
		{"no range at all", nil},
		{"only another type", []cfe.CAERange{newRange(cfe.EFactura, "A", 1, 10, farAway)}},
		{"only an expired range", []cfe.CAERange{newRange(cfe.ETicket, "A", 1, 10, yesterday)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			db, _ := openStore(t, store.Options{})
			putRanges(t, db, tt.ranges...)
			_, err := db.Reserve(ctx, cfe.ETicket, today)
			ce := wantCode(t, err, cfe.EUNAVAILABLE)
			if ce.Respuesta != cfe.RespSinRangoCAE {
				t.Errorf("Respuesta = %q, want %q", ce.Respuesta, cfe.RespSinRangoCAE)
			}
		})
	}
}

func TestDB_Reserve_BadInput(t *testing.T) {
	t.Parallel()
	db, _ := openStore(t, store.Options{})
	putRanges(t, db, newRange(cfe.ETicket, "A", 1, 10, farAway))
	_, err := db.Reserve(ctx, cfe.Type(100), today)
	if ce := wantCode(t, err, cfe.EINVALID); len(ce.Fields) != 1 || ce.Fields[0].Campo != "tipo" {
		t.Errorf("fields = %+v", ce.Fields)
	}
	_, err = db.Reserve(ctx, cfe.ETicket, cfe.Date{})
	if ce := wantCode(t, err, cfe.EINVALID); len(ce.Fields) != 1 || ce.Fields[0].Campo != "fecha" {
		t.Errorf("fields = %+v", ce.Fields)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, err = db.Reserve(cancelled, cfe.ETicket, today)
	wantCode(t, err, cfe.EUNAVAILABLE)
	// None of these took a number.
	if r := reserve(t, db, cfe.ETicket); r.Nro != 1 {
		t.Errorf("first number = %d, want 1", r.Nro)
	}
}

func TestDB_Reserve_ChoosesRange(t *testing.T) {
	t.Parallel()
	soon := today.AddDays(20)
	tests := []struct {
		name   string
		ranges []cfe.CAERange
		want   string // range ID of the first reservation
		nro    int64
	}{
		{"expired range is never used", []cfe.CAERange{
			newRange(cfe.ETicket, "A", 1, 10, today.AddDays(-1)),
			newRange(cfe.ETicket, "B", 1, 10, farAway)}, "101-B-1", 1},
		{"range is usable on its expiry day", []cfe.CAERange{
			newRange(cfe.ETicket, "A", 1, 10, today),
			newRange(cfe.ETicket, "B", 1, 10, farAway)}, "101-A-1", 1},
		{"serie whose range expires first", []cfe.CAERange{
			newRange(cfe.ETicket, "A", 1, 10, farAway),
			newRange(cfe.ETicket, "B", 500, 600, soon)}, "101-B-500", 500},
		{"same expiry: lowest serie", []cfe.CAERange{
			newRange(cfe.ETicket, "B", 1, 10, farAway),
			newRange(cfe.ETicket, "A", 1, 10, farAway)}, "101-A-1", 1},
		{"within a serie the lowest number, whatever the expiry", []cfe.CAERange{
			newRange(cfe.ETicket, "A", 101, 200, soon),
			newRange(cfe.ETicket, "A", 1, 100, farAway)}, "101-A-1", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			db, _ := openStore(t, store.Options{})
			putRanges(t, db, tt.ranges...)
			r := reserve(t, db, cfe.ETicket)
			if r.Range.ID != tt.want || r.Nro != tt.nro {
				t.Errorf("reserved %s number %d, want %s number %d", r.Range.ID, r.Nro, tt.want, tt.nro)
			}
			if r.Range.SignedXML != nil {
				t.Error("the reservation carries DGI's file")
			}
		})
	}
}

// Two ranges of serie A (1-3, then 10-11) and one of serie B (1-2) expiring
// later: numbering uses A to the end, jumps to A's second range, then moves
// to B, then runs out.
func TestDB_Commit_RollsOverAndRunsOut(t *testing.T) {
	t.Parallel()
	db, _ := openStore(t, store.Options{})
	putRanges(t, db,
		newRange(cfe.ETicket, "A", 1, 3, today.AddDays(100)),
		newRange(cfe.ETicket, "A", 10, 11, today.AddDays(100)),
		newRange(cfe.ETicket, "B", 1, 2, today.AddDays(200)))
	want := []string{"A1", "A2", "A3", "A10", "A11", "B1", "B2"}
	for i, w := range want {
		doc := issue(t, db, cfe.ETicket, fmt.Sprintf("roll-%d", i))
		if got := fmt.Sprintf("%s%d", doc.Serie, doc.Nro); got != w {
			t.Fatalf("CFE %d numbered %s, want %s", i, got, w)
		}
	}
	_, err := db.Reserve(ctx, cfe.ETicket, today)
	if ce := wantCode(t, err, cfe.EUNAVAILABLE); ce.Respuesta != cfe.RespSinRangoCAE {
		t.Errorf("Respuesta = %q", ce.Respuesta)
	}
}

func TestDB_Commit_UUIDConflict(t *testing.T) {
	t.Parallel()
	db, _ := openStore(t, store.Options{})
	putRanges(t, db, newRange(cfe.ETicket, "A", 1, 100, farAway))
	first := issue(t, db, cfe.ETicket, "same-uuid")

	r := reserve(t, db, cfe.ETicket)
	err := db.Commit(ctx, r, issuedFor(r, "same-uuid", signAt.Add(time.Minute)))
	if ce := wantCode(t, err, cfe.ECONFLICT); ce.Respuesta != cfe.RespConflictoUUID {
		t.Errorf("Respuesta = %q, want %q", ce.Respuesta, cfe.RespConflictoUUID)
	}
	got, err := db.FindByUUID(ctx, "same-uuid")
	if err != nil {
		t.Fatal(err)
	}
	sameIssued(t, got, first)
	// The refused number was not burnt.
	if next := issue(t, db, cfe.ETicket, "other-uuid"); next.Nro != 2 {
		t.Errorf("next number = %d, want 2", next.Nro)
	}
}

func TestDB_Commit_RejectsMismatchedDocument(t *testing.T) {
	t.Parallel()
	db, _ := openStore(t, store.Options{})
	putRanges(t, db, newRange(cfe.ETicket, "A", 1, 100, farAway))
	tests := []struct {
		name  string
		edit  func(*cfe.Issued)
		field string
	}{
		{"no uuid", func(d *cfe.Issued) { d.UUID = "" }, "uuid"},
		{"another number", func(d *cfe.Issued) { d.Nro++ }, "numero"},
		{"another serie", func(d *cfe.Issued) { d.Serie = "B" }, "serie"},
		{"another type", func(d *cfe.Issued) { d.Type = cfe.EFactura }, "tipo"},
		{"another range", func(d *cfe.Issued) { d.RangeID = "101-A-500" }, "rango"},
		{"CAE data of another range", func(d *cfe.Issued) { d.CAE.HNro = 99 }, "cae"},
		{"no XML", func(d *cfe.Issued) { d.XML = nil }, "xml"},
		{"no signature time", func(d *cfe.Issued) { d.TmstFirma = time.Time{} }, "tmst_firma"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := reserve(t, db, cfe.ETicket)
			doc := issuedFor(r, "mismatch", signAt)
			tt.edit(doc)
			ce := wantCode(t, db.Commit(ctx, r, doc), cfe.EINVALID)
			if len(ce.Fields) != 1 || ce.Fields[0].Campo != tt.field {
				t.Errorf("fields = %+v, want one on %q", ce.Fields, tt.field)
			}
			// The number went back and nothing was stored.
			if again := reserve(t, db, cfe.ETicket); again.Nro != r.Nro {
				t.Errorf("number after a refused commit = %d, want %d again", again.Nro, r.Nro)
			} else {
				db.Release(again)
			}
		})
	}
	if _, err := db.FindByUUID(ctx, "mismatch"); cfe.ErrorCode(err) != cfe.ENOTFOUND {
		t.Errorf("FindByUUID after refused commits: %v", err)
	}
}

// A CFE signed after its range expired is refused inside the transaction,
// even though the number was reserved while the range was valid.
func TestDB_Commit_RangeExpiredAtSignature(t *testing.T) {
	t.Parallel()
	db, _ := openStore(t, store.Options{})
	putRanges(t, db, newRange(cfe.ETicket, "A", 1, 100, today))
	r := reserve(t, db, cfe.ETicket)
	late := time.Date(2026, time.March, 11, 0, 0, 1, 0, cfe.Montevideo)
	err := db.Commit(ctx, r, issuedFor(r, "late", late))
	if ce := wantCode(t, err, cfe.EUNAVAILABLE); ce.Respuesta != cfe.RespSinRangoCAE {
		t.Errorf("Respuesta = %q", ce.Respuesta)
	}
	// 23:59:59 in Montevideo is still the expiry day, although it is the
	// next day in UTC.
	r = reserve(t, db, cfe.ETicket)
	if err := db.Commit(ctx, r, issuedFor(r, "in-time", time.Date(2026, time.March, 11, 2, 59, 59, 0, time.UTC))); err != nil {
		t.Fatalf("commit on the expiry day: %v", err)
	}
	if r.Nro != 1 {
		t.Errorf("number = %d, want 1 (the refused commit gave it back)", r.Nro)
	}
}

// The brief's main scenario: many cashiers at once.
func TestDB_Commit_ConcurrentCashiers(t *testing.T) {
	t.Parallel()
	db, path := openStore(t, store.Options{})
	putRanges(t, db, newRange(cfe.ETicket, "A", 1, 100_000, farAway), newRange(cfe.EFactura, "A", 1, 100_000, farAway))
	const workers, each = 8, 60
	var (
		mu     sync.Mutex
		issued = map[string]*cfe.Issued{}
		wg     sync.WaitGroup
	)
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				typ := cfe.ETicket
				if (w+i)%3 == 0 {
					typ = cfe.EFactura
				}
				r, err := db.Reserve(ctx, typ, today)
				if err != nil {
					t.Error(err)
					return
				}
				doc := issuedFor(r, fmt.Sprintf("cashier-%d-%d", w, i), signAt)
				if err := db.Commit(ctx, r, doc); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				issued[doc.UUID] = doc
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	perSeq := map[cfe.Type]map[int64]string{cfe.ETicket: {}, cfe.EFactura: {}}
	for uuid, want := range issued {
		if prev, dup := perSeq[want.Type][want.Nro]; dup {
			t.Fatalf("number %d/%d handed to %s and %s", want.Type, want.Nro, prev, uuid)
		}
		perSeq[want.Type][want.Nro] = uuid
		got, err := db.FindByNumber(ctx, want.Type, want.Serie, want.Nro)
		if err != nil {
			t.Fatal(err)
		}
		sameIssued(t, got, want)
	}
	for typ, nums := range perSeq {
		for n := int64(1); n <= int64(len(nums)); n++ {
			if nums[n] == "" {
				t.Fatalf("type %d: number %d missing among 1..%d", typ, n, len(nums))
			}
		}
	}
	st, err := db.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.CFEs != workers*each || st.Pending != workers*each {
		t.Errorf("stats = %+v, want %d CFEs, all pending", st, workers*each)
	}
	// Group commit: while one transaction is fsynced, the others queue up and
	// share the next one.
	if tx := commitTransactions(t, db); tx >= workers*each {
		t.Errorf("%d CFEs took %d transactions: no group commit", workers*each, tx)
	} else {
		t.Logf("%d CFEs in %d transactions", workers*each, tx)
	}
	db.Close()
	if got := len(checkFile(t, path)); got != workers*each {
		t.Errorf("file holds %d CFEs, want %d", got, workers*each)
	}
}

func TestDB_Release_NumberIsReused(t *testing.T) {
	t.Parallel()
	db, _ := openStore(t, store.Options{ReclaimTimeout: time.Minute})
	putRanges(t, db, newRange(cfe.ETicket, "A", 1, 100, farAway))
	r1, r2, r3 := reserve(t, db, cfe.ETicket), reserve(t, db, cfe.ETicket), reserve(t, db, cfe.ETicket)
	db.Release(r2)
	r2b := reserve(t, db, cfe.ETicket)
	if r2b.Nro != 2 {
		t.Fatalf("after releasing 2 the next number is %d", r2b.Nro)
	}
	if r4 := reserve(t, db, cfe.ETicket); r4.Nro != 4 {
		t.Fatalf("then %d, want 4", r4.Nro)
	} else {
		db.Release(r4)
	}
	// 3 waits for 2; 1 and 2 commit; then 3 goes through.
	done := commitAsync(t, db, r3, "three")
	if err := db.Commit(ctx, r1, issuedFor(r1, "one", signAt)); err != nil {
		t.Fatal(err)
	}
	// The committer took every CFE whose turn had come for the transaction
	// of 1: 3 was not among them, and still waits in line.
	select {
	case err := <-done:
		t.Fatalf("commit of 3 returned (%v) before 2 was committed", err)
	default:
	}
	if n := store.Queued(db, cfe.ETicket, "A"); n != 1 {
		t.Fatalf("%d commits wait in line after 1 was committed, want 3's", n)
	}
	if _, err := db.FindByNumber(ctx, cfe.ETicket, "A", 3); cfe.ErrorCode(err) != cfe.ENOTFOUND {
		t.Fatalf("3 is on disk before 2: %v", err)
	}
	if err := db.Commit(ctx, r2b, issuedFor(r2b, "two", signAt)); err != nil {
		t.Fatal(err)
	}
	if err := outcome(t, done, "the commit of 3"); err != nil {
		t.Fatalf("commit of 3: %v", err)
	}
	for n, uuid := range []string{"one", "two", "three"} {
		got, err := db.FindByNumber(ctx, cfe.ETicket, "A", int64(n+1))
		if err != nil || got.UUID != uuid {
			t.Fatalf("number %d: %v, %v", n+1, got, err)
		}
	}
	// Releasing finished reservations changes nothing.
	db.Release(r1)
	db.Release(r2)
	if next := reserve(t, db, cfe.ETicket); next.Nro != 4 {
		t.Errorf("next number = %d, want 4", next.Nro)
	}
}

// A stale Release of an earlier holder of a number must not free the number
// for its new holder.
func TestDB_Release_TwiceDoesNotFreeTheNewHolder(t *testing.T) {
	t.Parallel()
	db, _ := openStore(t, store.Options{})
	putRanges(t, db, newRange(cfe.ETicket, "A", 1, 100, farAway))
	old := reserve(t, db, cfe.ETicket)
	db.Release(old)
	current := reserve(t, db, cfe.ETicket)
	if current.Nro != old.Nro {
		t.Fatalf("number %d was not reused (%d)", old.Nro, current.Nro)
	}
	db.Release(old)
	if other := reserve(t, db, cfe.ETicket); other.Nro == current.Nro {
		t.Fatalf("number %d handed out twice", current.Nro)
	}
	if err := db.Commit(ctx, current, issuedFor(current, "current", signAt)); err != nil {
		t.Fatal(err)
	}
	err := db.Commit(ctx, old, issuedFor(old, "old", signAt))
	wantCode(t, err, cfe.EUNAVAILABLE)
}

// The policy when a released number is not claimed again: the commits
// waiting above it fail after ReclaimTimeout, give their numbers back, and
// numbering restarts right after the last committed number.
func TestDB_Release_WaitersFailWhenNumberStaysUnclaimed(t *testing.T) {
	t.Parallel()
	const reclaim = 150 * time.Millisecond
	db, path := openStore(t, store.Options{ReclaimTimeout: reclaim})
	putRanges(t, db, newRange(cfe.ETicket, "A", 1, 100, farAway))
	issue(t, db, cfe.ETicket, "one")
	r2, r3, r4 := reserve(t, db, cfe.ETicket), reserve(t, db, cfe.ETicket), reserve(t, db, cfe.ETicket)
	third := commitAsync(t, db, r3, "three")
	fourth := commitAsync(t, db, r4, "four")
	start := time.Now()
	db.Release(r2)
	for _, done := range []<-chan error{third, fourth} {
		ce := wantCode(t, outcome(t, done, "a waiting commit's failure"), cfe.EUNAVAILABLE)
		if ce.Respuesta == cfe.RespSinRangoCAE {
			t.Errorf("a retryable failure reported as %q", ce.Respuesta)
		}
	}
	if elapsed := time.Since(start); elapsed < reclaim {
		t.Errorf("waiters failed after %v, before the reclaim timeout %v", elapsed, reclaim)
	}
	// The counter rolled back: 2, 3, 4 are handed out again, in order.
	for _, want := range []int64{2, 3, 4} {
		if doc := issue(t, db, cfe.ETicket, fmt.Sprint("retry-", want)); doc.Nro != want {
			t.Fatalf("number %d, want %d", doc.Nro, want)
		}
	}
	db.Close()
	if got := len(checkFile(t, path)); got != 4 {
		t.Errorf("file holds %d CFEs, want 4", got)
	}
}

// A reservation whose holder vanished is taken back after
// ReservationTimeout, so the serie is not blocked for good.
func TestDB_Reservation_AbandonedIsTakenBack(t *testing.T) {
	t.Parallel()
	db, _ := openStore(t, store.Options{ReservationTimeout: 100 * time.Millisecond, ReclaimTimeout: time.Minute})
	putRanges(t, db, newRange(cfe.ETicket, "A", 1, 100, farAway))
	lost := reserve(t, db, cfe.ETicket)
	r2 := reserve(t, db, cfe.ETicket)
	done := commitAsync(t, db, r2, "two")

	// Until 1 is taken back, new reservations get 3 (given back at once).
	var refill *cfe.Reservation
	waitFor(t, "the abandoned number 1 handed out again", 10*time.Second, func() bool {
		r := reserve(t, db, cfe.ETicket)
		if r.Nro == 1 {
			refill = r
			return true
		}
		db.Release(r)
		return false
	})
	if err := db.Commit(ctx, refill, issuedFor(refill, "one", signAt)); err != nil {
		t.Fatal(err)
	}
	if err := outcome(t, done, "the commit of 2"); err != nil {
		t.Fatalf("commit of 2: %v", err)
	}
	// The vanished holder comes back too late.
	wantCode(t, db.Commit(ctx, lost, issuedFor(lost, "lost", signAt)), cfe.EUNAVAILABLE)
	if got, err := db.FindByNumber(ctx, cfe.ETicket, "A", 1); err != nil || got.UUID != "one" {
		t.Fatalf("number 1: %v, %v", got, err)
	}
}

func TestDB_Commit_ContextEndsWhileWaiting(t *testing.T) {
	t.Parallel()
	db, _ := openStore(t, store.Options{ReclaimTimeout: time.Minute})
	putRanges(t, db, newRange(cfe.ETicket, "A", 1, 100, farAway))
	r1, r2 := reserve(t, db, cfe.ETicket), reserve(t, db, cfe.ETicket)
	waitCtx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	err := db.Commit(waitCtx, r2, issuedFor(r2, "two", signAt))
	wantCode(t, err, cfe.EUNAVAILABLE)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v does not wrap the context's", err)
	}
	if err := db.Commit(ctx, r1, issuedFor(r1, "one", signAt)); err != nil {
		t.Fatal(err)
	}
	if next := reserve(t, db, cfe.ETicket); next.Nro != 2 {
		t.Errorf("next number = %d, want 2 (given back by the cancelled commit)", next.Nro)
	}
}

func TestDB_Close_FailsWaitingCommits(t *testing.T) {
	t.Parallel()
	db, path := openStore(t, store.Options{ReclaimTimeout: time.Minute})
	putRanges(t, db, newRange(cfe.ETicket, "A", 1, 100, farAway))
	reserve(t, db, cfe.ETicket)
	r2 := reserve(t, db, cfe.ETicket)
	done := commitAsync(t, db, r2, "two")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	wantCode(t, outcome(t, done, "the waiting commit's failure at Close"), cfe.EUNAVAILABLE)

	db, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkAtEnd(t, db, path)
	defer db.Close()
	if r := reserve(t, db, cfe.ETicket); r.Nro != 1 {
		t.Errorf("first number after reopen = %d, want 1", r.Nro)
	}
}

// A released number is handed out before anything else, even when another
// serie's range would be preferred, so that the commits waiting above it
// can proceed.
func TestDB_Reserve_RefillsReleasedNumberFirst(t *testing.T) {
	t.Parallel()
	db, _ := openStore(t, store.Options{ReclaimTimeout: time.Minute})
	putRanges(t, db, newRange(cfe.ETicket, "A", 1, 100, farAway))
	a1 := reserve(t, db, cfe.ETicket)
	reserve(t, db, cfe.ETicket) // A 2 stays reserved
	putRanges(t, db, newRange(cfe.ETicket, "B", 1, 100, today.AddDays(10)))
	db.Release(a1)
	for _, want := range []string{"A1", "B1", "B2"} {
		r := reserve(t, db, cfe.ETicket)
		if got := fmt.Sprintf("%s%d", r.Serie, r.Nro); got != want {
			t.Fatalf("reserved %s, want %s", got, want)
		}
	}
}

// commitAsync starts Commit of a CFE for r under uuid and waits until it is
// queued behind a lower number.
func commitAsync(t *testing.T, db *store.DB, r *cfe.Reservation, uuid string) <-chan error {
	t.Helper()
	queued := store.Queued(db, r.Type, r.Serie)
	done := make(chan error, 1)
	go func() { done <- db.Commit(ctx, r, issuedFor(r, uuid, signAt)) }()
	waitFor(t, fmt.Sprintf("the commit of %d to queue", r.Nro), 10*time.Second, func() bool {
		return store.Queued(db, r.Type, r.Serie) != queued
	})
	return done
}

func TestDB_Commit_FailureInsideABatch(t *testing.T) {
	t.Parallel()
	t.Run("the others of the batch are committed", func(t *testing.T) {
		t.Parallel()
		db, _ := openStore(t, store.Options{})
		putRanges(t, db, newRange(cfe.ETicket, "A", 1, 100, farAway))
		r1, r2, r3 := reserve(t, db, cfe.ETicket), reserve(t, db, cfe.ETicket), reserve(t, db, cfe.ETicket)
		second := commitAsync(t, db, r2, "dup")
		third := commitAsync(t, db, r3, "dup") // same uuid: refused when 2 is written first
		before := commitTransactions(t, db)
		if err := db.Commit(ctx, r1, issuedFor(r1, "one", signAt)); err != nil {
			t.Fatal(err)
		}
		if err := outcome(t, second, "the commit of 2"); err != nil {
			t.Fatal(err)
		}
		wantCode(t, outcome(t, third, "the refusal of 3"), cfe.ECONFLICT)
		if n := commitTransactions(t, db) - before; n != 1 {
			t.Errorf("the three commits took %d transactions, want 1", n)
		}
		if r := reserve(t, db, cfe.ETicket); r.Nro != 3 {
			t.Errorf("next number = %d, want 3 (given back by the refused commit)", r.Nro)
		}
	})
	t.Run("higher numbers wait for the refused one to be refilled", func(t *testing.T) {
		t.Parallel()
		db, path := openStore(t, store.Options{ReclaimTimeout: time.Minute})
		putRanges(t, db, newRange(cfe.ETicket, "A", 1, 100, farAway))
		issue(t, db, cfe.ETicket, "old")
		r2, r3, r4 := reserve(t, db, cfe.ETicket), reserve(t, db, cfe.ETicket), reserve(t, db, cfe.ETicket)
		third := commitAsync(t, db, r3, "three")
		fourth := commitAsync(t, db, r4, "four")
		wantCode(t, db.Commit(ctx, r2, issuedFor(r2, "old", signAt)), cfe.ECONFLICT)
		if _, err := db.FindByNumber(ctx, cfe.ETicket, "A", 3); cfe.ErrorCode(err) != cfe.ENOTFOUND {
			t.Fatalf("3 was written over the gap at 2: %v", err)
		}
		refill := reserve(t, db, cfe.ETicket)
		if refill.Nro != 2 {
			t.Fatalf("refill got %d, want 2", refill.Nro)
		}
		if err := db.Commit(ctx, refill, issuedFor(refill, "two", signAt)); err != nil {
			t.Fatal(err)
		}
		for _, done := range []<-chan error{third, fourth} {
			if err := outcome(t, done, "a commit above the refilled 2"); err != nil {
				t.Fatal(err)
			}
		}
		db.Close()
		if got := len(checkFile(t, path)); got != 4 {
			t.Errorf("file holds %d CFEs, want 4", got)
		}
	})
}

func TestDB_Commit_GroupsWhileManyAreBeingSigned(t *testing.T) {
	t.Parallel()
	// More CFEs in progress than processors: the committer holds ready ones
	// back while others are being signed (see collect). At least 5, so that
	// all but one being ready is 4/5 of them, where it stops holding back
	// (with 4, at GOMAXPROCS 1, 3 ready of 4 stayed held for MaxBatchDelay).
	many := max(runtime.GOMAXPROCS(0)+3, 5)
	reserveMany := func(t *testing.T, db *store.DB) []*cfe.Reservation {
		rs := make([]*cfe.Reservation, many)
		for i := range rs {
			rs[i] = reserve(t, db, cfe.ETicket)
		}
		return rs
	}
	open := func(t *testing.T, delay time.Duration) *store.DB {
		db, _ := openStore(t, store.Options{MaxBatchDelay: delay})
		putRanges(t, db, newRange(cfe.ETicket, "A", 1, 100, farAway))
		return db
	}
	t.Run("a lone caller is not held back", func(t *testing.T) {
		t.Parallel()
		db := open(t, time.Hour)
		for i := range 3 {
			issue(t, db, cfe.ETicket, fmt.Sprint("alone-", i)) // would block for an hour if held
		}
	})
	t.Run("after a burst, a lone caller is not held back", func(t *testing.T) {
		t.Parallel()
		db := open(t, time.Hour)
		for _, r := range reserveMany(t, db) {
			db.Release(r)
		}
		issue(t, db, cfe.ETicket, "alone")
	})
	t.Run("ready CFEs wait for the ones being signed", func(t *testing.T) {
		t.Parallel()
		db := open(t, time.Hour)
		rs := reserveMany(t, db)
		first := commitAsync(t, db, rs[0], "c-0")
		if n := commitTransactions(t, db); n != 0 {
			t.Fatalf("%d transactions while %d CFEs were being signed; want the first one held", n, many-1)
		}
		done := []<-chan error{first}
		for i, r := range rs[1 : many-1] { // all but the last: at least 4/5 are ready
			done = append(done, commitAsync(t, db, r, fmt.Sprint("c-", i+1)))
		}
		for _, d := range done {
			if err := outcome(t, d, "a held commit"); err != nil {
				t.Fatal(err)
			}
		}
		if n := commitTransactions(t, db); n >= uint64(len(done)) {
			t.Errorf("%d commits took %d transactions: not grouped", len(done), n)
		}
		// Held until all were ready, the first was written with the others
		// (written alone as soon as it was queued, it would have taken a
		// transaction of its own).
		if n := commitTransactions(t, db); n != 1 {
			t.Fatalf("%d transactions for %d commits while one more was being signed; want the first one held for one transaction with the others", n, len(done))
		}
		db.Release(rs[many-1])
	})
	t.Run("the last one being signed given back wakes the held ones", func(t *testing.T) {
		t.Parallel()
		db := open(t, time.Hour)
		rs := reserveMany(t, db)
		first := commitAsync(t, db, rs[0], "first")
		for i := len(rs) - 1; i > 0; i-- { // from the top: no hole below the first
			db.Release(rs[i])
		}
		if err := outcome(t, first, "the held commit, woken"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("never longer than MaxBatchDelay", func(t *testing.T) {
		t.Parallel()
		db := open(t, 20*time.Millisecond)
		rs := reserveMany(t, db)
		// Not commitAsync: held only 20 ms, the commit may be queued and
		// written between two looks at the queue (a slow machine, Wine).
		held := make(chan error, 1)
		go func() { held <- db.Commit(ctx, rs[0], issuedFor(rs[0], "first", signAt)) }()
		if err := outcome(t, held, "the commit held MaxBatchDelay"); err != nil { // held, then written alone
			t.Fatal(err)
		}
		for _, r := range rs[1:] {
			db.Release(r)
		}
	})
}

// TestDB_Commit_DisableHoldBack checks that with Options.DisableHoldBack a
// ready CFE is written at once even when more CFEs are in progress than
// processors, where the committer would otherwise hold it back (see
// TestDB_Commit_GroupsWhileManyAreBeingSigned).
func TestDB_Commit_DisableHoldBack(t *testing.T) {
	t.Parallel()
	many := runtime.GOMAXPROCS(0) + 3
	db, _ := openStore(t, store.Options{MaxBatchDelay: time.Hour, DisableHoldBack: true})
	putRanges(t, db, newRange(cfe.ETicket, "A", 1, 100, farAway))
	rs := make([]*cfe.Reservation, many)
	for i := range rs {
		rs[i] = reserve(t, db, cfe.ETicket)
	}
	for i, r := range rs[:2] {
		// Held back, each would wait an hour: the others are being signed.
		if err := db.Commit(ctx, r, issuedFor(r, fmt.Sprint("nohold-", i), signAt)); err != nil {
			t.Fatal(err)
		}
		if n := commitTransactions(t, db); n != uint64(i+1) {
			t.Errorf("%d transactions after %d lone commits, want %d", n, i+1, i+1)
		}
	}
	for _, r := range rs[2:] {
		db.Release(r)
	}
}

// A number given back, taken again and given back again (a caller retrying a
// request that fails after its reservation) keeps the age it had as a hole:
// the commits waiting above it fail ReclaimTimeout after the first failure,
// with ErrNumberGap, not after the last.
//
// The store's waits run on the real clock (Options.Now is for recorded times
// only): the test lets 3/4 of the timeout pass, watching the waiter
// meanwhile, and the timeout is long enough that a busy machine's delays do
// not reach the half timeout of slack it has above.
func TestDB_Release_RefilledHoleKeepsItsAge(t *testing.T) {
	t.Parallel()
	const reclaim = time.Second
	db, _ := openStore(t, store.Options{ReclaimTimeout: reclaim})
	putRanges(t, db, newRange(cfe.ETicket, "A", 1, 100, farAway))
	r1, r2 := reserve(t, db, cfe.ETicket), reserve(t, db, cfe.ETicket)
	second := commitAsync(t, db, r2, "two")
	first := time.Now()
	db.Release(r1)
	select {
	case err := <-second:
		t.Fatalf("the waiting commit ended (%v) before the reclaim timeout %v", err, reclaim)
	case <-time.After(reclaim * 3 / 4):
	}
	again := reserve(t, db, cfe.ETicket)
	if again.Nro != 1 {
		t.Fatalf("the refill got %d, want 1", again.Nro)
	}
	db.Release(again) // the retry failed too
	ce := wantCode(t, outcome(t, second, "the waiting commit's failure"), cfe.EUNAVAILABLE)
	if !errors.Is(ce, cfe.ErrNumberGap) {
		t.Fatalf("the waiting commit failed with %v, want ErrNumberGap", ce)
	}
	// From the second failure it would be 3/4 + 1 reclaim timeouts.
	if elapsed := time.Since(first); elapsed >= reclaim*3/2 {
		t.Fatalf("the waiter failed %v after the first give-back: the refill restarted the reclaim timeout %v", elapsed, reclaim)
	}
	if next := reserve(t, db, cfe.ETicket); next.Nro != 1 {
		t.Fatalf("after the waiter gave up the next number is %d, want 1", next.Nro)
	}
}
