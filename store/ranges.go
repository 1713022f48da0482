package store

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// PutRange stores a CAE range. An empty ID is filled in as cfe.RangeID; any
// other ID must equal it. Fields are named as in DGI's CAE file.
//
// Errors: EINVALID (with Fields) for a range that breaks a rule of
// cfe.CAERange.Validate or whose ID is another; ECONFLICT
// when the range is already stored or overlaps a stored range of the same type
// and serie; EUNAVAILABLE when ctx is done.
func (db *DB) PutRange(ctx context.Context, r cfe.CAERange) error {
	const op = "store.PutRange"
	if fields := checkRange(&r); len(fields) > 0 {
		return invalid(op, fields...)
	}
	err := db.update(ctx, op, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketRanges)
		if b.Get([]byte(r.ID)) != nil {
			return &cfe.Error{Code: cfe.ECONFLICT, Op: op, Message: fmt.Sprintf("el rango %s ya está cargado", r.ID)}
		}
		err := b.ForEach(func(_, v []byte) error {
			var o rangeRecord
			if err := json.Unmarshal(v, &o); err != nil {
				return err
			}
			if o.Type == r.Type && o.Serie == r.Serie && o.DNro <= r.HNro && r.DNro <= o.HNro {
				return &cfe.Error{Code: cfe.ECONFLICT, Op: op,
					Message: fmt.Sprintf("el rango %s (%d a %d) se superpone con el rango %s ya cargado (%d a %d)",
						r.ID, r.DNro, r.HNro, o.ID, o.DNro, o.HNro)}
			}
			return nil
		})
		if err != nil {
			return err
		}
		if err := putJSON(b, []byte(r.ID), toRangeRecord(r)); err != nil {
			return err
		}
		return appendAudit(tx, AuditEvent{At: db.opts.Now(), Kind: AuditRangeImported, Type: r.Type,
			Serie: r.Serie, RangeID: r.ID, Detail: fmt.Sprintf("numbers %d-%d, CAE %s, expires %s, source %s",
				r.DNro, r.HNro, r.CAEID, r.Vencimiento, r.Source)})
	})
	if err != nil {
		return err
	}
	db.mu.Lock()
	db.addRangeLocked(r)
	db.mu.Unlock()
	return nil
}

// checkRange returns the rules r breaks: the domain's rules for every CAE
// range, then the store's key, which it fills in when empty.
func checkRange(r *cfe.CAERange) []cfe.FieldError {
	if fs := cfe.ErrorFields(r.Validate()); len(fs) > 0 {
		return fs
	}
	switch id := cfe.RangeID(r.Type, r.Serie, r.DNro); r.ID {
	case "":
		r.ID = id
	case id:
	default:
		return []cfe.FieldError{field("ID", "debe ser %q (tipo-serie-desde)", id)}
	}
	return nil
}

// Ranges returns every stored range by type, serie and first number.
//
// Errors: EUNAVAILABLE when ctx is done.
func (db *DB) Ranges(ctx context.Context) ([]cfe.CAERange, error) {
	var out []cfe.CAERange
	err := db.view(ctx, "store.Ranges", func(tx *bolt.Tx) error {
		var err error
		out, err = loadRanges(tx)
		return err
	})
	return out, err
}

func loadRanges(tx *bolt.Tx) ([]cfe.CAERange, error) {
	var out []cfe.CAERange
	err := tx.Bucket(bucketRanges).ForEach(func(_, v []byte) error {
		var r rangeRecord
		if err := json.Unmarshal(v, &r); err != nil {
			return err
		}
		out = append(out, r.domain())
		return nil
	})
	slices.SortFunc(out, func(a, b cfe.CAERange) int {
		return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(a.Serie, b.Serie), cmp.Compare(a.DNro, b.DNro))
	})
	return out, err
}

