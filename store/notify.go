package store

import "sync"

// Commit notifications. After every group of signed CFEs made durable (the
// committer's group in the commit log, and BulkLoad's transaction), the
// store tells whoever watches: the outbox's deliverer sends them at once instead of at its next
// poll, and the backup schedule counts them toward backup.every_n. The
// notification is raised by the commit itself, so whoever signs (the local
// module, a one-shot command, a bulk fill) raises it, and nothing that did
// not commit does (a replayed request, a refused one, a failed write).
//
// Each watcher has a channel with room for one value: a notification that
// finds it full is dropped, the one waiting already says "there are new
// CFEs". Committed counts them exactly, for a watcher that needs how many.

// commitWatch is the store's watchers and its count of committed CFEs.
type commitWatch struct {
	mu        sync.Mutex
	watchers  map[chan struct{}]struct{}
	committed uint64 // CFEs committed since Open
}

// WatchCommits returns a channel that receives a value after every
// group of signed CFEs made durable (at most one value waits: the
// notifications coalesce), and a function that stops them. The value is
// sent once the group is on disk and before the callers whose CFEs it
// stored are answered (what a watcher then reads checkpoints them first): when Commit returns, its notification is already
// waiting. The channel is never closed.
func (db *DB) WatchCommits() (c <-chan struct{}, stop func()) {
	ch := make(chan struct{}, 1)
	w := &db.watch
	w.mu.Lock()
	if w.watchers == nil {
		w.watchers = map[chan struct{}]struct{}{}
	}
	w.watchers[ch] = struct{}{}
	w.mu.Unlock()
	return ch, func() {
		w.mu.Lock()
		delete(w.watchers, ch)
		w.mu.Unlock()
	}
}

// Committed returns how many signed CFEs the store has committed since Open.
func (db *DB) Committed() uint64 {
	db.watch.mu.Lock()
	defer db.watch.mu.Unlock()
	return db.watch.committed
}

// notifyCommit records n CFEs committed by one transaction and wakes the
// watchers; it never blocks.
func (db *DB) notifyCommit(n int) {
	if n <= 0 {
		return
	}
	w := &db.watch
	w.mu.Lock()
	defer w.mu.Unlock()
	w.committed += uint64(n)
	for ch := range w.watchers {
		select {
		case ch <- struct{}{}:
		default: // one is waiting already
		}
	}
}
