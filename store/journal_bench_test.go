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
// (Options.JournalBlock) of a serie. "witness" adds the numbering witness's
// write, which follows each journal write.
func BenchmarkJournalWrite(b *testing.B) {
	for _, withWitness := range []bool{false, true} {
		name := "journal"
		if withWitness {
			name = "witness"
		}
		b.Run(name, func(b *testing.B) {
			j := &journal{path: filepath.Join(b.TempDir(), "numbering.json"), block: DefaultJournalBlock, storeID: newStoreID()}
			if withWitness {
				k := WitnessKey{RUC: "219999830019", Environment: "test", Profile: "caja1"}
				j.witness = &witness{path: WitnessFile(b.TempDir(), k), key: k, store: "agent.db"}
			}
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
				if j.witness != nil && j.witness.err != nil {
					b.Fatal(j.witness.err)
				}
			}
		})
	}
}
