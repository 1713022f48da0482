package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// The outbox holds every committed CFE until the hosted service has accepted
// it or refused it for good. A refused CFE moves to the rejected list, where
// it stays visible and is never retried blindly.

// The outbox's other side, PendingOutbox and its quarantine, is in
// quarantine.go.

// Rejected returns up to limit CFEs the hosted service refused for good, in
// commit order.
//
// Errors: EINVALID when limit is not positive; EUNAVAILABLE when ctx is
// done, or with a refused CFE's Spanish error when it cannot be read back
// (errors.Is ErrRecordDamaged; nothing waits on this list).
func (db *DB) Rejected(ctx context.Context, limit int) ([]*cfe.Issued, error) {
	const op = "store.Rejected"
	if limit <= 0 {
		return nil, invalid(op, field("limite", "debe ser mayor que cero"))
	}
	var out []*cfe.Issued
	err := db.view(ctx, op, func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketRejected).Cursor()
		for k, v := c.First(); k != nil && len(out) < limit; k, v = c.Next() {
			var e outboxEntry
			if err := json.Unmarshal(v, &e); err != nil {
				d := &recordDamage{reason: "su entrada en la lista de rechazados está dañada", cause: fmt.Errorf("rejected entry %d: %w", seqOf(k), err)}
				return d.asError(op)
			}
			rec, err := getIssued(tx, op, e.UUID)
			if err != nil {
				return err
			}
			out = append(out, rec.domain())
		}
		return nil
	})
	return out, err
}

// MarkDelivered records that the hosted service accepted the CFE under
// hostedID, and takes it out of the outbox. Marking it again with the same
// hostedID does nothing.
//
// Errors: ENOTFOUND for an unknown uuid; ECONFLICT when the CFE was rejected or
// accepted under another id; EINVALID for an empty uuid; EUNAVAILABLE when ctx
// is done.
func (db *DB) MarkDelivered(ctx context.Context, uuid string, hostedID int64) error {
	const op = "store.MarkDelivered"
	return db.updateDelivery(ctx, op, uuid, func(tx *bolt.Tx, rec *issuedRecord) error {
		d := &rec.Delivery
		switch d.State {
		case cfe.DeliveryAccepted:
			if d.HostedID == hostedID {
				return errUnchanged
			}
			return conflict(op, "el comprobante %s ya fue aceptado con el id %d", uuid, d.HostedID)
		case cfe.DeliveryRejected:
			return conflict(op, "el comprobante %s fue rechazado; no puede marcarse como aceptado", uuid)
		}
		if err := tx.Bucket(bucketOutbox).Delete(seqBytes(rec.OutboxSeq)); err != nil {
			return err
		}
		tx.OnCommit(func() { db.pending.Add(-1) })
		now := db.opts.Now()
		d.State, d.HostedID, d.Reason, d.Attempts, d.LastAttempt = cfe.DeliveryAccepted, hostedID, "", d.Attempts+1, now
		return appendAudit(tx, AuditEvent{At: now, Kind: AuditDelivered, UUID: rec.UUID, Type: rec.Type,
			Serie: rec.Serie, Nro: rec.Nro, HostedID: hostedID})
	})
}

// MarkRejected records that the hosted service refused the CFE for good, for
// reason: it leaves the outbox for the rejected list. Marking a rejected CFE
// again does nothing.
//
// Errors: ENOTFOUND for an unknown uuid; ECONFLICT when the CFE was accepted;
// EINVALID for an empty uuid or reason; EUNAVAILABLE when ctx is done.
func (db *DB) MarkRejected(ctx context.Context, uuid, reason string) error {
	const op = "store.MarkRejected"
	if reason == "" {
		return invalid(op, field("motivo", "es obligatorio"))
	}
	return db.updateDelivery(ctx, op, uuid, func(tx *bolt.Tx, rec *issuedRecord) error {
		d := &rec.Delivery
		switch d.State {
		case cfe.DeliveryRejected:
			return errUnchanged
		case cfe.DeliveryAccepted:
			return conflict(op, "el comprobante %s ya fue aceptado; no puede marcarse como rechazado", uuid)
		}
		key := seqBytes(rec.OutboxSeq)
		if err := putJSON(tx.Bucket(bucketRejected), key, outboxEntry{UUID: rec.UUID, CommittedAt: rec.CommittedAt}); err != nil {
			return err
		}
		if err := tx.Bucket(bucketOutbox).Delete(key); err != nil {
			return err
		}
		tx.OnCommit(func() { db.pending.Add(-1); db.rejected.Add(1) })
		now := db.opts.Now()
		d.State, d.Reason, d.Attempts, d.LastAttempt = cfe.DeliveryRejected, reason, d.Attempts+1, now
		return appendAudit(tx, AuditEvent{At: now, Kind: AuditRejected, UUID: rec.UUID, Type: rec.Type,
			Serie: rec.Serie, Nro: rec.Nro, Detail: reason})
	})
}

// RecordAttempt records a delivery attempt at time at that failed with cause
// and will be retried: the CFE stays in the outbox. The cause's text is kept
// as the reason; it must not carry secrets.
//
// Errors: ENOTFOUND for an unknown uuid; ECONFLICT when the CFE is no longer
// pending; EINVALID for an empty uuid or a nil cause; EUNAVAILABLE when ctx is
// done.
func (db *DB) RecordAttempt(ctx context.Context, uuid string, cause error, at time.Time) error {
	const op = "store.RecordAttempt"
	if cause == nil {
		return invalid(op, field("error", "es obligatorio"))
	}
	return db.updateDelivery(ctx, op, uuid, func(_ *bolt.Tx, rec *issuedRecord) error {
		d := &rec.Delivery
		if d.State != cfe.DeliveryPending {
			return conflict(op, "el comprobante %s ya no está pendiente de envío (%s)", uuid, d.State)
		}
		d.Attempts, d.LastAttempt, d.Reason = d.Attempts+1, at, cause.Error()
		return nil
	})
}

// errUnchanged tells updateDelivery that there is nothing to write.
var errUnchanged = errors.New("unchanged")

// updateDelivery applies fn to the record of uuid and stores it, in one
// transaction. The signed XML is not read: it never changes. A quarantined
// CFE is refused (ECONFLICT): it is not in the outbox.
func (db *DB) updateDelivery(ctx context.Context, op, uuid string, fn func(*bolt.Tx, *issuedRecord) error) error {
	if uuid == "" {
		return invalid(op, field("uuid", "es obligatorio"))
	}
	err := db.update(ctx, op, func(tx *bolt.Tx) error {
		rec, err := readRecord(tx, op, uuid, false)
		if err != nil {
			return recordError(op, err)
		}
		if tx.Bucket(bucketQuarantine).Get(seqBytes(rec.OutboxSeq)) != nil {
			return errHeld(op, uuid)
		}
		if err := fn(tx, rec); err != nil {
			return err
		}
		return putRecord(tx, rec)
	})
	if errors.Is(err, errUnchanged) {
		return nil
	}
	return err
}

func conflict(op, format string, args ...any) *cfe.Error {
	return &cfe.Error{Code: cfe.ECONFLICT, Op: op, Message: fmt.Sprintf(format, args...)}
}
