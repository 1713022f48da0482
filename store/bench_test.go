package store_test

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/store"
)

// BenchmarkCommit measures Reserve+Commit of a CFE of about 2 KB, with real
// fsync, from one goroutine and from 8 (the group commit's case).
func BenchmarkCommit(b *testing.B) {
	for _, j := range []struct {
		name string
		opts func(testing.TB) store.Options
	}{
		{"", func(testing.TB) store.Options { return store.Options{} }},
		// With the numbering journal, written once per block of numbers
		// (journal.go): its cost is spread over the block.
		{"journal-", func(t testing.TB) store.Options {
			_, journal := journalDirs(t)
			return store.Options{Journal: journal}
		}},
		// And the numbering witness, written after each journal write
		// (witness.go).
		{"witness-", func(t testing.TB) store.Options {
			_, journal := journalDirs(t)
			key := store.WitnessKey{RUC: "219999830019", Environment: "test", Profile: "caja1"}
			return store.Options{Journal: journal, Witness: store.WitnessFile(t.TempDir(), key), WitnessKey: key}
		}},
	} {
		benchCommit(b, j.name, j.opts)
	}
}

func benchCommit(b *testing.B, prefix string, opts func(testing.TB) store.Options) {
	b.Run(prefix+"serial", func(b *testing.B) {
		db := benchStore(b, opts(b))
		for i := 0; b.Loop(); i++ {
			commitOne(b, db, fmt.Sprint("serial-", i))
		}
		reportBatch(b, db)
	})
	b.Run(prefix+"parallel-8", func(b *testing.B) {
		db := benchStore(b, opts(b))
		b.SetParallelism((8 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0)) // at least 8 goroutines
		var n atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				commitOne(b, db, fmt.Sprint("parallel-", n.Add(1)))
			}
		})
		reportBatch(b, db)
	})
}

// reportBatch reports how many CFEs each transaction held on average.
func reportBatch(b *testing.B, db *store.DB) {
	b.ReportMetric(float64(b.N)/float64(commitTransactions(b, db)), "CFEs/tx")
}

func benchStore(b *testing.B, opts store.Options) *store.DB {
	db, _ := openStore(b, opts)
	putRanges(b, db, newRange(cfe.ETicket, "A", 1, 9_999_999, farAway))
	return db
}

var padding = make([]byte, 1800)

func commitOne(b *testing.B, db *store.DB, uuid string) {
	r, err := db.Reserve(ctx, cfe.ETicket, today)
	if err != nil {
		b.Fatal(err)
	}
	doc := issuedFor(r, uuid, signAt)
	doc.XML = append(doc.XML, padding...)
	if err := db.Commit(ctx, r, doc); err != nil {
		b.Fatal(err)
	}
}
