package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// FindByUUID returns the CFE stored under uuid, in the live file or a
// yearly archive.
//
// Errors: ENOTFOUND when there is none; EINVALID for an empty uuid;
// EUNAVAILABLE when ctx is done.
func (db *DB) FindByUUID(ctx context.Context, uuid string) (*cfe.Issued, error) {
	const op = "store.FindByUUID"
	if uuid == "" {
		return nil, invalid(op, field("uuid", "es obligatorio"))
	}
	if err := db.brokenErr(op); err != nil {
		return nil, err // a damaged file answers nothing, not even what the log holds
	}
	if e := db.log.lookupUUID(uuid); e != nil {
		return e.issued(), nil
	}
	var out *cfe.Issued
	err := db.viewNow(ctx, op, func(tx *bolt.Tx) error {
		rec, err := getIssued(tx, op, uuid)
		if err == nil {
			out = rec.domain()
		}
		return err
	})
	if cfe.ErrorCode(err) == cfe.ENOTFOUND {
		if a, aerr := db.findArchived(op, uuid, nil); aerr != nil || a != nil {
			return a, aerr
		}
	}
	return out, err
}

// FindByNumber returns the CFE of type t, serie and number nro.
//
// Errors: ENOTFOUND when there is none; EUNAVAILABLE when ctx is done.
func (db *DB) FindByNumber(ctx context.Context, t cfe.Type, serie string, nro int64) (*cfe.Issued, error) {
	const op = "store.FindByNumber"
	if err := db.brokenErr(op); err != nil {
		return nil, err
	}
	if e := db.log.lookupNumber(seqKey{t, serie}, nro); e != nil {
		return e.issued(), nil
	}
	var out *cfe.Issued
	err := db.viewNow(ctx, op, func(tx *bolt.Tx) error {
		uuid := tx.Bucket(bucketByNumber).Get(numberKey(seqKey{t, serie}, nro))
		if uuid == nil {
			return notFound(op, "no existe el comprobante tipo %d serie %s número %d", int(t), serie, nro)
		}
		rec, err := getIssued(tx, op, string(uuid))
		if err == nil {
			out = rec.domain()
		}
		return err
	})
	if cfe.ErrorCode(err) == cfe.ENOTFOUND {
		if a, aerr := db.findArchived(op, "", numberKey(seqKey{t, serie}, nro)); aerr != nil || a != nil {
			return a, aerr
		}
	}
	return out, err
}

// ListByDate returns up to limit CFEs signed from day from to day to
// (inclusive, Montevideo dates), by signature time, from the live file and
// the yearly archives.
//
// Errors: EINVALID for a missing or reversed date or a limit that is not
// positive; EUNAVAILABLE when ctx is done.
func (db *DB) ListByDate(ctx context.Context, from, to cfe.Date, limit int) ([]*cfe.Issued, error) {
	const op = "store.ListByDate"
	var fs []cfe.FieldError
	if from.IsZero() {
		fs = append(fs, field("desde", "es obligatoria"))
	}
	if to.IsZero() {
		fs = append(fs, field("hasta", "es obligatoria"))
	} else if to.Before(from) {
		fs = append(fs, field("hasta", "no puede ser anterior a desde (%s)", from))
	}
	if limit <= 0 {
		fs = append(fs, field("limite", "debe ser mayor que cero"))
	}
	if len(fs) > 0 {
		return nil, invalid(op, fs...)
	}
	end := []byte(to.AddDays(1).String())
	// Archived CFEs are older than the live ones of their days, but a CFE
	// that was not yet delivered stays live among them: merge by time.
	list, _, err := db.listArchived(op, from, to, limit, false)
	if err != nil {
		return nil, err
	}
	err = db.view(ctx, op, func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketByTime).Cursor()
		got := 0
		for k, uuid := c.Seek([]byte(from.String())); k != nil && bytes.Compare(k, end) < 0 && got < limit; k, uuid = c.Next() {
			rec, err := getIssued(tx, op, string(uuid))
			if err != nil {
				return err
			}
			list = append(list, keyed{bytes.Clone(k), rec.domain()})
			got++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(list, func(a, b keyed) int { return bytes.Compare(a.key, b.key) })
	// A CFE is in an archive and the live file at once between the two
	// steps of a move that a crash interrupted: list it once.
	list = slices.CompactFunc(list, func(a, b keyed) bool { return bytes.Equal(a.key, b.key) })
	out := make([]*cfe.Issued, 0, min(limit, len(list)))
	for _, k := range list[:min(limit, len(list))] {
		out = append(out, k.cfe)
	}
	return out, nil
}

// CountByDate counts the CFEs signed from day from to day to (inclusive,
// Montevideo dates) without reading them: cheap enough for /health.
//
// Errors: EINVALID for a missing or reversed date; EUNAVAILABLE when ctx is done.
func (db *DB) CountByDate(ctx context.Context, from, to cfe.Date) (int, error) {
	const op = "store.CountByDate"
	if from.IsZero() || to.IsZero() || to.Before(from) {
		return 0, invalid(op, field("fechas", "desde y hasta son obligatorias y hasta no puede ser anterior a desde"))
	}
	end := []byte(to.AddDays(1).String())
	_, n, err := db.listArchived(op, from, to, 0, true)
	if err != nil {
		return 0, err
	}
	err = db.view(ctx, op, func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketByTime).Cursor()
		for k, _ := c.Seek([]byte(from.String())); k != nil && bytes.Compare(k, end) < 0; k, _ = c.Next() {
			n++
		}
		return nil
	})
	return n, err
}

