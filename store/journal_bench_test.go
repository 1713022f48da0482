package store

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// BenchmarkJournalWrite measures one durable write of the numbering journal
// (write, fsync, rename, fsync of the directory) holding a serie of every
// electronic type: the committer pays it once per block of numbers
// (Options.JournalBlock) of a serie.
func BenchmarkJournalWrite(b *testing.B) {
	j := &journal{path: filepath.Join(b.TempDir(), "numbering.json"), block: DefaultJournalBlock, storeID: newStoreID()}
	entries := map[seqKey]journalEntry{}
	for _, t := range cfe.ElectronicTypes() {
		entries[seqKey{t, "A"}] = journalEntry{Type: t, Serie: "A", Committed: 123456, Reserved: 123555}
	}
	now := time.Now()
	for b.Loop() {
		j.mu.Lock()
		err := j.write(entries, false, now)
		j.mu.Unlock()
		if err != nil {
			b.Fatal(err)
		}
	}
}
