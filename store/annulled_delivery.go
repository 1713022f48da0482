package store

import (
	"context"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// Provider mode's outbox of annulled numbers (docs/hosted.md, "The daily
// report in provider mode"): the hosted service builds the company's daily
// report, so every range of numbers the agent annulled (annul.go) goes to
// it, durably, like the CFE outbox: a range is sent until the service took
// it (or refused it for good, which stays visible and is never retried
// blindly); the service keeps the same range once, so a range sent again
// after an answer was lost is not recorded twice.
//
//	annulled_sent  "TTT/SERIE/FROM/TO" → annulledSent, once the service
//	               answered (taken or refused), or after a failed attempt
//	               (its count and cause)
//	annulled_sent  "~cursor" → YYYY-MM-DD: every range of a day before it
//	               has been answered; the next pass lists from it
//
// The bucket is created by the first write: stores of earlier versions open
// as they are.
var (
	bucketAnnulledSent = []byte("annulled_sent")
	keyAnnulledCursor  = []byte("~cursor")
)

// Delivery states of an annulled range.
const (
	AnnulledPending   = "pendiente"
	AnnulledDelivered = "entregado"
	AnnulledRefused   = "rechazado"
)

type annulledSent struct {
	State       string    `json:"state"`
	Reason      string    `json:"reason,omitempty"` // the service's refusal, or the last attempt's failure
	Attempts    int       `json:"attempts"`
	LastAttempt time.Time `json:"lastAttempt,omitzero"`
}

func annulledSentKey(r cfe.AnnulledRange) []byte {
	return fmt.Appendf(nil, "%03d/%s/%07d/%07d", int(r.Type), r.Serie, r.From, r.To)
}

// annulledEpoch is where the first pass lists from: every range the store
// holds.
var annulledEpoch = cfe.Date{Year: 2000, Month: time.January, Day: 1}

// annulledLookBack is how many days before today a pass that found nothing
// pending leaves its cursor: a range is listed by the day whose report
// counts it, which for a DGI rejection is its CFE's signature day, days
// before DGI's verdict may arrive.
const annulledLookBack = 31

// AnnulledUndelivered returns up to limit ranges annulled up to today that
// the hosted service has not answered yet, by type, serie and number. A
// pass that finds none moves the cursor up to annulledLookBack days before
// today, so that later passes list only recent days.
//
// Errors: EINVALID when limit is not positive; EUNAVAILABLE when ctx is done.
func (db *DB) AnnulledUndelivered(ctx context.Context, today cfe.Date, limit int) ([]cfe.AnnulledRange, error) {
	const op = "store.AnnulledUndelivered"
	if limit <= 0 {
		return nil, invalid(op, field("limite", "debe ser mayor que cero"))
	}
	from := annulledEpoch
	if err := db.view(ctx, op, func(tx *bolt.Tx) error {
		if b := tx.Bucket(bucketAnnulledSent); b != nil {
			if d, err := cfe.ParseDate(string(b.Get(keyAnnulledCursor))); err == nil {
				from = d
			}
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if today.Before(from) {
		return nil, nil
	}
	all, err := db.Annulled(ctx, from, today)
	if err != nil {
		return nil, err
	}
	var out []cfe.AnnulledRange
	if err := db.view(ctx, op, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketAnnulledSent)
		for _, r := range all {
			var s annulledSent
			if b != nil {
				if _, err := getJSON(b, annulledSentKey(r), &s); err != nil {
					return err
				}
			}
			if s.State == AnnulledDelivered || s.State == AnnulledRefused {
				continue
			}
			out = append(out, r)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		if cursor := today.AddDays(-annulledLookBack); cursor.After(from) {
			err = db.update(ctx, op, func(tx *bolt.Tx) error {
				b, err := tx.CreateBucketIfNotExists(bucketAnnulledSent)
				if err != nil {
					return err
				}
				return b.Put(keyAnnulledCursor, []byte(cursor.String()))
			})
		}
		return nil, err
	}
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// updateAnnulledSent applies fn to r's delivery record in one transaction.
func (db *DB) updateAnnulledSent(ctx context.Context, op string, r cfe.AnnulledRange, fn func(s *annulledSent) error) error {
	return db.update(ctx, op, func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketAnnulledSent)
		if err != nil {
			return err
		}
		var s annulledSent
		if _, err := getJSON(b, annulledSentKey(r), &s); err != nil {
			return err
		}
		if err := fn(&s); err != nil {
			return err
		}
		return putJSON(b, annulledSentKey(r), s)
	})
}

// MarkAnnulledDelivered records that the hosted service took range r.
// Marking it again does nothing.
//
// Errors: ECONFLICT when the service refused r for good; EUNAVAILABLE when
// ctx is done.
func (db *DB) MarkAnnulledDelivered(ctx context.Context, r cfe.AnnulledRange) error {
	const op = "store.MarkAnnulledDelivered"
	now := db.opts.Now()
	return db.updateAnnulledSent(ctx, op, r, func(s *annulledSent) error {
		if s.State == AnnulledRefused {
			return conflict(op, "los números anulados %s fueron rechazados por el servicio en la nube", r)
		}
		if s.State != AnnulledDelivered {
			s.State, s.Reason, s.Attempts, s.LastAttempt = AnnulledDelivered, "", s.Attempts+1, now
		}
		return nil
	})
}

// MarkAnnulledRefused records that the hosted service refused range r for
// good, for reason: it is not sent again, and stays listed
// (AnnulledRefusals) for a technician.
//
// Errors: EINVALID for an empty reason; ECONFLICT when the service took r;
// EUNAVAILABLE when ctx is done.
func (db *DB) MarkAnnulledRefused(ctx context.Context, r cfe.AnnulledRange, reason string) error {
	const op = "store.MarkAnnulledRefused"
	if reason == "" {
		return invalid(op, field("motivo", "es obligatorio"))
	}
	now := db.opts.Now()
	return db.updateAnnulledSent(ctx, op, r, func(s *annulledSent) error {
		if s.State == AnnulledDelivered {
			return conflict(op, "los números anulados %s ya fueron entregados al servicio en la nube", r)
		}
		s.State, s.Reason, s.Attempts, s.LastAttempt = AnnulledRefused, reason, s.Attempts+1, now
		return nil
	})
}

// RecordAnnulledAttempt records a failed attempt to deliver range r that
// will be retried.
//
// Errors: EINVALID for a nil cause; ECONFLICT when r is no longer pending;
// EUNAVAILABLE when ctx is done.
func (db *DB) RecordAnnulledAttempt(ctx context.Context, r cfe.AnnulledRange, cause error, at time.Time) error {
	const op = "store.RecordAnnulledAttempt"
	if cause == nil {
		return invalid(op, field("error", "es obligatorio"))
	}
	return db.updateAnnulledSent(ctx, op, r, func(s *annulledSent) error {
		if s.State == AnnulledDelivered || s.State == AnnulledRefused {
			return conflict(op, "los números anulados %s ya no están pendientes de envío (%s)", r, s.State)
		}
		s.State, s.Reason, s.Attempts, s.LastAttempt = AnnulledPending, cause.Error(), s.Attempts+1, at
		return nil
	})
}

// AnnulledRefusal is a range the hosted service refused for good.
type AnnulledRefusal struct {
	Range  cfe.AnnulledRange
	Reason string
	At     time.Time
}

// AnnulledRefusals returns the ranges annulled from from to today that the
// hosted service refused for good.
//
// Errors: EUNAVAILABLE when ctx is done.
func (db *DB) AnnulledRefusals(ctx context.Context, from, today cfe.Date) ([]AnnulledRefusal, error) {
	const op = "store.AnnulledRefusals"
	all, err := db.Annulled(ctx, from, today)
	if err != nil {
		return nil, err
	}
	var out []AnnulledRefusal
	err = db.view(ctx, op, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketAnnulledSent)
		if b == nil {
			return nil
		}
		for _, r := range all {
			var s annulledSent
			if _, err := getJSON(b, annulledSentKey(r), &s); err != nil {
				return err
			}
			if s.State == AnnulledRefused {
				out = append(out, AnnulledRefusal{Range: r, Reason: s.Reason, At: s.LastAttempt})
			}
		}
		return nil
	})
	return out, err
}