// RangeStatus reports, on day today, the use of every range, in the order of
// Ranges. NearlyUsedUp flags a range with numbers left but at most
// (100 - Options.NearlyUsedUpPercent)% of it; NearExpiry one not expired that
// expires within Options.NearExpiryDays.
//
// Errors: EINVALID for a zero date; EUNAVAILABLE when ctx is done.
func (db *DB) RangeStatus(ctx context.Context, today cfe.Date) ([]cfe.RangeUse, error) {
	const op = "store.RangeStatus"
	if today.IsZero() {
		return nil, invalid(op, field("fecha", "es obligatoria"))
	}
	var out []cfe.RangeUse
	err := db.view(ctx, op, func(tx *bolt.Tx) error {
		ranges, err := loadRanges(tx)
		if err != nil {
			return err
		}
		for _, r := range ranges {
			st, err := db.rangeStatus(tx, r, today)
			if err != nil {
				return err
			}
			out = append(out, st)
		}
		return nil
	})
	return out, err
}

func (db *DB) rangeStatus(tx *bolt.Tx, r cfe.CAERange, today cfe.Date) (cfe.RangeUse, error) {
	if info, _ := r.Type.Info(); info.Contingency {
		return keyedStatus(tx, r, today, db.opts.NearlyUsedUpPercent, db.opts.NearExpiryDays), nil
	}
	k := seqKey{r.Type, r.Serie}
	var c counterRecord
	if _, err := getJSON(tx.Bucket(bucketCounters), counterKey(k), &c); err != nil {
		return cfe.RangeUse{}, err
	}
	st := cfe.RangeUse{Range: r, Used: usedIn(tx, k, r), Expired: r.Expired(today),
		DaysLeft: int(r.Vencimiento.Time(time.UTC).Sub(today.Time(time.UTC)).Hours() / 24)}
	if !st.Expired && c.Last < r.HNro {
		st.Remaining = r.HNro - max(c.Last, r.DNro-1) - annulledWithin(tx, k.Type, k.Serie, max(c.Last+1, r.DNro), r.HNro)
	}
	st.Skipped = r.Size() - st.Used - st.Remaining
	pct := int64(db.opts.NearlyUsedUpPercent)
	st.NearlyUsedUp = st.Remaining > 0 && (r.Size()-st.Remaining)*100 >= pct*r.Size()
	st.NearExpiry = !st.Expired && st.DaysLeft <= db.opts.NearExpiryDays
	return st, nil
}

// usedIn counts the committed numbers of range r. Within a range, committed
// numbers are consecutive but for annulled numbers (numbering only jumps to
// the first number of a range, past numbers used elsewhere, which
// MarkUsedElsewhere allows only before the first commit in the range, or past
// numbers a technician annulled, annulled.go), so the first and last
// committed ones, less the annulled numbers between them, give the count.
func usedIn(tx *bolt.Tx, k seqKey, r cfe.CAERange) int64 {
	// The numbers moved to yearly archives are counted apart; the live
	// ones of a range are one run (archive.go).
	return liveIn(tx, k, r) + archivedIn(tx, r.ID)
}

func liveIn(tx *bolt.Tx, k seqKey, r cfe.CAERange) int64 {
	lo, hi := numberKey(k, r.DNro), numberKey(k, r.HNro)
	c := tx.Bucket(bucketByNumber).Cursor()
	first, _ := c.Seek(lo)
	if first == nil || bytes.Compare(first, hi) > 0 {
		return 0
	}
	last, _ := c.Seek(hi)
	switch {
	case last == nil:
		last, _ = c.Last()
	case !bytes.Equal(last, hi):
		last, _ = c.Prev()
	}
	// Numbers a technician annulled between two committed ones were passed
	// over (annulled.go): they are not used by this store.
	return nroOf(last) - nroOf(first) + 1 - annulledWithin(tx, k.Type, k.Serie, nroOf(first)+1, nroOf(last)-1)
}

// nroOf reads the number at the end of a by_number key.
func nroOf(key []byte) int64 {
	var n int64
	for _, b := range key[len(key)-7:] {
		n = n*10 + int64(b-'0')
	}
	return n
}
