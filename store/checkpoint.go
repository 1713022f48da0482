package store

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"maps"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Checkpoints: the logged CFEs go into bbolt (wal.go). The checkpointer
// goroutine starts one when walCheckpointN CFEs wait, when the oldest has
// waited walCheckpointAge, when none was logged for walCheckpointIdle, or
// when the active log file is three quarters full; any other read or write
// of the store starts one first (barrier); Close ends with one.

// kickCheckpointer tells the checkpointer that CFEs were logged.
func (db *DB) kickCheckpointer() {
	select {
	case db.ckKick <- struct{}{}:
	default:
	}
}

func (db *DB) runCheckpointer() {
	defer close(db.ckDone)
	t := time.NewTimer(time.Hour)
	t.Stop()
	for {
		if db.opts.noCheckpoints {
			// a test's: only barriers and Close checkpoint
		} else if wait := db.checkpointDue(time.Now()); wait == 0 {
			_ = db.checkpoint()
		} else if wait > 0 {
			t.Reset(wait)
		}
		select {
		case <-db.ckKick:
		case <-t.C:
		case <-db.quit:
			return
		}
		t.Stop()
	}
}

// checkpointDue returns 0 when a checkpoint is due now, how long until one
// is otherwise, or -1 when nothing waits.
func (db *DB) checkpointDue(now time.Time) time.Duration {
	l := db.log
	n, oldest, last := l.pendingCount()
	if n == 0 {
		return -1
	}
	l.mu.Lock()
	full := l.files[l.active].off >= walFileSize*3/4
	l.mu.Unlock()
	if n >= walCheckpointN || full {
		return 0
	}
	wait := min(oldest.Add(walCheckpointAge).Sub(now), last.Add(walCheckpointIdle).Sub(now))
	return max(wait, 0)
}

// barrier checkpoints the logged CFEs, if any, so that a read or write of
// bbolt that follows sees them and comes after them. A failed checkpoint is
// recorded (WriteHealth) and the caller goes on with what bbolt holds.
func (db *DB) barrier() {
	if db.log == nil {
		return
	}
	if n, _, _ := db.log.pendingCount(); n > 0 {
		_ = db.checkpoint()
	}
}

// checkpoint writes every logged CFE not in bbolt yet into bbolt in one
// transaction, with the last LSN it holds, and then lets the log file that
// held them be written again.
func (db *DB) checkpoint() error {
	l := db.log
	l.ckMu.Lock()
	defer l.ckMu.Unlock()
	l.mu.Lock()
	entries := l.pendingSnapshot()
	if len(entries) == 0 {
		l.mu.Unlock()
		return nil
	}
	l.switchFile()
	l.mu.Unlock()

	err := db.applyLogged(entries)
	if !errors.Is(err, ErrDamaged) {
		db.ckWrites.record(err, db.opts.Now())
	}
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.removePending(entries)
	l.mu.Unlock()
	db.pending.Add(int64(len(entries)))
	return nil
}

// applyLogged writes entries (in LSN order, following what bbolt holds) into
// bbolt in one transaction that also records the last LSN as applied.
func (db *DB) applyLogged(entries []*walEntry) error {
	return db.boltUpdateNow("store.checkpoint", func(tx *bolt.Tx) error { return applyLoggedTx(db, tx, entries) })
}

// applyLoggedTx is applyLogged's transaction.
func applyLoggedTx(db *DB, tx *bolt.Tx, entries []*walEntry) error {
	if h := db.opts.checkpointHook; h != nil {
		if err := h(); err != nil {
			return err
		}
	}
	db.room.ensure(tx.Size())
	ranges := rangeCache{}
	for _, e := range entries {
		rec := *e.rec // the pending set's copy is read by lookups meanwhile
		if err := checkCommit(tx, ranges, &rec, e.prev, nil); err != nil {
			return fmt.Errorf("checkpoint of the logged CFE %s (record %d): %w", rec.UUID, e.lsn, err)
		}
		if err := putCommit(tx, &rec); err != nil {
			return err
		}
	}
	return tx.Bucket(bucketMeta).Put(keyWALApplied, binary.BigEndian.AppendUint64(nil, entries[len(entries)-1].lsn))
}

