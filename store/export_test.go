package store

import "github.com/cfe-agent/cfe-agent/cfe"

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

// SetMigrateBatch makes schema migrations rewrite n records per transaction
// until the test ends.
func SetMigrateBatch(t interface{ Cleanup(func()) }, n int) {
	old := migrateBatch
	migrateBatch = n
	t.Cleanup(func() { migrateBatch = old })
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

// FailAfterArchiveWrite makes Archive stop with err after writing its first
// batch to the archives, before deleting it from the live file, until the
// test ends.
func FailAfterArchiveWrite(t interface{ Cleanup(func()) }, err error) {
	afterArchiveWrite = func() error { return err }
	t.Cleanup(func() { afterArchiveWrite = nil })
}

// SetArchiveBatch makes Archive move n CFEs per batch until the test ends.
func SetArchiveBatch(t interface{ Cleanup(func()) }, n int) {
	old := archiveBatch
	archiveBatch = n
	t.Cleanup(func() { archiveBatch = old })
}

// StartedFast reports whether Open took the fast start (verified.go): the
// file was the one a verified clean Close left, and the whole-file check
// runs in the background.
func StartedFast(db *DB) bool { return db.known != nil }

// WaitChecked waits for the background check of a fast start to end.
func WaitChecked(db *DB) { <-db.checked }

// HoldCheckSnapshot makes the background check of the next fast starts
// call hold once it has taken its snapshot, before the walk, until the
// test ends.
func HoldCheckSnapshot(t interface{ Cleanup(func()) }, hold func()) {
	checkSnapshotHook = hold
	t.Cleanup(func() { checkSnapshotHook = nil })
}
