package store_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/store"
)

// waiting reports whether a notification waits on c, without blocking.
func waiting(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// TestDB_WatchCommits: every watcher hears of a commit before Commit
// returns; notifications coalesce while the count stays exact; a commit the
// store refuses, a released number and a stopped watcher hear nothing.
func TestDB_WatchCommits(t *testing.T) {
	t.Parallel()
	db, _ := openStore(t, store.Options{})
	putRanges(t, db, newRange(cfe.ETicket, "A", 1, 100, farAway))
	first, stopFirst := db.WatchCommits()
	second, stopSecond := db.WatchCommits()
	defer stopSecond()
	if waiting(first) || db.Committed() != 0 {
		t.Fatalf("before any commit: a notification waits (%v) or %d committed", waiting(first), db.Committed())
	}

	issue(t, db, cfe.ETicket, "aviso-1")
	if !waiting(first) || !waiting(second) || db.Committed() != 1 {
		t.Fatalf("after a commit: first %v, second %v, %d committed; want both notified, 1", waiting(first), waiting(second), db.Committed())
	}

	for i := range 3 {
		issue(t, db, cfe.ETicket, fmt.Sprintf("aviso-%d", i+2))
	}
	if !waiting(first) || waiting(first) || db.Committed() != 4 {
		t.Fatalf("three commits unread: want one notification waiting and 4 committed, have %d", db.Committed())
	}
	waiting(second)

	// A CFE the store refuses (its uuid is taken) commits nothing.
	r := reserve(t, db, cfe.ETicket)
	if err := db.Commit(ctx, r, issuedFor(r, "aviso-1", signAt)); err == nil {
		t.Fatal("a second CFE with uuid aviso-1 was committed")
	}
	// A number given back commits nothing either.
	db.Release(reserve(t, db, cfe.ETicket))
	if waiting(first) || waiting(second) || db.Committed() != 4 {
		t.Fatalf("a refused commit and a release notified (%d committed)", db.Committed())
	}

	stopFirst()
	issue(t, db, cfe.ETicket, "aviso-5")
	if waiting(first) || !waiting(second) || db.Committed() != 5 {
		t.Fatalf("after the first watcher stopped: first %v, second %v, %d committed", waiting(first), waiting(second), db.Committed())
	}
}

// TestDB_WatchCommits_bulk: CFEs loaded in bulk notify as one commit and
// count each.
func TestDB_WatchCommits_bulk(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src, err := store.Open(filepath.Join(dir, "src.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, _ := openStore(t, store.Options{})
	rng := newRange(cfe.ETicket, "A", 1, 100, farAway)
	putRanges(t, src, rng)
	putRanges(t, dst, rng)
	var docs []*cfe.Issued
	for i := range 3 {
		docs = append(docs, issue(t, src, cfe.ETicket, fmt.Sprintf("masivo-%d", i)))
	}
	c, stop := dst.WatchCommits()
	defer stop()
	if err := dst.BulkLoad(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if !waiting(c) || waiting(c) || dst.Committed() != 3 {
		t.Fatalf("after a bulk load of 3: want one notification and 3 committed, have %d", dst.Committed())
	}
}
