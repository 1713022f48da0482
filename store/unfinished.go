package store

import (
	"os"
)

// A creation cut short (issue 23). bbolt makes a new file with one write of
// its first four pages (two meta pages with transaction ids 0 and 1, an
// empty freelist, an empty root) and one fdatasync; the store's first
// transaction (its buckets) comes after, and grows the file past those pages.
// A power cut before that first write reached the disk whole can leave the
// file's name with some of its pages, or none (zeros), or a size short of
// them: checkFileSize and bbolt would then refuse the file as truncated or
// damaged, and the agent would wait for a technician, although the file
// never held anything. resetUnfinished empties such a file, so that bbolt
// makes it again: a file of at most those four pages whose meta pages are
// both invalid, or whose valid meta is one of bbolt's first two (transaction
// id 0 or 1: nothing was ever committed). The store's first transaction
// grows the file past four pages before its meta page names it, so a file
// that committed anything is never taken for one; cut short, it is refused
// as before. A journal, if one exists, names another store file (the
// journal is written after the first transaction), so numbering resumes
// above it as after any lost file (docs/numbering.md).

// initialPages is how many pages bbolt's first write holds.
const initialPages = 4

// resetUnfinished empties the file at path when it is an unfinished
// creation (see above). It changes nothing when another process holds the
// file, or where it cannot take the file's lock (lockExclusive).
func resetUnfinished(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil // missing (bbolt makes it) or unreadable (bbolt reports it)
	}
	defer f.Close()
	if !unfinished(f) {
		return nil
	}
	unlock, ok := lockExclusive(f)
	if !ok {
		return nil
	}
	defer unlock()
	if !unfinished(f) { // made meanwhile by the process that held the lock
		return nil
	}
	if err := f.Truncate(0); err != nil {
		return err
	}
	return f.Sync()
}

// unfinished reports whether f is an unfinished creation.
func unfinished(f *os.File) bool {
	fi, err := f.Stat()
	if err != nil || fi.Size() == 0 {
		return false
	}
	m, _, ok := currentMeta(f)
	pageSize := int64(os.Getpagesize())
	if ok {
		pageSize = int64(m.pageSize)
	}
	return fi.Size() <= initialPages*pageSize && (!ok || m.txid <= 1)
}
