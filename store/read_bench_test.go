package store_test

import (
	"fmt"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/store"
)

// BenchmarkReads measures the reads every stored CFE goes through
// (readRecord: the record, the number index and, with the XML, its
// decompression and checksum) on a store of 2 000 pending e-Tickets:
// FindByUUID, a PendingOutbox page of 100 (the deliverer's read) and
// Last(10) (/state's, without the XML).
func BenchmarkReads(b *testing.B) {
	db, _ := openStore(b, store.Options{})
	putRanges(b, db, newRange(cfe.ETicket, "A", 1, 9_999_999, farAway))
	const n = 2000
	for i := range n {
		issue(b, db, cfe.ETicket, fmt.Sprintf("leido-%04d", i))
	}
	b.Run("FindByUUID", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := db.FindByUUID(ctx, fmt.Sprintf("leido-%04d", i%n)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("PendingOutbox-100", func(b *testing.B) {
		for b.Loop() {
			if list, err := db.PendingOutbox(ctx, 100); err != nil || len(list) != 100 {
				b.Fatal(len(list), err)
			}
		}
	})
	b.Run("Last-10", func(b *testing.B) {
		for b.Loop() {
			if _, err := db.Last(ctx, 10); err != nil {
				b.Fatal(err)
			}
		}
	})
}
