package store

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"os"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/durable"
)

// Starting fast on a file a verified clean Close left.
//
// Open's whole-file check (checkTree, then checkPages) reads every page, so
// its time grows with the file (32 s at 3 M CFEs). It only needs to run when
// something may have written the file since a check proved it whole. A clean
// Close of a DB whose file was proved whole (by Open's full check, or by the
// background check below) writes a small record beside the file, durably:
// the file's size and modification time, and a SHA-256 of its two meta pages
// (which name the current transaction, the root, the freelist and the
// high-water mark). Open reads it and, when it matches the file exactly,
// checks only the root page and the freelist (checkTop) before bbolt opens
// the file, and runs the full check in the background right after (in one
// read transaction: bbolt keeps the pages that transaction sees unchanged
// while it runs). A damage found then marks the DB broken (markBroken), as a
// damage a query meets does: every later operation, commits included,
// answers the damaged error, and /health shows it.
//
// Open removes the record before anything writes the file (and syncs the
// folder with SyncParents), so a crash or a power cut leaves no record and
// the next Open checks the whole file at start. A record that does not match
// (any bbolt commit changes a meta page; any other write changes the
// modification time), or that cannot be read, does the same.

// backgroundCheckRoom is how much the file may grow, past its size at
// Open, while the background check runs without a commit waiting for it
// (bbolt grows its mapping only when no read transaction is open): at
// ≈ 2.6 KB per CFE, about 100 000 CFEs, far more than a till signs during
// the check (13 s at 3 M CFEs). On Windows, where the mapping is disk, the
// room is sized from the data instead (windowsCheckRoom, mapping.go).
const backgroundCheckRoom = 256 << 20

// verifiedVersion is the format of the record; another one is ignored.
const verifiedVersion = 1

// verifiedRecord is what a verified clean Close knew of its file.
type verifiedRecord struct {
	Version int    `json:"version"`
	Size    int64  `json:"size"`
	ModTime int64  `json:"mod_time_unix_nano"`
	Meta    string `json:"meta_sha256"` // of the first two pages (bbolt's meta pages)
	// The outbox's and the rejected list's sizes at Close, so that a fast
	// Open does not walk them to count them (the file is the same).
	Pending  int64 `json:"pending"`
	Rejected int64 `json:"rejected"`
}

// VerifiedPath is the path of the record a verified clean Close writes
// beside the store file at path. Removing it makes the next Open check the
// whole file at start.
func VerifiedPath(path string) string { return path + ".verified" }

// FileCheck reports whether Open started fast (fast: the whole-file check
// runs in the background) and returns a channel closed once that check has
// ended (at once when Open ran it at start). Damaged reports what it found.
func (db *DB) FileCheck() (fast bool, done <-chan struct{}) {
	return db.known != nil, db.checked
}

// fileState describes the store file at path as a record would, without
// the counts; ok is false when it cannot be read whole.
func fileState(path string) (verifiedRecord, bool) {
	f, err := os.Open(path)
	if err != nil {
		return verifiedRecord{}, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return verifiedRecord{}, false
	}
	m, _, ok := currentMeta(f)
	if !ok {
		return verifiedRecord{}, false
	}
	b := make([]byte, 2*int64(m.pageSize))
	if _, err := f.ReadAt(b, 0); err != nil {
		return verifiedRecord{}, false
	}
	sum := sha256.Sum256(b)
	return verifiedRecord{Version: verifiedVersion, Size: fi.Size(), ModTime: fi.ModTime().UnixNano(),
		Meta: hex.EncodeToString(sum[:])}, true
}

// readVerified returns the record beside path when it matches the file as it
// is now; ok is false when there is none, it is unreadable, or it does not
// match.
func readVerified(path string) (verifiedRecord, bool) {
	data, err := os.ReadFile(VerifiedPath(path))
	if err != nil {
		return verifiedRecord{}, false
	}
	var rec verifiedRecord
	if json.Unmarshal(data, &rec) != nil || rec.Version != verifiedVersion {
		return verifiedRecord{}, false
	}
	return rec, rec.matches(path)
}

// matches reports whether the file at path is the one rec describes.
func (rec verifiedRecord) matches(path string) bool {
	now, ok := fileState(path)
	return ok && now.Size == rec.Size && now.ModTime == rec.ModTime && now.Meta == rec.Meta
}

// removeVerified removes the record beside path; its folder is synced by
// the caller (Open's SyncParents) before anything writes the file.
func removeVerified(path string) error {
	err := os.Remove(VerifiedPath(path))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// writeVerified records the closed, verified file at path with the counts.
// A failure only costs the next Open its full check.
func writeVerified(path string, pending, rejected int64) error {
	rec, ok := fileState(path)
	if !ok {
		return nil
	}
	rec.Pending, rec.Rejected = pending, rejected
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return durable.WriteFile(VerifiedPath(path), data, true)
}

// checkInBackground runs the full check of a DB that started fast, then
// marks the file verified, or the DB broken. Close stops it (db.quit).
func (db *DB) checkInBackground() {
	defer close(db.checked)
	err := db.checkRunning(db.quit)
	switch {
	case err == nil:
		db.verified.Store(true)
	case errors.Is(err, ErrDamaged) && db.broken.Load() == nil:
		_ = db.markBroken("store.check", err) // Damaged and every later operation answer it
	}
	// Otherwise (stopped by Close, a panic boltView already recorded, the
	// file not readable): nothing proved, so Close writes no record.
}

// checkRunning is Open's full check (checkTree, then checkPages) of the
// file of a running DB, on the snapshot of one read transaction: its meta
// page is read first (retried when two commits overwrote it meanwhile), and
// bbolt frees no page that snapshot reaches while the transaction is open.
func (db *DB) checkRunning(stop <-chan struct{}) error {
	f, err := os.Open(db.path)
	if err != nil {
		return err
	}
	defer f.Close()
	for {
		var again bool
		err := db.boltView("store.check", func(tx *bolt.Tx) error {
			m, ok := metaOfTx(f, uint64(tx.ID()))
			if !ok {
				again = true
				return nil
			}
			if db.opts.checkSnapshot != nil {
				db.opts.checkSnapshot()
			}
			c, err := newTreeChecker(f, m)
			if err != nil {
				return err
			}
			c.stop = stop
			if err := c.check(m); err != nil {
				return err
			}
			return checkPagesUntil(tx, stop)
		})
		if !again {
			return err
		}
		select {
		case <-stop:
			return errStopped
		default:
		}
	}
}

// metaOfTx returns the meta page of f whose transaction id is txid; ok is
// false when neither is (two commits since the transaction began).
func metaOfTx(f *os.File, txid uint64) (boltMeta, bool) {
	m0, ok0 := readBoltMeta(f, 0)
	if ok0 && m0.txid == txid {
		return m0, true
	}
	size := int64(os.Getpagesize())
	if ok0 {
		size = int64(m0.pageSize)
	}
	if m1, ok1 := readBoltMeta(f, size); ok1 && m1.txid == txid {
		return m1, true
	}
	return boltMeta{}, false
}
