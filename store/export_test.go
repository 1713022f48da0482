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
