package store

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// The committer is the one goroutine that writes CFEs. It takes every queued
// CFE whose turn has come, writes them all in one transaction (group commit),
// and repeats. While it waits for one fsync, new commits queue up for the
// next transaction, so batches grow with concurrency without any added delay.

func (db *DB) wakeCommitter() {
	select {
	case db.kick <- struct{}{}:
	default: // already woken
	}
}

func (db *DB) runCommitter() {
	defer close(db.committerDone)
	hold := time.NewTimer(time.Hour)
	hold.Stop()
	for {
		batch, wait := db.collect(time.Now())
		if len(batch) > 0 {
			db.write(batch)
			continue
		}
		if wait > 0 {
			hold.Reset(wait)
		}
		select {
		case <-db.kick:
		case <-hold.C:
		case <-db.quit:
			return
		}
		hold.Stop()
	}
}

// collect takes the queued slots whose turn has come: in each sequence, from
// the lowest handed-out number up, while the slots are queued and no hole lies
// below them. It marks them as being written and records the counter value
// each one must follow on disk.
//
// Under load it may hold them back a little instead, returning no batch and
// how long it may wait at most (a Commit or Release wakes it before). Each
// transaction costs two fsyncs and rewrites the same pages whatever its size,
// so when the processors are saturated anyway, fewer and larger transactions
// leave more of them to signing. It holds back while all of these are true:
//   - more CFEs have recently been in progress at once than Go has processors
//     (DB.busy), so the processors have work without the writes;
//   - some CFE is still being signed, so more will be ready soon;
//   - fewer than 4/5 of the recent CFEs in progress are ready;
//   - no ready CFE has waited Options.MaxBatchDelay yet;
//   - Options.DisableHoldBack is not set.
//
// A lone caller, or fewer callers than processors, never waits.
func (db *DB) collect(now time.Time) (batch []*slot, wait time.Duration) {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return nil, 0
	}
	type ready struct {
		s    *slot
		prev int64 // the counter value s must follow on disk
	}
	var found []ready
	signing := 0 // reservations still being signed
	oldest := now
	for _, q := range db.seqs {
		hole, hasHole := q.lowestHole()
		prev, inTurn := q.last, true
		for _, n := range slices.Sorted(maps.Keys(q.slots)) {
			s := q.slots[n]
			if s.state == slotReserved {
				signing++
			}
			if inTurn = inTurn && s.state == slotQueued && !(hasHole && hole < n); !inTurn {
				continue
			}
			found = append(found, ready{s, prev})
			prev = n
			if s.queued.Before(oldest) {
				oldest = s.queued
			}
		}
	}
	if len(found) == 0 {
		return nil, 0
	}
	saturated := db.busy > float64(runtime.GOMAXPROCS(0))
	if left := db.opts.MaxBatchDelay - now.Sub(oldest); !db.opts.DisableHoldBack && saturated && signing > 0 &&
		float64(len(found)) < 0.8*db.busy && len(found) < maxBatch && left > 0 {
		return nil, left
	}
	for _, r := range found {
		r.s.state, r.s.prev = slotWriting, r.prev
		batch = append(batch, r.s)
	}
	return batch, 0
}

// maxBatch bounds the CFEs of one transaction that collect waits for.
const maxBatch = 64

