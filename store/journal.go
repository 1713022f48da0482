package store

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/durable"
)

// The numbering journal is a small file kept outside the store file (see
// Options.Journal and docs/numbering.md). It records, for every (type, serie),
// a number the store has certainly reached (committed) and a number no
// committed CFE exceeds (reserved). The committer extends reserved by a block
// of numbers, durably, before it commits a number above it, so the file is
// written once per block and not once per transaction; Close records the
// exact counters. When the store file is lost, truncated or replaced by an
// older copy, Open finds it behind the journal and numbering resumes above
// the journal's mark instead of issuing the same numbers again.

// journalVersion is the layout of the journal file.
const journalVersion = 1

// DefaultJournalBlock is how many numbers the journal reserves ahead of the
// last committed one when Options.JournalBlock is zero: after a crash
// followed by the loss of the store, at most this many numbers of a serie are
// skipped (and must be reported to DGI as annulled). Each block costs four
// flushes (the journal and the witness, each a file and its folder): 200
// keeps them at 2 % of the flushes of a sale, now that a sale costs one
// (issue 35; at 100 they were 4 %).
const DefaultJournalBlock = 200

// journalFile is the journal as stored (JSON).
type journalFile struct {
	Version   int       `json:"version"`
	StoreID   string    `json:"store_id"`
	Clean     bool      `json:"clean"` // written by Close: committed is the exact counter
	WrittenAt time.Time `json:"written_at"`
	// Generation counts the journal's writes (each raises it by one; the
	// first write of a profile's journal is 1): the numbering witness
	// records it, so that a journal put back from an older copy is found
	// behind it (witness.go). 0 in a journal written before witnesses.
	Generation int64          `json:"generation,omitempty"`
	Sequences  []journalEntry `json:"sequences"`
}

// journalEntry is the mark of one (type, serie).
type journalEntry struct {
	Type  cfe.Type `json:"tipo"`
	Serie string   `json:"serie"`
	// Committed is a number the store had certainly committed (its counter)
	// when the entry was written: a store found below it lost CFEs.
	Committed int64 `json:"committed"`
	// Reserved bounds every committed number: the committer never commits a
	// number above it without first writing a higher one.
	Reserved int64 `json:"reserved"`
}

// journal is the open journal of a DB. Its methods serialize on mu; the
// committer, Close, MarkUsedElsewhere and ResumeNumbering write it.
type journal struct {
	path  string
	block int64

	mu      sync.Mutex
	storeID string
	entries map[seqKey]journalEntry // what the file holds
	broken  error                   // the last write failed: every commit needs a new write
	gen     int64                   // the generation of the last write (journalFile.Generation)
	witness *witness                // written after the journal; nil without Options.Witness
}

// readJournal reads the journal at path; nil without error when there is
// none.
func readJournal(path string) (*journalFile, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var j journalFile
	if err := json.Unmarshal(b, &j); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if j.Version != journalVersion {
		return nil, fmt.Errorf("version %d, want %d", j.Version, journalVersion)
	}
	return &j, nil
}

// write replaces the journal's file with entries, durably: a new file is
// written and fsynced, renamed over the old one, and the directory fsynced.
// The caller holds j.mu.
//
// Each write raises the generation, even one that fails (the file may hold
// it anyway), and is followed by the witness's (witness.go): the witness is
// never ahead of the journal. A witness that cannot be written does not fail
// the write: the witness is a safeguard (WitnessStatus reports it), and it
// lags the journal until a later write succeeds.
func (j *journal) write(entries map[seqKey]journalEntry, clean bool, now time.Time) error {
	j.gen++
	f := journalFile{Version: journalVersion, StoreID: j.storeID, Clean: clean, WrittenAt: now.UTC(), Generation: j.gen}
	for _, e := range entries {
		f.Sequences = append(f.Sequences, e)
	}
	slices.SortFunc(f.Sequences, func(a, b journalEntry) int {
		return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(a.Serie, b.Serie))
	})
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	if err := durable.WriteFile(j.path, append(data, '\n'), true); err != nil {
		j.broken = err
		return err
	}
	j.entries, j.broken = entries, nil
	if j.witness != nil {
		_ = j.witness.record(entries, j.gen, j.storeID, clean, now) // kept in witness.err
	}
	return nil
}

// cover makes the journal bound every number of batch before the committer
// writes it: a sequence whose highest number in the batch lies above its
// reserved mark gets a new mark a block ahead (within the number's range), and
// the file is written once for the whole batch. Each sequence's committed
// mark is its counter on disk before the batch (the prev of its first slot).
func (j *journal) cover(batch []*slot, now time.Time) error {
	type need struct {
		prev, top, hnro int64
	}
	needs := map[seqKey]need{}
	for _, s := range batch {
		k, n := s.key(), s.res.Nro
		nd, seen := needs[k]
		if !seen {
			nd.prev = s.prev // slots of a sequence come in number order: the first follows the disk's counter
		}
		if n > nd.top {
			nd.top, nd.hnro = n, s.res.Range.HNro
		}
		needs[k] = nd
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	var next map[seqKey]journalEntry
	for k, nd := range needs {
		e, ok := j.entries[k]
		if ok && nd.top <= e.Reserved && j.broken == nil {
			continue
		}
		if next == nil {
			next = make(map[seqKey]journalEntry, len(j.entries)+1)
			for k2, e2 := range j.entries {
				next[k2] = e2
			}
		}
		reserved := nd.top + j.block - 1
		if nd.hnro >= nd.top {
			reserved = min(reserved, nd.hnro) // the next range may start anywhere: never reserve past this one
		}
		next[k] = journalEntry{Type: k.Type, Serie: k.Serie, Committed: max(e.Committed, nd.prev),
			Reserved: max(reserved, e.Reserved, nd.top)}
	}
	if next == nil {
		return nil
	}
	return j.write(next, false, now)
}

// raise records that sequence k has committed up to last (MarkUsedElsewhere,
// ResumeNumbering): both marks become at least last.
func (j *journal) raise(now time.Time, lasts ...cfe.LastNumber) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	next := make(map[seqKey]journalEntry, len(j.entries)+len(lasts))
	for k2, e2 := range j.entries {
		next[k2] = e2
	}
	for _, l := range lasts {
		k := seqKey{l.Type, l.Serie}
		e := next[k]
		next[k] = journalEntry{Type: k.Type, Serie: k.Serie, Committed: max(e.Committed, l.Last), Reserved: max(e.Reserved, l.Last)}
	}
	return j.write(next, false, now)
}

// newStoreID returns a random identifier for a new store file.
func newStoreID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}
