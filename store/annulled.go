package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// Annulled numbers (issue 31): every number the agent skips and every number
// a technician voids is recorded here, with its reason and the day whose
// daily report counts it, and is never handed out afterwards. The sources:
//
//   - AnnulSkippedBlock: Open found the store behind the numbering journal
//     and resumed at its reserved mark after a crash: the numbers between
//     what the journal knows was committed (or the store's own counter, if
//     higher) and that mark may have been used by the lost file or never;
//     they are annulled, in the transaction that raises the counter.
//   - AnnulRestoreBound: a restore resumed above what was certainly used
//     (the journal's reserved mark, a confirmed number): the numbers between.
//   - AnnulUsedElsewhere: MarkUsedElsewhere (cae used-elsewhere): the
//     numbers it passes over, in its counter's transaction.
//   - AnnulTechnician: AnnulNumbers (numeros anular): unused numbers above
//     the serie's last one, inside a loaded CAE range.
//   - AnnulDGIRejected: DGI's rejections, kept in dgi_annulled (dgi.go);
//     Annulled lists them on the day the CFE was signed.
//
// Numbering skips annulled numbers (sequence.next): a number annulled is
// never reserved. The bucket is keyed type/serie/first number; ranges never
// overlap (an automatic source records only the part not yet annulled).

var bucketAnnulled = []byte("annulled")

// annulledRecord is one stored run of annulled numbers.
type annulledRecord struct {
	Type   cfe.Type  `json:"tipo"`
	Serie  string    `json:"serie"`
	From   int64     `json:"desde"`
	To     int64     `json:"hasta"`
	Reason string    `json:"motivo"`
	Note   string    `json:"nota,omitempty"`
	At     time.Time `json:"en"`
	Day    string    `json:"dia"`
}

func (r annulledRecord) domain() cfe.AnnulledRange {
	d, _ := cfe.ParseDate(r.Day)
	return cfe.AnnulledRange{Type: r.Type, Serie: r.Serie, From: r.From, To: r.To, Reason: r.Reason, Note: r.Note,
		At: inMontevideo(r.At), Day: d}
}

func annulledKey(t cfe.Type, serie string, from int64) []byte {
	return fmt.Appendf(nil, "%03d/%s/%07d", int(t), serie, from)
}

func annulledPrefix(t cfe.Type, serie string) []byte {
	return fmt.Appendf(nil, "%03d/%s/", int(t), serie)
}

// annulledRuns returns the stored runs of (t, serie) that overlap [from, to].
func annulledRuns(tx *bolt.Tx, t cfe.Type, serie string, from, to int64) ([]annulledRecord, error) {
	b := tx.Bucket(bucketAnnulled)
	if b == nil {
		return nil, nil
	}
	var out []annulledRecord
	p := annulledPrefix(t, serie)
	c := b.Cursor()
	for k, v := c.Seek(p); k != nil && bytes.HasPrefix(k, p); k, v = c.Next() {
		var r annulledRecord
		if err := json.Unmarshal(v, &r); err != nil {
			return nil, fmt.Errorf("%w: annulled record %s: %w", ErrDamaged, k, err)
		}
		if r.From > to {
			break
		}
		if r.To >= from {
			out = append(out, r)
		}
	}
	return out, nil
}

// annulledWithin counts the annulled numbers of (t, serie) in [from, to].
func annulledWithin(tx *bolt.Tx, t cfe.Type, serie string, from, to int64) int64 {
	if from > to {
		return 0
	}
	runs, err := annulledRuns(tx, t, serie, from, to)
	if err != nil {
		return 0
	}
	var n int64
	for _, r := range runs {
		n += min(r.To, to) - max(r.From, from) + 1
	}
	return n
}