// write logs batch: each slot's checks against the store and the log, then
// one append to the commit log with one fdatasync (wal.go), after which the
// logged CFEs are durable and visible to lookups, and their callers are
// answered; a checkpoint writes them into bbolt later. A slot whose own
// checks fail is finished with that error and writes nothing; the later
// slots of its sequence go back to waiting, since they would follow a gap.
// Slots of other sequences are unaffected. If the write itself fails, every
// slot of the batch fails with EUNAVAILABLE.
func (db *DB) write(batch []*slot) {
	now := db.opts.Now()
	results := make([]error, len(batch))
	deferred := make([]bool, len(batch))
	var txErr error
	if db.journal != nil {
		txErr = db.journal.cover(batch, now) // the journal must bound a number before the number is on disk
	}
	if txErr == nil {
		txErr = db.logBatch(batch, results, deferred, now)
		db.transactions.Add(1)
	}

	if !errors.Is(txErr, ErrDamaged) { // a damaged file is no disk failure: it has its own error
		db.writes.record(txErr, now)
	}
	if txErr == nil {
		// Durable in the log: the watchers hear of it before the callers
		// are answered (what they read checkpoints it first).
		db.notifyCommit(committedIn(deferred, results))
		db.kickCheckpointer()
	}

	db.mu.Lock()
	defer db.mu.Unlock()
	wall := time.Now()
	for i, s := range batch {
		q := db.seqs[s.key()]
		switch {
		case txErr != nil:
			q.remove(s.res.Nro, wall)
			s.finish(db.commitFailed(txErr))
		case deferred[i]:
			s.state = slotQueued
		case results[i] != nil:
			q.remove(s.res.Nro, wall)
			s.finish(results[i])
		default:
			q.commit(s.res.Nro)
			s.finish(nil)
		}
	}
	if txErr != nil {
		db.resyncLocked()
	}
}

// logBatch checks the CFEs of batch against bbolt and the logged CFEs not
// checkpointed yet, appends those that pass to the commit log in one write
// and one fdatasync, and makes them visible to lookups. results and
// deferred get each slot's outcome as write documents.
func (db *DB) logBatch(batch []*slot, results []error, deferred []bool, now time.Time) error {
	l := db.log
	// l.mu is held from the checks to the append: a checkpoint drops
	// entries from the pending set only under it, so the set read here
	// holds whatever the bbolt snapshot below lacks.
	l.mu.Lock()
	defer l.mu.Unlock()
	pend := &pendingView{l: l, uuids: map[string]bool{}, numbers: map[string]bool{}, last: map[seqKey]int64{}}
	var entries []*walEntry
	err := db.boltViewNow("store.Commit", func(tx *bolt.Tx) error {
		broken := map[seqKey]bool{}
		ranges := rangeCache{}
		for i, s := range batch {
			k := s.key()
			if broken[k] {
				deferred[i] = true
				continue
			}
			if err := checkCommit(tx, ranges, s.rec, s.prev, pend); err != nil {
				results[i], broken[k] = err, true
				continue
			}
			s.rec.CommittedAt = now
			entries = append(entries, &walEntry{rec: s.rec, prev: s.prev, at: time.Now()})
			pend.add(s.rec)
		}
		return nil
	})
	if err != nil || len(entries) == 0 {
		return err
	}
	if err := db.ensureLogID(); err != nil {
		return err
	}
	if err := l.append(entries); err != nil {
		return err
	}
	l.addPending(entries)
	return nil
}

// ensureLogID gives the store file its log identity (wal.go) before its
// first logged CFE: once in the file's life, so that a file only read is
// never written. The caller holds db.log.mu.
func (db *DB) ensureLogID() error {
	l := db.log
	if l.id != ([walIDLen]byte{}) {
		return nil
	}
	var id [walIDLen]byte
	if _, err := rand.Read(id[:]); err != nil {
		return err
	}
	if err := db.boltUpdateNow("store.Commit", func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(keyWALID, id[:])
	}); err != nil {
		return err
	}
	l.id = id
	return nil
}

// pendingView is what checkCommit reads besides bbolt while a group is
// logged: the logged CFEs not checkpointed, and those of the group checked
// before.
type pendingView struct {
	l       *commitLog
	uuids   map[string]bool
	numbers map[string]bool
	last    map[seqKey]int64
}

func (p *pendingView) add(rec *issuedRecord) {
	k := rec.key()
	p.uuids[rec.UUID] = true
	p.numbers[string(numberKey(k, rec.Nro))] = true
	p.last[k] = rec.Nro
}

func (p *pendingView) hasUUID(uuid string) bool {
	return p.uuids[uuid] || p.l.lookupUUID(uuid) != nil
}

