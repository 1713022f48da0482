package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// defaultMigrateBatch is how many records a migration rewrites per
// transaction (Options.migrateBatch, which tests lower): enough to be quick,
// few enough that a file with years of CFEs never needs one huge transaction
// in memory.
const defaultMigrateBatch = 500

// migrateV1 moves the signed XML of schema-1 records, which kept it inside the
// JSON record (base64-encoded), to the xml bucket under the record's commit
// sequence. It may be interrupted anywhere and run again: a record already
// moved has no xml field and is left alone, and the caller records the new
// schema version only after the last record.
func (db *DB) migrateV1() error {
	var after []byte // last key handled
	for {
		var more bool
		err := db.bolt.Update(func(tx *bolt.Tx) error {
			batch, next := readAfter(tx.Bucket(bucketCFEs), after, db.opts.migrateBatch)
			for _, kv := range batch {
				if err := migrateRecordV1(tx, kv[0], kv[1]); err != nil {
					return err
				}
			}
			after, more = next, next != nil
			return nil
		})
		if err != nil || !more {
			return err
		}
	}
}

// readAfter copies up to n key/value pairs of b that come after key after
// (from the first key when after is nil), so the caller may write to b while
// using them. next is the last key read when more may follow, else nil.
func readAfter(b *bolt.Bucket, after []byte, n int) (kvs [][2][]byte, next []byte) {
	c := b.Cursor()
	k, v := c.First()
	if after != nil {
		if k, v = c.Seek(after); k != nil && bytes.Equal(k, after) {
			k, v = c.Next()
		}
	}
	for ; k != nil; k, v = c.Next() {
		if len(kvs) == n {
			return kvs, kvs[n-1][0]
		}
		kvs = append(kvs, [2][]byte{bytes.Clone(k), bytes.Clone(v)})
	}
	return kvs, nil
}

// migrateRecordV1 moves the XML of the schema-1 record v, stored under uuid.
func migrateRecordV1(tx *bolt.Tx, uuid, v []byte) error {
	var old struct {
		XML []byte `json:"xml"`
	}
	if err := json.Unmarshal(v, &old); err != nil {
		return fmt.Errorf("cfe %s: %w", uuid, err)
	}
	if len(old.XML) == 0 {
		return nil // already moved
	}
	var rec issuedRecord
	if err := json.Unmarshal(v, &rec); err != nil {
		return fmt.Errorf("cfe %s: %w", uuid, err)
	}
	if err := tx.Bucket(bucketXML).Put(seqBytes(rec.OutboxSeq), old.XML); err != nil {
		return err
	}
	return putRecord(tx, &rec)
}

// migrateV2 compresses the signed XML of schema-2 files, stored as it was
// signed, in place (xmlcodec.go). Each value is compressed, decompressed
// again and compared with the original before it replaces it. Like
// migrateV1 it may be interrupted anywhere and run again: a value already
// compressed is left alone.
func (db *DB) migrateV2() error {
	if err := db.bolt.View(db.codec.load); err != nil {
		return err
	}
	var after []byte
	for {
		var more bool
		err := db.bolt.Update(func(tx *bolt.Tx) error {
			batch, next := readAfter(tx.Bucket(bucketXML), after, db.opts.migrateBatch)
			for _, kv := range batch {
				if len(kv[1]) > 0 && kv[1][0] == xmlCompressed {
					continue // already compressed
				}
				e, err := db.codec.encode(kv[1])
				if err != nil {
					return err
				}
				if err := putXML(tx, kv[0], e); err != nil {
					return err
				}
				back, err := decodeXML(tx, e.value)
				if err != nil || !bytes.Equal(back, kv[1]) {
					return fmt.Errorf("xml %d: compressed form does not read back exactly (%w)", seqOf(kv[0]), err)
				}
			}
			after, more = next, next != nil
			return nil
		})
		if err != nil || !more {
			return err
		}
	}
}

// migrateV3 builds the search bucket (search.go) of a schema-3 file: the day
// counters and the words of every CFE of the live file and of the yearly
// archives beside it. It starts from an empty bucket, so that a run an
// interruption cut short is simply run again (counters would otherwise add
// up twice). A CFE whose record or XML cannot be read is counted without
// words; an archive that cannot be read fails the migration (Open says
// so), since its CFEs would otherwise be missing from every search.
func (db *DB) migrateV3() error {
	const op = "store.Open"
	err := db.bolt.Update(func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket(bucketSearch); err != nil && !errors.Is(err, berrors.ErrBucketNotFound) {
			return err
		}
		_, err := tx.CreateBucket(bucketSearch)
		return err
	})
	if err != nil {
		return err
	}
	if err := db.bolt.View(db.codec.load); err != nil {
		return err
	}
	type entry struct {
		tk    []byte
		words []string
	}
	index := func(tx *bolt.Tx, batch [][2][]byte) []entry {
		out := make([]entry, 0, len(batch))
		for _, kv := range batch {
			var words []string
			if rec, err := readRecord(tx, op, string(kv[1]), true); err == nil {
				words = wordsOfXML(rec.XML)
			}
			out = append(out, entry{kv[0], words})
		}
		return out
	}
	write := func(tx *bolt.Tx, entries []entry, skipLive bool) error {
		for _, e := range entries {
			is, ok := fromTimeKey(e.tk)
			if !ok {
				continue
			}
			k := seqKey{is.Type, is.Serie}
			if skipLive && tx.Bucket(bucketByNumber).Get(numberKey(k, is.Nro)) != nil {
				continue // in both files after an interrupted move: counted live
			}
			if err := putSearch(tx, e.tk, k, e.words); err != nil {
				return err
			}
		}
		return nil
	}
	var after []byte
	for more := true; more; {
		err := db.bolt.Update(func(tx *bolt.Tx) error {
			batch, next := readAfter(tx.Bucket(bucketByTime), after, db.opts.migrateBatch)
			after, more = next, next != nil
			return write(tx, index(tx, batch), false)
		})
		if err != nil {
			return err
		}
	}
	for _, year := range db.archiveYears() {
		after = nil
		for more := true; more; {
			var entries []entry
			err := db.viewArchive(op, year, func(tx *bolt.Tx) error {
				batch, next := readAfter(tx.Bucket(bucketByTime), after, db.opts.migrateBatch)
				after, more = next, next != nil
				entries = index(tx, batch)
				return nil
			})
			if err != nil {
				return fmt.Errorf("archive %d: %w", year, err)
			}
			if err := db.bolt.Update(func(tx *bolt.Tx) error { return write(tx, entries, true) }); err != nil {
				return err
			}
		}
	}
	return nil
}
