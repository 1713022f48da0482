package store_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/store"
)

// BenchmarkOpen measures what Open costs on a store of many CFEs (100 000 by
// default, CFE_BENCH_OPEN_N to change; built once, with CFEs of about 2 KB
// committed by 8 goroutines): the whole Open, and its check of the page tree
// (checkTree) against a cursor walk that reads every key and value.
func BenchmarkOpen(b *testing.B) {
	n := 100_000
	if v, err := strconv.Atoi(os.Getenv("CFE_BENCH_OPEN_N")); err == nil && v > 0 {
		n = v
	}
	path := filepath.Join(b.TempDir(), "agent.db")
	db, err := store.Open(path, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	putRanges(b, db, newRange(cfe.ETicket, "A", 1, 9_999_999, farAway))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for i := next.Add(1); i <= int64(n); i = next.Add(1) {
				commitOne(b, db, fmt.Sprint("open-", i))
			}
		})
	}
	wg.Wait()
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	if fi, err := os.Stat(path); err == nil {
		b.Logf("%d CFEs, %.1f MB", n, float64(fi.Size())/1e6)
	}
	b.Run("open", func(b *testing.B) {
		for b.Loop() {
			db, err := store.Open(path, store.Options{})
			if err != nil {
				b.Fatal(err)
			}
			_ = db.Close()
		}
	})
	b.Run("check-tree", func(b *testing.B) {
		for b.Loop() {
			if err := store.CheckTree(path); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cursor-walk", func(b *testing.B) {
		db, err := store.Open(path, store.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		for b.Loop() {
			if err := store.CheckPages(db); err != nil {
				b.Fatal(err)
			}
		}
	})
}