func (p *pendingView) hasNumber(k seqKey, nro int64) bool {
	return p.numbers[string(numberKey(k, nro))] || p.l.lookupNumber(k, nro) != nil
}

// lastOf returns the highest number of k logged and not checkpointed.
func (p *pendingView) lastOf(k seqKey) (int64, bool) {
	if n, ok := p.last[k]; ok {
		return n, true
	}
	return p.l.lastLogged(k)
}

// committedIn counts the CFEs of a batch written by its transaction: those
// neither deferred nor refused by their own checks.
func committedIn(deferred []bool, results []error) int {
	n := 0
	for i := range deferred {
		if !deferred[i] && results[i] == nil {
			n++
		}
	}
	return n
}

// resyncLocked reloads the counters from disk after a failed transaction: a
// commit whose fsync reported an error may still have reached the disk, and
// numbering must continue after what the disk holds. The caller holds db.mu.
func (db *DB) resyncLocked() {
	_ = db.bolt.View(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketCounters).ForEach(func(_, v []byte) error {
			var c counterRecord
			if err := json.Unmarshal(v, &c); err != nil {
				return nil // the next commit of this sequence will fail its checks loudly
			}
			q := db.seq(seqKey{c.Type, c.Serie})
			if c.Last > q.last {
				q.last = c.Last
				for h := range q.holes {
					if h <= c.Last {
						delete(q.holes, h)
					}
				}
				q.broadcast()
			}
			return nil
		})
	})
}

// rangeCache holds the ranges a transaction has read, by ID: the CFEs of a
// batch mostly share one range, and its record carries DGI's whole CAE file.
type rangeCache map[string]*rangeRecord

// get reads range id once per transaction; nil when it does not exist.
func (c rangeCache) get(tx *bolt.Tx, id string) (*rangeRecord, error) {
	if r, ok := c[id]; ok {
		return r, nil
	}
	raw := tx.Bucket(bucketRanges).Get([]byte(id))
	if raw == nil {
		c[id] = nil
		return nil, nil
	}
	if d, ok := decodedRanges.Load(id); ok && bytes.Equal(d.(decodedRange).raw, raw) {
		c[id] = d.(decodedRange).rec
		return c[id], nil
	}
	r := new(rangeRecord)
	if err := json.Unmarshal(raw, r); err != nil {
		return nil, fmt.Errorf("decode %q: %w", id, err)
	}
	decodedRanges.Store(id, decodedRange{raw: bytes.Clone(raw), rec: r})
	c[id] = r
	return r, nil
}

// decodedRanges keeps the last record decoded of each range, with its
// bytes: a range's record carries DGI's whole CAE file, and decoding it was
// a noticeable part of every commit. A record is used only for the exact
// bytes it was decoded from, and only read.
var decodedRanges sync.Map // range id → decodedRange

type decodedRange struct {
	raw []byte
	rec *rangeRecord
}