// walApplied reads the last LSN checkpointed into the file.
func walApplied(tx *bolt.Tx) uint64 {
	v := tx.Bucket(bucketMeta).Get(keyWALApplied)
	if len(v) != 8 {
		return 0
	}
	return binary.BigEndian.Uint64(v)
}

// openLog opens the commit log (creating its files for a new store) and
// replays into bbolt the logged CFEs bbolt lacks: those acknowledged before
// a crash or a power cut, in one transaction. It runs in Open, after init
// and before the numbering is opened.
func (db *DB) openLog() error {
	var applied uint64
	var id [walIDLen]byte
	dicts := map[[dictHashLen]byte]bool{}
	err := db.bolt.View(func(tx *bolt.Tx) error {
		applied = walApplied(tx)
		copy(id[:], tx.Bucket(bucketMeta).Get(keyWALID))
		c := tx.Bucket(bucketMeta).Cursor()
		for k, _ := c.Seek(keyDictPrefix); k != nil && bytes.HasPrefix(k, keyDictPrefix); k, _ = c.Next() {
			var h [dictHashLen]byte
			if n, err := hex.Decode(h[:], k[len(keyDictPrefix):]); err == nil && n == dictHashLen {
				dicts[h] = true
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	l, found, dictContents, err := openCommitLog(db.path, id, applied, db.opts.Now())
	if err != nil {
		return err
	}
	db.log = l
	maps.Copy(l.dicts, dicts)
	if len(found) > 0 {
		if err := db.replayLogged(found, dictContents); err != nil {
			return err
		}
	}
	l.afterReplay()
	return nil
}

// replayLogged writes the CFEs found in the log into bbolt, as a checkpoint
// does, and brings the in-memory counters, the outbox's size and the
// dictionaries up to date.
func (db *DB) replayLogged(found []*walEntry, dictContents [][]byte) error {
	const op = "store.Open"
	carried := map[[dictHashLen]byte]*xmlDict{}
	for _, c := range dictContents {
		d, err := dictFor(c)
		if err != nil {
			return fmt.Errorf("%w: commit log dictionary: %w", ErrDamaged, err)
		}
		carried[d.hash] = d
	}
	err := db.boltUpdateNow(op, func(tx *bolt.Tx) error {
		meta := tx.Bucket(bucketMeta)
		for _, e := range found {
			var h [dictHashLen]byte
			copy(h[:], e.rec.zxml.value[5:xmlHeaderLen])
			d := carried[h]
			if d == nil {
				content := meta.Get(dictKey(h))
				if content == nil {
					return fmt.Errorf("%w: logged CFE %s: dictionary %x missing", ErrDamaged, e.rec.UUID, h)
				}
				var err error
				if d, err = cachedDict(h, content); err != nil {
					return err
				}
			}
			e.rec.zxml.dict = d
			xml, err := d.dec.DecodeAll(e.rec.zxml.value[xmlHeaderLen:], nil)
			if err != nil || crc32.Checksum(xml, crcTable) != binary.BigEndian.Uint32(e.rec.zxml.value[1:5]) {
				return fmt.Errorf("%w: logged CFE %s: %w", ErrDamaged, e.rec.UUID, errXMLChecksum)
			}
			e.rec.words = wordsOfXML(xml)
		}
		return applyLoggedTx(db, tx, found)
	})
	if err != nil {
		return err
	}
	for _, e := range found {
		q := db.seq(e.rec.key())
		q.last = max(q.last, e.rec.Nro)
		db.log.dicts[e.rec.zxml.dict.hash] = true
	}
	db.pending.Add(int64(len(found)))
	return db.bolt.View(db.codec.load)
}
