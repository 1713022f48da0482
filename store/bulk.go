package store

import (
	"context"
	"fmt"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// BulkLoad commits already-signed CFEs in one transaction, through the same
// checks and the same writes as Commit (checkCommit, putCommit, the numbering
// journal), without a reservation each: what the scale tool
// (internal/scalefill) uses to fill a store with millions of CFEs. The
// records it writes are byte for byte those Commit writes for the same CFEs
// at the same clock (TestDB_BulkLoad proves it).
//
// The CFEs of each sequence must follow its counter exactly, in order (the
// first is the counter plus one), and no number of those sequences may be
// reserved meanwhile: BulkLoad refuses otherwise. It holds numbering for the
// whole transaction. Any CFE that fails its checks fails the whole call and
// nothing is written.
//
// Errors: EINVALID for a CFE that lacks a field, does not follow its counter
// or fails checkCommit; EUNAVAILABLE when numbers of its sequences are
// reserved, the store is closed or the write failed.
func (db *DB) BulkLoad(ctx context.Context, docs []*cfe.Issued) error {
	const op = "store.BulkLoad"
	if err := ctx.Err(); err != nil {
		return ctxError(op, err)
	}
	if err := db.brokenErr(op); err != nil {
		return err
	}
	batch := make([]*slot, 0, len(docs))
	for _, doc := range docs {
		rec := toIssuedRecord(doc)
		rec.Delivery = deliveryRecord{State: cfe.DeliveryPending}
		zxml, err := db.codec.encode(doc.XML)
		if err != nil {
			return &cfe.Error{Code: cfe.EINTERNAL, Op: op, Message: "no se pudo comprimir el comprobante firmado", Err: err}
		}
		rec.zxml = zxml
		rec.words = wordsOfIssued(doc)
		batch = append(batch, &slot{rec: &rec,
			res: &cfe.Reservation{Type: doc.Type, Serie: doc.Serie, Nro: doc.Nro, Range: db.rangeByID(doc.RangeID)}})
	}

	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return errClosed(op)
	}
	if db.hold != nil {
		return &cfe.Error{Code: cfe.EUNAVAILABLE, Op: op, Message: "la numeración está retenida: " + db.hold.Reason}
	}
	last := map[seqKey]int64{}
	for i, s := range batch {
		k := s.key()
		q := db.seq(k)
		if len(q.slots) > 0 {
			return &cfe.Error{Code: cfe.EUNAVAILABLE, Op: op,
				Message: fmt.Sprintf("hay números reservados en la serie %s del tipo %d; reintente", k.Serie, int(k.Type))}
		}
		prev, ok := last[k]
		if !ok {
			prev = q.last
		}
		if s.res.Nro != prev+1 {
			return invalid(op, field(fmt.Sprintf("comprobantes[%d].nro", i), "debe ser %d (sigue al último de la serie %s)", prev+1, k.Serie))
		}
		s.prev, last[k] = prev, s.res.Nro
	}
	now := db.opts.Now()
	var failed error
	var txErr error
	if db.journal != nil {
		txErr = db.journal.cover(batch, now)
	}
	if txErr == nil {
		txErr = db.bolt.Update(func(tx *bolt.Tx) error {
			db.room.ensure(tx.Size())
			ranges := rangeCache{}
			for _, s := range batch {
				if err := checkCommit(tx, ranges, s.rec, s.prev, nil); err != nil {
					failed = err
					return err
				}
				s.rec.CommittedAt = now
				if err := putCommit(tx, s.rec); err != nil {
					return err
				}
			}
			return nil
		})
		db.transactions.Add(1)
	}
	if failed != nil {
		return failed
	}
	db.writes.record(txErr, now)
	if txErr != nil {
		db.resyncLocked()
		return db.commitFailed(txErr)
	}
	db.pending.Add(int64(len(batch)))
	for k, n := range last {
		db.seqs[k].last = n
	}
	db.notifyCommit(len(batch))
	return nil
}

// rangeByID returns the in-memory range id (the journal caps its marks at
// the range's end); the zero range when there is none, which checkCommit
// then refuses.
func (db *DB) rangeByID(id string) cfe.CAERange {
	db.mu.Lock()
	defer db.mu.Unlock()
	for _, rs := range db.ranges {
		for _, r := range rs {
			if r.ID == id {
				return r
			}
		}
	}
	return cfe.CAERange{}
}
