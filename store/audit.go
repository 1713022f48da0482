package store

import (
	"context"
	"encoding/json"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// Kinds of audit event.
const (
	AuditSigned        = "signed"            // a CFE was signed and stored
	AuditRangeImported = "range_imported"    // a CAE range was added
	AuditDelivered     = "delivered"         // the hosted service accepted a CFE
	AuditRejected      = "delivery_rejected" // the hosted service refused a CFE for good
	AuditUsedElsewhere = "used_elsewhere"    // numbers were marked as used by another system
	AuditDGIVerdict    = "dgi_verdict"       // DGI accepted, rejected (the number annulled) or observed a CFE sent directly
)

// AuditEvent is one entry of the append-only audit log. It is stored as the
// JSON below, under its sequence number. Fields that do not apply to a kind
// are empty.
type AuditEvent struct {
	Seq      uint64    `json:"-"`
	At       time.Time `json:"at"`
	Kind     string    `json:"kind"`
	UUID     string    `json:"uuid,omitempty"`
	Type     cfe.Type  `json:"type,omitempty"`
	Serie    string    `json:"serie,omitempty"`
	Nro      int64     `json:"nro,omitempty"`
	RangeID  string    `json:"range_id,omitempty"`
	HostedID int64     `json:"hosted_id,omitempty"`
	Detail   string    `json:"detail,omitempty"`
}

// appendAudit adds ev to the log inside tx, giving it the next sequence.
func appendAudit(tx *bolt.Tx, ev AuditEvent) error {
	b := appendOnly(tx, bucketAudit)
	seq, err := b.NextSequence()
	if err != nil {
		return err
	}
	return putJSON(b, seqBytes(seq), ev)
}

// AuditEvents returns up to limit events from sequence from on (the first
// event is 1), oldest first.
//
// Errors: EINVALID when limit is not positive; EUNAVAILABLE when ctx is done.
func (db *DB) AuditEvents(ctx context.Context, from uint64, limit int) ([]AuditEvent, error) {
	const op = "store.AuditEvents"
	if limit <= 0 {
		return nil, invalid(op, field("limite", "debe ser mayor que cero"))
	}
	var out []AuditEvent
	err := db.view(ctx, op, func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketAudit).Cursor()
		for k, v := c.Seek(seqBytes(from)); k != nil && len(out) < limit; k, v = c.Next() {
			var ev AuditEvent
			if err := json.Unmarshal(v, &ev); err != nil {
				return err
			}
			ev.Seq, ev.At = seqOf(k), inMontevideo(ev.At)
			out = append(out, ev)
		}
		return nil
	})
	return out, err
}