// putAnnulledTx records a, leaving out the numbers already annulled (an
// automatic source may cover numbers another one recorded), and returns
// what it wrote. A range of a contingency type, or an empty one, writes
// nothing.
func putAnnulledTx(tx *bolt.Tx, a cfe.AnnulledRange) ([]cfe.AnnulledRange, error) {
	if info, ok := a.Type.Info(); !ok || info.Contingency || a.From < 1 || a.To < a.From {
		return nil, nil
	}
	b, err := tx.CreateBucketIfNotExists(bucketAnnulled)
	if err != nil {
		return nil, err
	}
	existing, err := annulledRuns(tx, a.Type, a.Serie, a.From, a.To)
	if err != nil {
		return nil, err
	}
	if a.Day.IsZero() {
		a.Day = cfe.DateOf(a.At.In(cfe.Montevideo))
	}
	var out []cfe.AnnulledRange
	from := a.From
	put := func(lo, hi int64) error {
		if lo > hi {
			return nil
		}
		piece := a
		piece.From, piece.To = lo, hi
		rec := annulledRecord{Type: a.Type, Serie: a.Serie, From: lo, To: hi, Reason: a.Reason, Note: a.Note,
			At: a.At.UTC(), Day: a.Day.String()}
		out = append(out, piece)
		return putJSON(b, annulledKey(a.Type, a.Serie, lo), rec)
	}
	for _, e := range existing {
		if err := put(from, min(e.From-1, a.To)); err != nil {
			return nil, err
		}
		from = max(from, e.To+1)
	}
	if err := put(from, a.To); err != nil {
		return nil, err
	}
	for _, p := range out {
		if err := appendAudit(tx, AuditEvent{At: a.At, Kind: AuditAnnulled, Type: p.Type, Serie: p.Serie, Nro: p.To,
			Detail: fmt.Sprintf("numbers %d-%d annulled (%s): %s", p.From, p.To, p.Reason, p.Note)}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// AuditAnnulled is the audit event of numbers annulled.
const AuditAnnulled = "numbers_annulled"

// noteAnnulledLocked adds runs to the in-memory sequences, so that
// numbering skips them. The caller holds db.mu or owns db.
func (db *DB) noteAnnulledLocked(runs []cfe.AnnulledRange) {
	for _, r := range runs {
		q := db.seq(seqKey{r.Type, r.Serie})
		q.annulled = append(q.annulled, numberRun{r.From, r.To})
		slices.SortFunc(q.annulled, func(a, b numberRun) int { return int(a.from - b.from) })
	}
}

// loadAnnulled reads the annulled runs into the sequences (Open).
func (db *DB) loadAnnulled(tx *bolt.Tx) error {
	b := tx.Bucket(bucketAnnulled)
	if b == nil {
		return nil
	}
	return b.ForEach(func(k, v []byte) error {
		var r annulledRecord
		if err := json.Unmarshal(v, &r); err != nil {
			return fmt.Errorf("%w: annulled record %s: %w", ErrDamaged, k, err)
		}
		q := db.seq(seqKey{r.Type, r.Serie})
		q.annulled = append(q.annulled, numberRun{r.From, r.To}) // keys are in number order
		return nil
	})
}

// numberRun is a run of numbers [from, to].
type numberRun struct{ from, to int64 }

// skipAnnulled returns n, or the first number after the annulled runs that
// hold it.
func (q *sequence) skipAnnulled(n int64) int64 {
	for _, r := range q.annulled {
		if n >= r.from && n <= r.to {
			n = r.to + 1
		}
	}
	return n
}

// AnnulNumbers records the technician's void of the unused numbers
// a.From-a.To of a.Type and a.Serie (cfe-agent numeros anular), with a.Note
// as the reason. Every check runs before anything is written; a refusal
// changes nothing.
//
// Errors: EINVALID (Spanish, naming the numbers) for an unknown or
// contingency type, a malformed range, no reason, numbers already used
// (at or below the serie's last number), numbers outside every loaded CAE
// range of the serie, or numbers already annulled; EUNAVAILABLE while a CFE
// of the serie is being signed.
func (db *DB) AnnulNumbers(ctx context.Context, a cfe.AnnulledRange) error {
	const op = "store.AnnulNumbers"
	a.Reason = cfe.AnnulTechnician
	a.Note = strings.TrimSpace(a.Note)
	info, ok := a.Type.Info()
	switch {
	case !ok:
		return invalid(op, field("tipo", "%d no es un tipo de CFE de DGI", int(a.Type)))
	case info.Contingency:
		return invalid(op, field("tipo", "%d es un comprobante de contingencia: sus números no se informan como anulados", int(a.Type)))
	case a.From < 1 || a.To < a.From:
		return invalid(op, field("numeros", "el rango %d-%d no es válido: DESDE debe ser 1 o más y no superar HASTA", a.From, a.To))
	case a.Note == "":
		return invalid(op, field("motivo", "es obligatorio: por qué se anulan los números"))
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return errClosed(op)
	}
	k := seqKey{a.Type, a.Serie}
	q := db.seq(k)
	if len(q.slots) > 0 {
		return &cfe.Error{Code: cfe.EUNAVAILABLE, Op: op,
			Message: fmt.Sprintf("hay comprobantes del tipo %d serie %s firmándose; reintente", int(a.Type), a.Serie)}
	}
	if a.From <= q.last {
		return invalid(op, field("numeros", "%s serie %s: los números hasta el %d ya están usados; solo se anulan números sin usar (desde el %d)",
			a.Type.Name(), a.Serie, q.last, q.last+1))
	}
	if !slices.ContainsFunc(db.ranges[a.Type], func(r cfe.CAERange) bool {
		return r.Serie == a.Serie && r.DNro <= a.From && a.To <= r.HNro
	}) {
		return invalid(op, field("numeros", "los números %d-%d del tipo %d serie %s no están dentro de un rango CAE cargado",
			a.From, a.To, int(a.Type), a.Serie))
	}
	now := db.opts.Now()
	a.At, a.Day = now, cfe.DateOf(now.In(cfe.Montevideo))
	var written []cfe.AnnulledRange
	err := db.update(ctx, op, func(tx *bolt.Tx) error {
		existing, err := annulledRuns(tx, a.Type, a.Serie, a.From, a.To)
		if err != nil {
			return err
		}
		if len(existing) > 0 {
			e := existing[0]
			return invalid(op, field("numeros", "los números %d-%d del tipo %d serie %s ya están anulados (%s, %s)",
				max(e.From, a.From), min(e.To, a.To), int(a.Type), a.Serie, e.Reason, e.Day))
		}
		written, err = putAnnulledTx(tx, a)
		return err
	})
	if err != nil {
		return err
	}
	db.noteAnnulledLocked(written)
	return nil
}

// Annulled lists the numbers annulled on the days [from, to] (the day whose
// report counts them, cfe.AnnulledRange.Day): the stored runs and DGI's
// rejections (on the day the rejected CFE was signed), by type, serie and
// number.
func (db *DB) Annulled(ctx context.Context, from, to cfe.Date) ([]cfe.AnnulledRange, error) {
	const op = "store.Annulled"
	var out []cfe.AnnulledRange
	err := db.view(ctx, op, func(tx *bolt.Tx) error {
		out = out[:0]
		if b := tx.Bucket(bucketAnnulled); b != nil {
			if err := b.ForEach(func(k, v []byte) error {
				var r annulledRecord
				if err := json.Unmarshal(v, &r); err != nil {
					return fmt.Errorf("%w: annulled record %s: %w", ErrDamaged, k, err)
				}
				if a := r.domain(); !a.Day.Before(from) && !a.Day.After(to) {
					out = append(out, a)
				}
				return nil
			}); err != nil {
				return err
			}
		}
		b := tx.Bucket(bucketDGIAnnulled)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			var r dgiAnnulledRecord
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("dgi_annulled %d: %w", seqOf(k), err)
			}
			signed := inMontevideo(r.TmstFirma)
			day := cfe.DateOf(signed)
			if day.Before(from) || day.After(to) {
				return nil
			}
			var notes []string
			for _, m := range r.Reasons {
				notes = append(notes, strings.TrimSpace(m.Codigo+" "+m.Glosa))
			}
			out = append(out, cfe.AnnulledRange{Type: r.Type, Serie: r.Serie, From: r.Nro, To: r.Nro, Reason: cfe.AnnulDGIRejected,
				Note: strings.Join(notes, "; "), At: r.At, Day: day})
			return nil
		})
	})
	slices.SortFunc(out, func(a, b cfe.AnnulledRange) int {
		if a.Type != b.Type {
			return int(a.Type) - int(b.Type)
		}
		if c := strings.Compare(a.Serie, b.Serie); c != 0 {
			return c
		}
		return int(a.From - b.From)
	})
	return out, err
}

// annulSkipped records numbers a numbering step passed over (an automatic
// source: overlaps with numbers already annulled are left out).
func (db *DB) annulSkipped(ctx context.Context, op string, rs []cfe.AnnulledRange) error {
	if len(rs) == 0 {
		return nil
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	var written []cfe.AnnulledRange
	err := db.update(ctx, op, func(tx *bolt.Tx) error {
		written = written[:0]
		for _, r := range rs {
			w, err := putAnnulledTx(tx, r)
			if err != nil {
				return err
			}
			written = append(written, w...)
		}
		return nil
	})
	if err != nil {
		return err
	}
	db.noteAnnulledLocked(written)
	return nil
}