// Last returns the n most recently signed CFEs (by signature time), newest
// first, without their signed XML: what the tray offers to reprint and
// /state lists. A quarantined CFE comes with Delivery.State
// cfe.DeliveryQuarantined; one whose record cannot be read comes with what
// its place in the time index says (type, serie, number, signature time)
// and that state too, so that the list never hides it.
//
// Errors: EINVALID when n is not positive; EUNAVAILABLE when ctx is done.
func (db *DB) Last(ctx context.Context, n int) ([]*cfe.Issued, error) {
	const op = "store.Last"
	if n <= 0 {
		return nil, invalid(op, field("cantidad", "debe ser mayor que cero"))
	}
	var out []*cfe.Issued
	err := db.view(ctx, op, func(tx *bolt.Tx) error {
		held := tx.Bucket(bucketQuarantine)
		c := tx.Bucket(bucketByTime).Cursor()
		for k, uuid := c.Last(); k != nil && len(out) < n; k, uuid = c.Prev() {
			rec, err := readRecord(tx, op, string(uuid), false)
			if _, ok := errors.AsType[*recordDamage](err); ok {
				is, ok := fromTimeKey(k)
				if !ok {
					return recordError(op, err)
				}
				is.UUID, is.Delivery.State = string(uuid), cfe.DeliveryQuarantined
				out = append(out, is)
				continue
			}
			if err != nil {
				return err
			}
			is := rec.domain()
			if held.Get(seqBytes(rec.OutboxSeq)) != nil {
				is.Delivery.State = cfe.DeliveryQuarantined
			}
			out = append(out, is)
		}
		return nil
	})
	return out, err
}

// fromTimeKey is what a by_time key says of its CFE: the signature time,
// the type, the serie and the number (timeKey).
func fromTimeKey(k []byte) (*cfe.Issued, bool) {
	at, nk, ok := bytes.Cut(k, []byte("|"))
	if !ok {
		return nil, false
	}
	tmst, err := time.ParseInLocation(timeLayout, string(at), cfe.Montevideo)
	if err != nil {
		return nil, false
	}
	t, serie, nro, ok := parseNumberKey(nk)
	if !ok {
		return nil, false
	}
	return &cfe.Issued{Type: t, Serie: serie, Nro: nro, TmstFirma: tmst}, true
}

// Stats is a summary of the store for the tray and the status page.
type Stats struct {
	CFEs   int64              // signed CFEs stored
	ByType map[cfe.Type]int64 // signed CFEs by type
	Ranges int
	// Outbox is the outbox backlog (Pending: CFEs not yet delivered to the
	// hosted service; OldestPending: the commit time of the oldest, zero
	// when none), the CFEs the hosted service refused for good, and the
	// quarantine: the first maxStatsQuarantine CFEs held out of the outbox
	// because their stored record cannot be read back, in commit order
	// (quarantine.go).
	cfe.Outbox
	OldestPendingAge time.Duration // how long the oldest has been pending, by Options.Now
	// CommitTransactions is how many transactions have written signed CFEs
	// since Open: with the CFEs committed since Open, the group commit's
	// batch size.
	CommitTransactions uint64
}

// maxStatsQuarantine bounds the quarantined CFEs Stats lists.
const maxStatsQuarantine = 20

// Stats returns counts, the outbox backlog and the quarantine.
//
// Errors: EUNAVAILABLE when ctx is done.
func (db *DB) Stats(ctx context.Context) (Stats, error) {
	const op = "store.Stats"
	st := Stats{ByType: map[cfe.Type]int64{}}
	err := db.view(ctx, op, func(tx *bolt.Tx) error {
		ranges, err := loadRanges(tx)
		if err != nil {
			return err
		}
		st.Ranges = len(ranges)
		for _, r := range ranges {
			if used := usedIn(tx, seqKey{r.Type, r.Serie}, r); used > 0 {
				st.ByType[r.Type] += used
				st.CFEs += used
			}
		}
		// An entry that does not read leaves the age unknown; the outbox
		// sets it aside when it meets it (PendingOutbox).
		var e outboxEntry
		if _, v := tx.Bucket(bucketOutbox).Cursor().First(); v != nil && json.Unmarshal(v, &e) == nil {
			st.OldestPending = inMontevideo(e.CommittedAt)
			st.OldestPendingAge = db.opts.Now().Sub(e.CommittedAt)
		}
		st.Quarantine, err = listQuarantine(tx, maxStatsQuarantine)
		return err
	})
	st.Pending, st.Rejected, st.Quarantined = int(db.pending.Load()), int(db.rejected.Load()), int(db.quarantined.Load())
	st.CommitTransactions = db.transactions.Load()
	return st, err
}

// getIssued reads the record stored under uuid, with its signed XML
// (readRecord), as op's errors: ENOTFOUND, or the Spanish error of a CFE that
// cannot be read back.
func getIssued(tx *bolt.Tx, op, uuid string) (*issuedRecord, error) {
	rec, err := readRecord(tx, op, uuid, true)
	if err != nil {
		return nil, recordError(op, err)
	}
	return rec, nil
}

// putRecord stores rec under its uuid. Its XML, which never changes after the
// commit, is written once by putCommit.
func putRecord(tx *bolt.Tx, rec *issuedRecord) error {
	return putJSON(tx.Bucket(bucketCFEs), []byte(rec.UUID), rec)
}
