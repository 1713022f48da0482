package store

import (
	"os"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// Queued returns how many commits of (t, serie) wait for their turn.
func Queued(db *DB, t cfe.Type, serie string) int {
	db.mu.Lock()
	defer db.mu.Unlock()
	n := 0
	if q := db.seqs[seqKey{t, serie}]; q != nil {
		for _, s := range q.slots {
			if s.state == slotQueued {
				n++
			}
		}
	}
	return n
}

// WithMigrateBatch returns opts with schema migrations rewriting n records
// per transaction.
func WithMigrateBatch(opts Options, n int) Options {
	opts.migrateBatch = n
	return opts
}

// CheckTree is checkTree: Open's walk of the file's page tree.
var CheckTree = checkTree

// CheckPages reads every key and value of db in one read transaction, as a
// cursor walk would (compared with CheckTree in BenchmarkOpen).
func CheckPages(db *DB) error {
	return db.bolt.View(checkPages)
}

// DecodeXML is decodeXML: the signed XML of a value of the xml bucket, in
// either stored form.
var DecodeXML = decodeXML

// WithAfterArchiveWrite returns opts with Archive calling after once it has
// written each batch to the archives, before it deletes the batch from the
// live file: an error stops Archive there, as a crash would.
func WithAfterArchiveWrite(opts Options, after func() error) Options {
	opts.afterArchiveWrite = after
	return opts
}

// WithArchiveBatch returns opts with Archive moving n CFEs per batch.
func WithArchiveBatch(opts Options, n int) Options {
	opts.archiveBatch = n
	return opts
}

// StartedFast reports whether Open took the fast start (verified.go): the
// file was the one a verified clean Close left, and the whole-file check
// runs in the background.
func StartedFast(db *DB) bool { return db.known != nil }

// WaitChecked waits for the background check of a fast start to end, and
// fails t when it has not within two minutes.
func WaitChecked(t testing.TB, db *DB) {
	t.Helper()
	const within = 2 * time.Minute
	select {
	case <-db.checked:
	case <-time.After(within):
		t.Fatalf("waited %v for the background check of a fast start to end", within)
	}
}

// WithCheckSnapshot returns opts with the background check of a fast start
// calling hold once it has taken its snapshot, before the walk.
func WithCheckSnapshot(opts Options, hold func()) Options {
	opts.checkSnapshot = hold
	return opts
}

// WithoutCheckpoints returns opts with the checkpointer's own checkpoints
// off: logged CFEs reach bbolt only at a read, a write or Close.
func WithoutCheckpoints(opts Options) Options {
	opts.noCheckpoints = true
	return opts
}

// Logged returns how many logged CFEs are not checkpointed.
func Logged(db *DB) int {
	n, _, _ := db.log.pendingCount()
	return n
}

// LoggedInFiles returns the records above the checkpointed LSN that the
// commit log files of the closed store at path hold, by uuid, as Open
// would replay them.
func LoggedInFiles(t testing.TB, path string) map[string]int64 {
	t.Helper()
	var id [walIDLen]byte
	var applied uint64
	bdb, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_ = bdb.View(func(tx *bolt.Tx) error {
		copy(id[:], tx.Bucket(bucketMeta).Get(keyWALID))
		applied = walApplied(tx)
		return nil
	})
	_ = bdb.Close()
	entries, err := loggedEntries(path, id, applied)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, e := range entries {
		out[e.rec.UUID] = e.rec.Nro
	}
	return out
}

// WALEnd returns the offset after the last whole record of the log file at
// p.
func WALEnd(t testing.TB, p string) int64 {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, _, end, err := readWALFile(f)
	if err != nil {
		t.Fatal(err)
	}
	return end
}

// CurrentCounters is what Restore reads of the store it replaces: the last
// number of each (type, serie), what its commit log holds included.
func CurrentCounters(path string) (map[string]int64, error) {
	m, _, err := currentCounters(path)
	out := map[string]int64{}
	for k, n := range m {
		out[k.String()] = n
	}
	return out, err
}

// WithCheckpointHook returns opts with hook run in every checkpoint's
// transaction before it writes: an error fails the checkpoint.
func WithCheckpointHook(opts Options, hook func() error) Options {
	opts.checkpointHook = hook
	return opts
}
