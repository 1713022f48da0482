package store

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// Identity and lineage (docs/numbering.md "Backups and restore").
//
// Every store file has an identity, store_id in its meta bucket (hold.go
// gives it one at Open; the numbering journal names it). A data directory
// may replace its store file: Open makes a new one when the file was lost
// while the journal names the lost one, and Restore puts a backup in place
// of the current file. The file that takes the place keeps, in its meta
// bucket, the identities of the files it replaced: its lineage. A backup
// records the identity and the lineage of the file it copies, so Restore can
// tell a backup of this data directory (its current file, one of its
// ancestors, or the one the journal names) from a backup of another
// installation of the same company, which it refuses unless a technician
// names it (RestoreOptions.AcceptForeign).

var keyLineage = []byte("lineage")

// ancestorRecord is one identity in a file's lineage.
type ancestorRecord struct {
	StoreID string    `json:"store_id"`
	At      time.Time `json:"at"`
	How     string    `json:"how"` // English: why the file replaced it
}

// readLineage returns the lineage recorded in tx's meta bucket.
func readLineage(tx *bolt.Tx) ([]ancestorRecord, error) {
	var out []ancestorRecord
	if _, err := getJSON(tx.Bucket(bucketMeta), keyLineage, &out); err != nil {
		return nil, fmt.Errorf("%w: lineage: %w", ErrDamaged, err)
	}
	return out, nil
}

// addAncestors records ids (those not recorded yet, nor the file's own
// identity self) in tx's lineage; it reports whether it wrote anything.
func addAncestors(tx *bolt.Tx, self string, ids []string, how string, at time.Time) (bool, error) {
	have, err := readLineage(tx)
	if err != nil {
		return false, err
	}
	added := false
	for _, id := range ids {
		if id == "" || id == self || slices.ContainsFunc(have, func(a ancestorRecord) bool { return a.StoreID == id }) {
			continue
		}
		have = append(have, ancestorRecord{StoreID: id, At: at.UTC(), How: how})
		added = true
	}
	if !added {
		return false, nil
	}
	return true, putJSON(tx.Bucket(bucketMeta), keyLineage, have)
}

// lineageIDs returns the identities of a lineage, in the order recorded.
func lineageIDs(as []ancestorRecord) []string {
	out := make([]string, 0, len(as))
	for _, a := range as {
		out = append(out, a.StoreID)
	}
	return out
}

// inheritJournal runs in Open before the file gets an identity: a file
// that has none yet (a new one, made because the file was deleted or
// truncated) while the journal names another store is that store's
// successor, and records it as its ancestor, so that the lost file's
// backups remain this data directory's. Written before the identity, so a
// crash in between only repeats it at the next Open.
func (db *DB) inheritJournal(jf *journalFile) error {
	if jf == nil || jf.StoreID == "" {
		return nil
	}
	var has bool
	if err := db.bolt.View(func(tx *bolt.Tx) error {
		has = len(tx.Bucket(bucketMeta).Get(keyStoreID)) > 0
		return nil
	}); err != nil || has {
		return err
	}
	return db.bolt.Update(func(tx *bolt.Tx) error {
		_, err := addAncestors(tx, "", []string{jf.StoreID}, "new store file made while the numbering journal named this lost one", db.opts.Now())
		return err
	})
}

// identityLabel is how messages and the technician's flag name a backup's
// identity: a file copied before stores had one has none.
func identityLabel(id string) string {
	if id == "" {
		return "sin-identidad"
	}
	return id
}

// family is what a data directory knows of its own store files.
type family struct {
	ids     []string // the current file's identity and lineage, and the journal's store
	current string   // the current file's identity; "" when there is none or it cannot be read
	// fresh: the current file holds no CFE, live or archived, and the
	// directory knows no other file (a new installation started once): it
	// has nothing of its own a backup could replace.
	fresh bool
}

// familyOf is the family of a data directory whose current store is cur
// (nil when there is none or it cannot be read) and whose journal is jf.
func familyOf(cur *currentStore, jf *journalFile) family {
	var f family
	add := func(id string) {
		if id != "" && !slices.Contains(f.ids, id) {
			f.ids = append(f.ids, id)
		}
	}
	if cur != nil {
		f.current = cur.id
		add(cur.id)
		for _, id := range cur.lineage {
			add(id)
		}
	}
	if jf != nil {
		add(jf.StoreID)
	}
	f.fresh = cur != nil && cur.id != "" && cur.cfes == 0 && len(f.ids) == 1
	return f
}

// owns reports whether a backup of the file id, whose lineage is lineage, is
// this data directory's: nothing is known here (a new data directory), the
// current file signed nothing and has no past, or id is one of the
// directory's files.
func (f family) owns(id string) bool {
	return len(f.ids) == 0 || f.fresh || (id != "" && slices.Contains(f.ids, id))
}

// currentStore is what Restore reads of the store file it would replace.
type currentStore struct {
	id      string
	lineage []string
	cfes    int // live CFEs, and one more per range with archived ones
}

// readCurrentStore reads the identity, lineage and number of CFEs of the
// store file at path: nil when there is none, or it cannot be read (a
// truncated or damaged file is passed over, as currentCounters does: the
// journal still names its identity). An agent holding the file is refused
// (EUNAVAILABLE), as by currentCounters.
func readCurrentStore(path string) (*currentStore, error) {
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		return nil, nil
	}
	if err := checkFileSize(path); err != nil {
		return nil, nil
	}
	if err := checkLocked(path, time.Second); err != nil {
		var ce *cfe.Error
		if errors.As(err, &ce) && ce.Code == cfe.EUNAVAILABLE {
			return nil, errAgentRunning(path, err)
		}
		return nil, nil
	}
	var cur *currentStore
	err := withBolt(path, true, func(bdb *bolt.DB) error {
		return bdb.View(func(tx *bolt.Tx) error {
			meta, cfes := tx.Bucket(bucketMeta), tx.Bucket(bucketCFEs)
			if meta == nil || cfes == nil {
				return nil
			}
			lin, err := readLineage(tx)
			if err != nil {
				return err
			}
			c := &currentStore{id: string(meta.Get(keyStoreID)), lineage: lineageIDs(lin)}
			cc := cfes.Cursor()
			for k, _ := cc.First(); k != nil; k, _ = cc.Next() {
				c.cfes++
			}
			// CFEs moved to the yearly archives count as its own too.
			mc := meta.Cursor()
			for k, _ := mc.Seek(keyArchivedPrefix); k != nil && bytes.HasPrefix(k, keyArchivedPrefix); k, _ = mc.Next() {
				c.cfes++
			}
			cur = c
			return nil
		})
	})
	if err != nil {
		return nil, nil
	}
	return cur, nil
}