// checkCommit verifies everything that could make the CFE rec, which must
// follow counter value prev, unstorable, before anything of it is written:
// against tx, and against pend (the logged CFEs not in tx yet) unless it is
// nil (a checkpoint, whose transaction holds them).
func checkCommit(tx *bolt.Tx, ranges rangeCache, rec *issuedRecord, prev int64, pend *pendingView) error {
	const op = "store.Commit"
	k := rec.key()
	if tx.Bucket(bucketCFEs).Get([]byte(rec.UUID)) != nil || (pend != nil && pend.hasUUID(rec.UUID)) {
		return &cfe.Error{Code: cfe.ECONFLICT, Op: op, Respuesta: cfe.RespConflictoUUID,
			Message: fmt.Sprintf("ya existe un comprobante con el uuid %s", rec.UUID)}
	}
	var c counterRecord
	if _, err := getJSON(tx.Bucket(bucketCounters), counterKey(k), &c); err != nil {
		return err
	}
	used := tx.Bucket(bucketByNumber).Get(numberKey(k, rec.Nro)) != nil
	if pend != nil {
		if n, ok := pend.lastOf(k); ok {
			c.Last = n
		}
		used = used || pend.hasNumber(k, rec.Nro)
	}
	if c.Last != prev || rec.Nro <= c.Last || used {
		return &cfe.Error{Code: cfe.EINTERNAL, Op: op, Message: "error interno de numeración",
			Err: fmt.Errorf("sequence %s: counter on disk is %d, expected %d before %d", k, c.Last, prev, rec.Nro)}
	}
	r, err := ranges.get(tx, rec.RangeID)
	if err != nil {
		return err
	}
	switch {
	case r == nil:
		return &cfe.Error{Code: cfe.EINVALID, Op: op, Message: fmt.Sprintf("el rango CAE %s no existe", rec.RangeID)}
	case r.Type != rec.Type || r.Serie != rec.Serie || rec.Nro < r.DNro || rec.Nro > r.HNro:
		return &cfe.Error{Code: cfe.EINVALID, Op: op,
			Message: fmt.Sprintf("el número %d de la serie %s no pertenece al rango CAE %s", rec.Nro, rec.Serie, r.ID)}
	case toCAERecord(r.domain().CAEData()) != rec.CAE:
		return &cfe.Error{Code: cfe.EINVALID, Op: op, Message: fmt.Sprintf("los datos del CAE no coinciden con el rango %s", r.ID)}
	}
	if signed := cfe.DateOf(rec.TmstFirma.In(cfe.Montevideo)); signed.After(r.Vencimiento) {
		return &cfe.Error{Code: cfe.EUNAVAILABLE, Op: op, Respuesta: cfe.RespSinRangoCAE,
			Message: fmt.Sprintf("el rango CAE %s venció el %s y el comprobante se firmó el %s", r.ID, r.Vencimiento, signed)}
	}
	return nil
}

// putCommit writes everything of one CFE: counter, record, signed XML,
// indexes, outbox entry and audit event, with rec.CommittedAt as the commit
// time. It sets rec.OutboxSeq.
func putCommit(tx *bolt.Tx, rec *issuedRecord) error {
	k := rec.key()
	now := rec.CommittedAt
	outbox := appendOnly(tx, bucketOutbox)
	seq, err := outbox.NextSequence()
	if err != nil {
		return err
	}
	rec.OutboxSeq = seq
	uuid := []byte(rec.UUID)
	if err := putJSON(tx.Bucket(bucketCounters), counterKey(k), counterRecord{Type: rec.Type, Serie: rec.Serie, Last: rec.Nro}); err != nil {
		return err
	}
	if err := putRecord(tx, rec); err != nil {
		return err
	}
	if err := putXML(tx, seqBytes(seq), rec.zxml); err != nil {
		return err
	}
	if err := tx.Bucket(bucketByNumber).Put(numberKey(k, rec.Nro), uuid); err != nil {
		return err
	}
	tk := timeKey(rec.TmstFirma, k, rec.Nro)
	if err := tx.Bucket(bucketByTime).Put(tk, uuid); err != nil {
		return err
	}
	if err := putSearch(tx, tk, k, rec.words); err != nil {
		return err
	}
	if err := putJSON(outbox, seqBytes(seq), outboxEntry{UUID: rec.UUID, CommittedAt: now}); err != nil {
		return err
	}
	return appendAudit(tx, AuditEvent{At: now, Kind: AuditSigned, UUID: rec.UUID, Type: rec.Type,
		Serie: rec.Serie, Nro: rec.Nro, RangeID: rec.RangeID})
}

// appendOnly returns bucket name of tx set to fill its pages completely: its
// keys are sequence numbers, so new keys always go after the last one and a
// page once full is never written again.
func appendOnly(tx *bolt.Tx, name []byte) *bolt.Bucket {
	b := tx.Bucket(name)
	b.FillPercent = 1.0
	return b
}
