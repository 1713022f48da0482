package store

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/shopspring/decimal"
	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// The DGI state of each CFE in direct mode (the agent sends its envelopes
// to DGI itself; package dgisend moves the states, cfe/dgistate.go names
// them).
//
// Nothing here is written by a commit: the CFEs to send are the committed
// ones after a cursor, in commit order (which is number order within each
// serie), read from the xml bucket by commit sequence. The sender records an
// envelope with its CFEs (DGIOpenEnvelope) in one transaction before it
// sends it, and every answer (DGIEnvelopeReceived, DGIEnvelopeUnknown,
// DGIEnvelopeRefused, DGIRecordVerdicts) in one transaction each, so that a
// crash at any point leaves either the envelope unrecorded (its CFEs still
// after the cursor) or recorded and not known to be answered (asked about
// before it is sent again).
//
// The buckets are made by the first DGI write, not at Open: a store that
// never sends to DGI has none, and a backup of an older store stays valid.
// A missing bucket reads as empty.
//
//	dgi_meta       "start": the first commit sequence to send minus one (set
//	               once, DGIBegin); "cursor": the highest commit sequence
//	               put in an envelope; "counts": CFEs by DGI state;
//	               "id_base": the base of the envelopes' Idemisor
//	dgi_cfes       commit sequence → the CFE's DGI state (dgiCFERecord)
//	dgi_open       commit sequence → "" while DGI has not received the CFE
//	               (pendiente put back, en_sobre, desconocido)
//	dgi_envelopes  envelope id (Idemisor, from the bucket's sequence) →
//	               dgiEnvelopeRecord
//	dgi_env_open   envelope id → "" until every CFE has DGI's verdict
//	dgi_annulled   commit sequence → the rejection (BE): the number is
//	               annulled, for the daily report
var (
	bucketDGIMeta      = []byte("dgi_meta")
	bucketDGICFEs      = []byte("dgi_cfes")
	bucketDGIOpen      = []byte("dgi_open")
	bucketDGIEnvelopes = []byte("dgi_envelopes")
	bucketDGIEnvOpen   = []byte("dgi_env_open")
	bucketDGIAnnulled  = []byte("dgi_annulled")
	// dgi_observed: commit sequence → a contingency receipt DGI observed
	// (CE) and that was not sent again corrected (keyed.go), made by the
	// first CE.
	bucketDGIObserved = []byte("dgi_observed")

	dgiBuckets = [][]byte{bucketDGIMeta, bucketDGICFEs, bucketDGIOpen, bucketDGIEnvelopes, bucketDGIEnvOpen, bucketDGIAnnulled}

	keyDGIStart  = []byte("start")
	keyDGICursor = []byte("cursor")
	keyDGICounts = []byte("counts")
	keyDGIBase   = []byte("id_base")
)

// dgiBaseStep is the span of envelope numbers of one store: the Idemisor
// of envelope n is its base + n, the base a random multiple of dgiBaseStep
// chosen once (DGIBegin). DGI keys S08 on the RUC and the Idemisor, so two
// tills of one company sending directly must not number alike; a random
// base of 9 999 makes that unlikely, and dgisend notices an envelope DGI
// answers for with CFEs that are not its own (DGIEnvelopeMismatch).
const dgiBaseStep = 1_000_000

type dgiReasonRecord struct {
	Codigo  string `json:"codigo"`
	Glosa   string `json:"glosa,omitempty"`
	Detalle string `json:"detalle,omitempty"`
}

type dgiCFERecord struct {
	UUID        string            `json:"uuid"`
	Type        cfe.Type          `json:"type"`
	Serie       string            `json:"serie"`
	Nro         int64             `json:"nro"`
	TmstFirma   time.Time         `json:"tmst_firma"`
	CommittedAt time.Time         `json:"committed_at"`
	Total       decimal.Decimal   `json:"total"`
	State       string            `json:"state"`
	Envelope    int64             `json:"envelope"`
	Reasons     []dgiReasonRecord `json:"reasons,omitempty"`
	UpdatedAt   time.Time         `json:"updated_at"`
}

type dgiEnvelopeRecord struct {
	Seqs       []uint64          `json:"seqs"`
	Fecha      time.Time         `json:"fecha"`
	State      string            `json:"state"`
	IDReceptor int64             `json:"id_receptor,omitempty"`
	Token      string            `json:"token,omitempty"`
	Fechahora  time.Time         `json:"fechahora,omitzero"`
	Reasons    []dgiReasonRecord `json:"reasons,omitempty"`
	Attempts   int               `json:"attempts,omitempty"`
	LastError  string            `json:"last_error,omitempty"`
	SentAt     time.Time         `json:"sent_at,omitzero"`
	UpdatedAt  time.Time         `json:"updated_at"`
}

type dgiAnnulledRecord struct {
	UUID      string            `json:"uuid"`
	Type      cfe.Type          `json:"type"`
	Serie     string            `json:"serie"`
	Nro       int64             `json:"nro"`
	TmstFirma time.Time         `json:"tmst_firma"`
	Reasons   []dgiReasonRecord `json:"reasons"`
	At        time.Time         `json:"at"`
}

// dgiCounts counts CFEs by the DGI state they have a record in
// (unassigned ones are counted from the cursor).
type dgiCounts map[string]int

func toReasonRecords(rs []cfe.DGIReason) []dgiReasonRecord {
	out := make([]dgiReasonRecord, 0, len(rs))
	for _, r := range rs {
		out = append(out, dgiReasonRecord(r))
	}
	return out
}

func fromReasonRecords(rs []dgiReasonRecord) []cfe.DGIReason {
	if len(rs) == 0 {
		return nil
	}
	out := make([]cfe.DGIReason, 0, len(rs))
	for _, r := range rs {
		out = append(out, cfe.DGIReason(r))
	}
	return out
}

func (r *dgiCFERecord) domain(seq uint64) cfe.DGICFE {
	return cfe.DGICFE{Seq: seq, UUID: r.UUID, Type: r.Type, Serie: r.Serie, Nro: r.Nro, TmstFirma: inMontevideo(r.TmstFirma),
		CommittedAt: r.CommittedAt, Total: r.Total, State: r.State, Envelope: r.Envelope, Reasons: fromReasonRecords(r.Reasons),
		UpdatedAt: r.UpdatedAt}
}

func (r *dgiEnvelopeRecord) domain(id int64) *cfe.DGIEnvelope {
	return &cfe.DGIEnvelope{ID: id, Seqs: slices.Clone(r.Seqs), Fecha: r.Fecha, State: r.State, IDReceptor: r.IDReceptor,
		Token: r.Token, Fechahora: r.Fechahora, Reasons: fromReasonRecords(r.Reasons), Attempts: r.Attempts,
		LastError: r.LastError, SentAt: r.SentAt, UpdatedAt: r.UpdatedAt}
}

func envKey(id int64) []byte { return seqBytes(uint64(id)) }

// dgiTx is a write transaction's view of the DGI buckets (made when
// missing).
type dgiTx struct {
	tx     *bolt.Tx
	b      map[string]*bolt.Bucket
	counts dgiCounts
}

func newDGITx(tx *bolt.Tx) (*dgiTx, error) {
	d := &dgiTx{tx: tx, b: map[string]*bolt.Bucket{}}
	for _, name := range dgiBuckets {
		b, err := tx.CreateBucketIfNotExists(name)
		if err != nil {
			return nil, err
		}
		d.b[string(name)] = b
	}
	d.counts = dgiCounts{}
	if _, err := getJSON(d.b[string(bucketDGIMeta)], keyDGICounts, &d.counts); err != nil {
		return nil, err
	}
	return d, nil
}

func (d *dgiTx) bucket(name []byte) *bolt.Bucket { return d.b[string(name)] }

func (d *dgiTx) meta(key []byte) uint64 {
	v := d.bucket(bucketDGIMeta).Get(key)
	if len(v) != 8 {
		return 0
	}
	return seqOf(v)
}

func (d *dgiTx) setMeta(key []byte, n uint64) error {
	return d.bucket(bucketDGIMeta).Put(key, seqBytes(n))
}

func (d *dgiTx) saveCounts() error { return putJSON(d.bucket(bucketDGIMeta), keyDGICounts, d.counts) }

// setState moves the CFE's record to state, keeping the counts and the open
// index.
func (d *dgiTx) setState(seq uint64, r *dgiCFERecord, state string, at time.Time) error {
	if r.State != "" {
		d.counts[r.State]--
	}
	d.counts[state]++
	r.State, r.UpdatedAt = state, at
	k := seqBytes(seq)
	switch state {
	case cfe.DGIPending, cfe.DGIInEnvelope, cfe.DGIUnknown:
		if err := d.bucket(bucketDGIOpen).Put(k, nil); err != nil {
			return err
		}
	default:
		if err := d.bucket(bucketDGIOpen).Delete(k); err != nil {
			return err
		}
	}
	return putJSON(d.bucket(bucketDGICFEs), k, r)
}

func (d *dgiTx) cfe(seq uint64) (*dgiCFERecord, error) {
	var r dgiCFERecord
	ok, err := getJSON(d.bucket(bucketDGICFEs), seqBytes(seq), &r)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("dgi: no record of commit sequence %d", seq)
	}
	return &r, nil
}

func (d *dgiTx) envelope(op string, id int64) (*dgiEnvelopeRecord, error) {
	var r dgiEnvelopeRecord
	ok, err := getJSON(d.bucket(bucketDGIEnvelopes), envKey(id), &r)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, notFound(op, "no existe el sobre %d", id)
	}
	return &r, nil
}

func (d *dgiTx) putEnvelope(id int64, r *dgiEnvelopeRecord) error {
	if r.State == cfe.EnvelopeDone || r.State == cfe.EnvelopeRefused {
		if err := d.bucket(bucketDGIEnvOpen).Delete(envKey(id)); err != nil {
			return err
		}
	} else if err := d.bucket(bucketDGIEnvOpen).Put(envKey(id), nil); err != nil {
		return err
	}
	return putJSON(d.bucket(bucketDGIEnvelopes), envKey(id), r)
}

// dgiBegun reports whether DGIBegin ran, in a read transaction.
func dgiBegun(tx *bolt.Tx) bool {
	b := tx.Bucket(bucketDGIMeta)
	return b != nil && b.Get(keyDGIStart) != nil
}

// DGIBegin sets, once, where sending to DGI starts: after the CFEs the
// hosted service already accepted (their provider sends them), so at the
// first CFE still in the outbox, or after the last committed one when the
// outbox is empty. A store that never had a provider starts at its first
// CFE. Later calls change nothing and return the same start (the commit
// sequence before the first CFE sent).
//
// Call it before the hosted deliverer runs: a CFE it delivers meanwhile
// would be left to the provider.
func (db *DB) DGIBegin(ctx context.Context) (uint64, error) {
	const op = "store.DGIBegin"
	var start uint64
	begun := false
	if err := db.view(ctx, op, func(tx *bolt.Tx) error {
		if begun = dgiBegun(tx); begun {
			start = seqOf(tx.Bucket(bucketDGIMeta).Get(keyDGIStart))
		}
		return nil
	}); err != nil || begun {
		return start, err
	}
	err := db.update(ctx, op, func(tx *bolt.Tx) error {
		d, err := newDGITx(tx)
		if err != nil {
			return err
		}
		if v := d.bucket(bucketDGIMeta).Get(keyDGIStart); v != nil {
			start = seqOf(v)
			return nil
		}
		outbox := tx.Bucket(bucketOutbox)
		start = outbox.Sequence()
		if k, _ := outbox.Cursor().First(); k != nil {
			start = seqOf(k) - 1
		}
		if q, _ := tx.Bucket(bucketQuarantine).Cursor().First(); q != nil && seqOf(q)-1 < start {
			start = seqOf(q) - 1
		}
		if err := d.setMeta(keyDGIStart, start); err != nil {
			return err
		}
		var r [2]byte
		_, _ = rand.Read(r[:]) // crypto/rand.Read never fails
		if err := d.setMeta(keyDGIBase, uint64(1+int(binary.BigEndian.Uint16(r[:]))%9_999)*dgiBaseStep); err != nil {
			return err
		}
		if err := d.setMeta(keyDGICursor, start); err != nil {
			return err
		}
		return d.saveCounts()
	})
	return start, err
}

// dgiItemAt reads the committed CFE of commit sequence seq, with its XML.
func dgiItemAt(tx *bolt.Tx, op string, seq uint64) (*cfe.DGIItem, error) {
	k := seqBytes(seq)
	uuid := ""
	var e outboxEntry
	for _, b := range [][]byte{bucketOutbox, bucketRejected} {
		if v := tx.Bucket(b).Get(k); v != nil && json.Unmarshal(v, &e) == nil && e.UUID != "" {
			uuid = e.UUID
			break
		}
	}
	x := tx.Bucket(bucketXML).Get(k)
	if x == nil {
		return nil, nil // archived or never committed
	}
	xml, err := decodeXML(tx, x)
	if err != nil {
		return nil, &recordDamage{uuid: uuid, reason: reasonRecord, cause: fmt.Errorf("xml %d: %w", seq, err)}
	}
	if uuid == "" {
		head, err := cfe.ReadCFEHead(xml)
		if err != nil {
			return nil, &recordDamage{reason: reasonRecord, cause: fmt.Errorf("xml %d: %w", seq, err)}
		}
		u := tx.Bucket(bucketByNumber).Get(numberKey(seqKey{head.Type, head.Serie}, head.Nro))
		if u == nil {
			return nil, &recordDamage{reason: reasonIndex, cause: fmt.Errorf("xml %d: %s not in by_number", seq, head)}
		}
		uuid = string(u)
	}
	rec, err := readRecord(tx, op, uuid, false)
	if err != nil {
		return nil, err
	}
	if rec.OutboxSeq != seq {
		return nil, &recordDamage{uuid: uuid, reason: reasonRecord, cause: fmt.Errorf("record has commit sequence %d, want %d", rec.OutboxSeq, seq)}
	}
	return &cfe.DGIItem{Seq: seq, UUID: rec.UUID, Type: rec.Type, Serie: rec.Serie, Nro: rec.Nro, TmstFirma: inMontevideo(rec.TmstFirma),
		CommittedAt: rec.CommittedAt, Total: rec.Total, XML: xml}, nil
}

// DGIPending returns up to limit CFEs to put in the next envelope, in
// commit order: first those put back after DGI refused their envelope, then
// those committed after the cursor. Nothing before DGIBegin is returned.
//
// Errors: EINVALID when limit is not positive or DGIBegin never ran;
// EUNAVAILABLE when ctx is done; a CFE that cannot be read back answers its
// Spanish error (errors.Is ErrRecordDamaged): sending stops there, since
// skipping it would break its serie's order.
func (db *DB) DGIPending(ctx context.Context, limit int) ([]cfe.DGIItem, error) {
	const op = "store.DGIPending"
	if limit <= 0 {
		return nil, invalid(op, field("limite", "debe ser mayor que cero"))
	}
	var out []cfe.DGIItem
	err := db.view(ctx, op, func(tx *bolt.Tx) error {
		if !dgiBegun(tx) {
			return invalid(op, field("dgi", "el envío directo a DGI no comenzó (DGIBegin)"))
		}
		add := func(seq uint64) error {
			it, err := dgiItemAt(tx, op, seq)
			if err != nil {
				if d, ok := errors.AsType[*recordDamage](err); ok {
					return d.asError(op)
				}
				return err
			}
			if it != nil {
				out = append(out, *it)
			}
			return nil
		}
		if open := tx.Bucket(bucketDGIOpen); open != nil {
			cfes := tx.Bucket(bucketDGICFEs)
			c := open.Cursor()
			for k, _ := c.First(); k != nil && len(out) < limit; k, _ = c.Next() {
				var r dgiCFERecord
				if ok, err := getJSON(cfes, k, &r); err != nil || !ok {
					return unreadable("dgi_open", k, err)
				}
				if r.State == cfe.DGIPending {
					if err := add(seqOf(k)); err != nil {
						return err
					}
				}
			}
		}
		cursor := seqOf(tx.Bucket(bucketDGIMeta).Get(keyDGICursor))
		c := tx.Bucket(bucketXML).Cursor()
		for k, _ := c.Seek(seqBytes(cursor + 1)); k != nil && len(out) < limit; k, _ = c.Next() {
			if err := add(seqOf(k)); err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

// DGIOpenEnvelope records a new envelope of the CFEs of seqs, in the order
// given, made at fecha, before it is sent: its id (the Caratula's
// Idemisor) comes from the store. Each CFE must be pending: put back, or the
// next ones after the cursor with none skipped.
//
// Errors: EINVALID for no CFE, more than cfe.MaxEnvelopeCFEs, or a CFE
// that is not pending or skips one; EUNAVAILABLE when ctx is done.
func (db *DB) DGIOpenEnvelope(ctx context.Context, items []cfe.DGIItem, fecha time.Time) (*cfe.DGIEnvelope, error) {
	const op = "store.DGIOpenEnvelope"
	if len(items) == 0 || len(items) > cfe.MaxEnvelopeCFEs {
		return nil, invalid(op, field("cfes", "un sobre lleva de 1 a %d comprobantes", cfe.MaxEnvelopeCFEs))
	}
	var env *cfe.DGIEnvelope
	err := db.update(ctx, op, func(tx *bolt.Tx) error {
		d, err := newDGITx(tx)
		if err != nil {
			return err
		}
		if d.bucket(bucketDGIMeta).Get(keyDGIStart) == nil {
			return invalid(op, field("dgi", "el envío directo a DGI no comenzó (DGIBegin)"))
		}
		now := db.opts.Now()
		envs := d.bucket(bucketDGIEnvelopes)
		n, err := envs.NextSequence()
		if err != nil {
			return err
		}
		id := int64(n)
		cursor := d.meta(keyDGICursor)
		rec := &dgiEnvelopeRecord{Fecha: fecha, State: cfe.EnvelopePrepared, UpdatedAt: now}
		xmls := tx.Bucket(bucketXML)
		for _, it := range items {
			// Commit sequences with no CFE in the live file (moved to a
			// yearly archive) are passed over; no other may be skipped.
			for it.Seq > cursor+1 && d.bucket(bucketDGICFEs).Get(seqBytes(it.Seq)) == nil && xmls.Get(seqBytes(cursor+1)) == nil {
				cursor++
			}
			r, err := d.cfe(it.Seq)
			switch {
			case err == nil && r.State == cfe.DGIPending:
			case err == nil:
				return invalid(op, field("cfes", "el comprobante %s %s-%d ya está %s ante DGI", it.Type.Name(), it.Serie, it.Nro, r.State))
			case it.Seq == cursor+1:
				cursor++
				r = &dgiCFERecord{UUID: it.UUID, Type: it.Type, Serie: it.Serie, Nro: it.Nro, TmstFirma: it.TmstFirma,
					CommittedAt: it.CommittedAt, Total: it.Total}
				d.counts["asignados"]++
			default:
				return invalid(op, field("cfes", "el comprobante %s %s-%d no es el siguiente pendiente de envío a DGI", it.Type.Name(), it.Serie, it.Nro))
			}
			r.Envelope, r.Reasons = id, nil
			if err := d.setState(it.Seq, r, cfe.DGIInEnvelope, now); err != nil {
				return err
			}
			rec.Seqs = append(rec.Seqs, it.Seq)
		}
		if err := d.setMeta(keyDGICursor, cursor); err != nil {
			return err
		}
		if err := d.putEnvelope(id, rec); err != nil {
			return err
		}
		env = rec.domain(id)
		return d.saveCounts()
	})
	return env, err
}

// updateEnvelope applies fn to envelope id and each of its CFE records, in
// one transaction.
func (db *DB) updateEnvelope(ctx context.Context, op string, id int64, fn func(d *dgiTx, e *dgiEnvelopeRecord, now time.Time) error) (*cfe.DGIEnvelope, error) {
	var out *cfe.DGIEnvelope
	err := db.update(ctx, op, func(tx *bolt.Tx) error {
		d, err := newDGITx(tx)
		if err != nil {
			return err
		}
		e, err := d.envelope(op, id)
		if err != nil {
			return err
		}
		now := db.opts.Now()
		if err := fn(d, e, now); err != nil {
			return err
		}
		e.UpdatedAt = now
		if err := d.putEnvelope(id, e); err != nil {
			return err
		}
		out = e.domain(id)
		return d.saveCounts()
	})
	return out, err
}

// eachCFE applies fn to the record of every CFE of e still carried by it (a
// CFE put back and sent in a later envelope belongs to that one).
func (d *dgiTx) eachCFE(id int64, e *dgiEnvelopeRecord, fn func(seq uint64, r *dgiCFERecord) error) error {
	for _, seq := range e.Seqs {
		r, err := d.cfe(seq)
		if err != nil {
			return err
		}
		if r.Envelope != id {
			continue
		}
		if err := fn(seq, r); err != nil {
			return err
		}
	}
	return nil
}

// DGIEnvelopeReceived records that DGI received envelope id (ACKSobre AS,
// or found by a query after an unknown outcome): IDReceptor, Token and
// Fechahora, with which its verdicts are asked for. Its CFEs become
// enviado. Recording it again with the same IDReceptor changes nothing.
//
// Errors: ENOTFOUND for an unknown envelope; ECONFLICT when it was recorded
// under another IDReceptor; EUNAVAILABLE when ctx is done.
func (db *DB) DGIEnvelopeReceived(ctx context.Context, id, idReceptor int64, token string, fechahora time.Time) (*cfe.DGIEnvelope, error) {
	const op = "store.DGIEnvelopeReceived"
	if idReceptor <= 0 || token == "" {
		return nil, invalid(op, field("token", "faltan el IDReceptor y el Token del sobre"))
	}
	return db.updateEnvelope(ctx, op, id, func(d *dgiTx, e *dgiEnvelopeRecord, now time.Time) error {
		if e.IDReceptor != 0 {
			if e.IDReceptor != idReceptor {
				return conflict(op, "el sobre %d ya fue recibido por DGI con el número %d", id, e.IDReceptor)
			}
			return nil
		}
		e.State, e.IDReceptor, e.Token, e.Fechahora, e.LastError, e.Reasons = cfe.EnvelopeReceived, idReceptor, token, fechahora, "", nil
		return d.eachCFE(id, e, func(seq uint64, r *dgiCFERecord) error {
			if r.State != cfe.DGIInEnvelope && r.State != cfe.DGIUnknown {
				return nil
			}
			return d.setState(seq, r, cfe.DGISent, now)
		})
	})
}

// DGIEnvelopeSending records a sending (or a question about it) of
// envelope id at at, so that a restart knows it may have left.
func (db *DB) DGIEnvelopeSending(ctx context.Context, id int64, at time.Time) (*cfe.DGIEnvelope, error) {
	return db.updateEnvelope(ctx, "store.DGIEnvelopeSending", id, func(_ *dgiTx, e *dgiEnvelopeRecord, _ time.Time) error {
		e.Attempts++
		e.SentAt = at
		return nil
	})
}

// DGIEnvelopeFailed records a failure that left the envelope's state as it
// was (nothing was sent, or a question could not be asked), with its
// Spanish reason.
func (db *DB) DGIEnvelopeFailed(ctx context.Context, id int64, reason string) (*cfe.DGIEnvelope, error) {
	return db.updateEnvelope(ctx, "store.DGIEnvelopeFailed", id, func(_ *dgiTx, e *dgiEnvelopeRecord, _ time.Time) error {
		e.LastError = reason
		return nil
	})
}

// DGIEnvelopeUnknown records that envelope id was sent and no trustworthy
// answer came back: it and its CFEs become desconocido, and DGI is asked
// before anything of it is sent again.
func (db *DB) DGIEnvelopeUnknown(ctx context.Context, id int64, reason string) (*cfe.DGIEnvelope, error) {
	const op = "store.DGIEnvelopeUnknown"
	return db.updateEnvelope(ctx, op, id, func(d *dgiTx, e *dgiEnvelopeRecord, now time.Time) error {
		if e.State != cfe.EnvelopePrepared && e.State != cfe.EnvelopeUnknown {
			return conflict(op, "el sobre %d ya está %s", id, e.State)
		}
		e.State, e.LastError = cfe.EnvelopeUnknown, reason
		return d.eachCFE(id, e, func(seq uint64, r *dgiCFERecord) error {
			return d.setState(seq, r, cfe.DGIUnknown, now)
		})
	})
}

// DGIEnvelopeRefused records that DGI refused envelope id as a whole (BS
// for another reason than S08, or a query that says DGI does not hold it
// after it was refused): DGI holds none of its CFEs, which go back to
// pending, to be sent first in a new envelope.
func (db *DB) DGIEnvelopeRefused(ctx context.Context, id int64, reasons []cfe.DGIReason) (*cfe.DGIEnvelope, error) {
	const op = "store.DGIEnvelopeRefused"
	return db.updateEnvelope(ctx, op, id, func(d *dgiTx, e *dgiEnvelopeRecord, now time.Time) error {
		if e.State == cfe.EnvelopeReceived || e.State == cfe.EnvelopeDone {
			return conflict(op, "el sobre %d ya fue recibido por DGI", id)
		}
		e.State, e.Reasons = cfe.EnvelopeRefused, toReasonRecords(reasons)
		e.LastError = "DGI rechazó el sobre"
		return d.eachCFE(id, e, func(seq uint64, r *dgiCFERecord) error {
			r.Reasons = toReasonRecords(reasons)
			return d.setState(seq, r, cfe.DGIPending, now)
		})
	})
}

// DGIRecordVerdicts records DGI's verdicts on CFEs of envelope id (ACKCFE,
// or EFACCONSULTARESTADOCFE after E02). A BE annuls the number: the
// rejection is kept (DGIRejections) for the daily report. When every CFE
// of the envelope has a verdict the envelope is resolved. A verdict on a
// CFE that already has one is replaced only by a different state.
//
// Errors: ENOTFOUND for an unknown envelope; EINVALID for a CFE not in it
// or a state that is not a verdict; EUNAVAILABLE when ctx is done.
func (db *DB) DGIRecordVerdicts(ctx context.Context, id int64, verdicts []cfe.DGIVerdict) (*cfe.DGIEnvelope, error) {
	const op = "store.DGIRecordVerdicts"
	return db.updateEnvelope(ctx, op, id, func(d *dgiTx, e *dgiEnvelopeRecord, now time.Time) error {
		for _, v := range verdicts {
			if !slices.Contains(e.Seqs, v.Seq) {
				return invalid(op, field("cfes", "el comprobante %d no está en el sobre %d", v.Seq, id))
			}
			switch v.State {
			case cfe.DGIAccepted, cfe.DGIRejected, cfe.DGIObserved:
			default:
				return invalid(op, field("estado", "%q no es un veredicto de DGI", v.State))
			}
			r, err := d.cfe(v.Seq)
			if err != nil {
				return err
			}
			if r.State == v.State {
				continue
			}
			r.Reasons, r.Envelope = toReasonRecords(v.Reasons), id
			if err := d.setState(v.Seq, r, v.State, now); err != nil {
				return err
			}
			k := seqBytes(v.Seq)
			if v.State == cfe.DGIRejected {
				if err := putJSON(d.bucket(bucketDGIAnnulled), k, dgiAnnulledRecord{UUID: r.UUID, Type: r.Type, Serie: r.Serie,
					Nro: r.Nro, TmstFirma: r.TmstFirma, Reasons: r.Reasons, At: now}); err != nil {
					return err
				}
			} else if err := d.bucket(bucketDGIAnnulled).Delete(k); err != nil {
				return err
			}
			if err := noteObserved(d.tx, v.Seq, r, v.State, now); err != nil {
				return err
			}
			if err := appendAudit(d.tx, AuditEvent{At: now, Kind: AuditDGIVerdict, UUID: r.UUID, Type: r.Type, Serie: r.Serie,
				Nro: r.Nro, Detail: verdictDetail(v)}); err != nil {
				return err
			}
		}
		done := true
		if err := d.eachCFE(id, e, func(_ uint64, r *dgiCFERecord) error {
			switch r.State {
			case cfe.DGIAccepted, cfe.DGIRejected, cfe.DGIObserved:
			default:
				done = false
			}
			return nil
		}); err != nil {
			return err
		}
		if done {
			e.State = cfe.EnvelopeDone
		}
		return nil
	})
}

func verdictDetail(v cfe.DGIVerdict) string {
	var b bytes.Buffer
	b.WriteString("DGI: " + v.State)
	for _, r := range v.Reasons {
		fmt.Fprintf(&b, " %s %s", r.Codigo, r.Glosa)
	}
	return b.String()
}

// DGIEnvelope returns envelope id. Errors: ENOTFOUND.
func (db *DB) DGIEnvelope(ctx context.Context, id int64) (*cfe.DGIEnvelope, error) {
	const op = "store.DGIEnvelope"
	var out *cfe.DGIEnvelope
	err := db.view(ctx, op, func(tx *bolt.Tx) error {
		var r dgiEnvelopeRecord
		b := tx.Bucket(bucketDGIEnvelopes)
		if b == nil {
			return notFound(op, "no existe el sobre %d", id)
		}
		ok, err := getJSON(b, envKey(id), &r)
		if err != nil {
			return err
		}
		if !ok {
			return notFound(op, "no existe el sobre %d", id)
		}
		out = r.domain(id)
		return nil
	})
	return out, err
}

// DGIOpenEnvelopes returns the envelopes not yet resolved (prepared,
// unknown, received without every verdict), oldest first.
func (db *DB) DGIOpenEnvelopes(ctx context.Context) ([]*cfe.DGIEnvelope, error) {
	const op = "store.DGIOpenEnvelopes"
	var out []*cfe.DGIEnvelope
	err := db.view(ctx, op, func(tx *bolt.Tx) error {
		open, envs := tx.Bucket(bucketDGIEnvOpen), tx.Bucket(bucketDGIEnvelopes)
		if open == nil {
			return nil
		}
		return open.ForEach(func(k, _ []byte) error {
			var r dgiEnvelopeRecord
			if ok, err := getJSON(envs, k, &r); err != nil || !ok {
				return unreadable("dgi_env_open", k, err)
			}
			out = append(out, r.domain(int64(seqOf(k))))
			return nil
		})
	})
	return out, err
}

// DGICFEs returns the DGI state of the CFEs of seqs (those without a
// record, not yet in any envelope, are left out).
func (db *DB) DGICFEs(ctx context.Context, seqs []uint64) ([]cfe.DGICFE, error) {
	const op = "store.DGICFEs"
	var out []cfe.DGICFE
	err := db.view(ctx, op, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketDGICFEs)
		if b == nil {
			return nil
		}
		for _, seq := range seqs {
			var r dgiCFERecord
			ok, err := getJSON(b, seqBytes(seq), &r)
			if err != nil {
				return err
			}
			if ok {
				out = append(out, r.domain(seq))
			}
		}
		return nil
	})
	return out, err
}

// DGIState returns the DGI state of one CFE by its number; State is
// pendiente for a committed CFE not yet in any envelope. Errors: ENOTFOUND
// for no such CFE.
func (db *DB) DGIState(ctx context.Context, t cfe.Type, serie string, nro int64) (cfe.DGICFE, error) {
	const op = "store.DGIState"
	var out cfe.DGICFE
	err := db.view(ctx, op, func(tx *bolt.Tx) error {
		uuid := tx.Bucket(bucketByNumber).Get(numberKey(seqKey{t, serie}, nro))
		if uuid == nil {
			return notFound(op, "no existe el comprobante %s %s-%d", t.Name(), serie, nro)
		}
		rec, err := readRecord(tx, op, string(uuid), false)
		if err != nil {
			return recordError(op, err)
		}
		out = cfe.DGICFE{Seq: rec.OutboxSeq, UUID: rec.UUID, Type: rec.Type, Serie: rec.Serie, Nro: rec.Nro,
			TmstFirma: inMontevideo(rec.TmstFirma), CommittedAt: rec.CommittedAt, Total: rec.Total, State: cfe.DGIPending}
		if b := tx.Bucket(bucketDGICFEs); b != nil {
			var r dgiCFERecord
			if ok, err := getJSON(b, seqBytes(rec.OutboxSeq), &r); err != nil {
				return err
			} else if ok {
				out = r.domain(rec.OutboxSeq)
			}
		}
		return nil
	})
	return out, err
}

// DGICounts returns the /state block's counts. Pendientes counts the CFEs
// committed after the cursor, those put back and those in an envelope not
// yet answered; Enviados every CFE whose envelope DGI received (with or
// without its verdict). All are zero when DGIBegin never ran.
func (db *DB) DGICounts(ctx context.Context) (cfe.DGICounts, error) {
	const op = "store.DGICounts"
	var out cfe.DGICounts
	err := db.view(ctx, op, func(tx *bolt.Tx) error {
		if !dgiBegun(tx) {
			return nil
		}
		meta := tx.Bucket(bucketDGIMeta)
		c := dgiCounts{}
		if _, err := getJSON(meta, keyDGICounts, &c); err != nil {
			return err
		}
		cursor := seqOf(meta.Get(keyDGICursor))
		unassigned := 0
		if last := tx.Bucket(bucketOutbox).Sequence(); last > cursor {
			unassigned = int(last - cursor)
		}
		out = cfe.DGICounts{
			Enviados:     c[cfe.DGISent] + c[cfe.DGIAccepted] + c[cfe.DGIRejected] + c[cfe.DGIObserved],
			Aceptados:    c[cfe.DGIAccepted],
			Rechazados:   c[cfe.DGIRejected],
			Observados:   c[cfe.DGIObserved],
			Pendientes:   unassigned + c[cfe.DGIPending] + c[cfe.DGIInEnvelope],
			Desconocidos: c[cfe.DGIUnknown],
		}
		if old, ok := oldestOpen(tx, cursor); ok {
			out.OldestPending = old
		}
		return nil
	})
	return out, err
}

// oldestOpen returns the commit time of the oldest CFE DGI has not
// received.
func oldestOpen(tx *bolt.Tx, cursor uint64) (time.Time, bool) {
	var oldest time.Time
	found := false
	if open := tx.Bucket(bucketDGIOpen); open != nil {
		if k, _ := open.Cursor().First(); k != nil {
			var r dgiCFERecord
			if ok, _ := getJSON(tx.Bucket(bucketDGICFEs), k, &r); ok {
				oldest, found = r.CommittedAt, true
			}
		}
	}
	if found {
		return oldest, true
	}
	if k, _ := tx.Bucket(bucketXML).Cursor().Seek(seqBytes(cursor + 1)); k != nil {
		if at, ok := committedAt(tx, seqOf(k)); ok {
			return at, true
		}
	}
	return time.Time{}, false
}

// committedAt reads the commit time of the CFE of commit sequence seq
// through its outbox entry (or its record), without its XML.
func committedAt(tx *bolt.Tx, seq uint64) (time.Time, bool) {
	var e outboxEntry
	for _, b := range [][]byte{bucketOutbox, bucketRejected} {
		if v := tx.Bucket(b).Get(seqBytes(seq)); v != nil && json.Unmarshal(v, &e) == nil {
			return e.CommittedAt, true
		}
	}
	it, err := dgiItemAt(tx, "store.DGICounts", seq)
	if err != nil || it == nil {
		return time.Time{}, false
	}
	return it.CommittedAt, true
}

// DGIOverdue returns the CFEs committed at or before before that DGI has
// not received yet and for which urgent says yes (those DGI must hold
// before the goods leave), oldest first, at most limit, and how many there
// are in all.
func (db *DB) DGIOverdue(ctx context.Context, before time.Time, urgent func(cfe.Type, decimal.Decimal) bool, limit int) ([]cfe.DGICFE, int, error) {
	const op = "store.DGIOverdue"
	var out []cfe.DGICFE
	total := 0
	err := db.view(ctx, op, func(tx *bolt.Tx) error {
		if !dgiBegun(tx) {
			return nil
		}
		take := func(c cfe.DGICFE) {
			if c.CommittedAt.After(before) || !urgent(c.Type, c.Total) {
				return
			}
			total++
			if len(out) < limit {
				out = append(out, c)
			}
		}
		if open := tx.Bucket(bucketDGIOpen); open != nil {
			cfes := tx.Bucket(bucketDGICFEs)
			if err := open.ForEach(func(k, _ []byte) error {
				var r dgiCFERecord
				if ok, err := getJSON(cfes, k, &r); err != nil || !ok {
					return unreadable("dgi_open", k, err)
				}
				take(r.domain(seqOf(k)))
				return nil
			}); err != nil {
				return err
			}
		}
		cursor := seqOf(tx.Bucket(bucketDGIMeta).Get(keyDGICursor))
		c := tx.Bucket(bucketXML).Cursor()
		for k, _ := c.Seek(seqBytes(cursor + 1)); k != nil; k, _ = c.Next() {
			at, ok := committedAt(tx, seqOf(k))
			if ok && at.After(before) {
				break // commit order is time order
			}
			it, err := dgiItemAt(tx, op, seqOf(k))
			if err != nil || it == nil {
				continue // an unreadable CFE stops the sender, which reports it
			}
			take(cfe.DGICFE{Seq: it.Seq, UUID: it.UUID, Type: it.Type, Serie: it.Serie, Nro: it.Nro, TmstFirma: it.TmstFirma,
				CommittedAt: it.CommittedAt, Total: it.Total, State: cfe.DGIPending})
		}
		return nil
	})
	slices.SortFunc(out, func(a, b cfe.DGICFE) int { return a.CommittedAt.Compare(b.CommittedAt) })
	return out, total, err
}

// DGIRejections returns up to limit CFEs DGI rejected (BE), newest first:
// their numbers are annulled, and each needs a new CFE.
func (db *DB) DGIRejections(ctx context.Context, limit int) ([]cfe.DGIRejection, error) {
	const op = "store.DGIRejections"
	var out []cfe.DGIRejection
	err := db.view(ctx, op, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketDGIAnnulled)
		if b == nil {
			return nil
		}
		c := b.Cursor()
		for k, v := c.Last(); k != nil && len(out) < limit; k, v = c.Prev() {
			var r dgiAnnulledRecord
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("dgi_annulled %d: %w", seqOf(k), err)
			}
			out = append(out, cfe.DGIRejection{UUID: r.UUID, Type: r.Type, Serie: r.Serie, Nro: r.Nro,
				TmstFirma: inMontevideo(r.TmstFirma), Reasons: fromReasonRecords(r.Reasons), At: r.At})
		}
		return nil
	})
	return out, err
}

// DGIItems returns the committed CFEs of seqs with their XML, in the order
// given, to build an envelope again. Errors: ENOTFOUND for a commit
// sequence with no CFE in the live file; a damaged one answers its Spanish
// error (errors.Is ErrRecordDamaged).
func (db *DB) DGIItems(ctx context.Context, seqs []uint64) ([]cfe.DGIItem, error) {
	const op = "store.DGIItems"
	var out []cfe.DGIItem
	err := db.view(ctx, op, func(tx *bolt.Tx) error {
		out = out[:0]
		for _, seq := range seqs {
			it, err := dgiItemAt(tx, op, seq)
			if d, ok := errors.AsType[*recordDamage](err); ok {
				return d.asError(op)
			}
			if err != nil {
				return err
			}
			if it == nil {
				return notFound(op, "no está el comprobante de la secuencia %d", seq)
			}
			out = append(out, *it)
		}
		return nil
	})
	return out, err
}

// unreadable is the error of an index entry whose record is missing (err
// nil) or cannot be decoded.
func unreadable(index string, k []byte, err error) error {
	if err != nil {
		return fmt.Errorf("%s %d: %w", index, seqOf(k), err)
	}
	return fmt.Errorf("%s %d: its record is missing", index, seqOf(k))
}

// DGIIDBase returns the base of the envelopes' Idemisor (the Caratula's
// Idemisor of envelope n is base + n), chosen by DGIBegin; 0 before it.
func (db *DB) DGIIDBase(ctx context.Context) (int64, error) {
	var base int64
	err := db.view(ctx, "store.DGIIDBase", func(tx *bolt.Tx) error {
		if b := tx.Bucket(bucketDGIMeta); b != nil {
			if v := b.Get(keyDGIBase); len(v) == 8 {
				base = int64(seqOf(v))
			}
		}
		return nil
	})
	return base, err
}

// DGIEnvelopeMismatch records that the envelope DGI holds under envelope
// id's Idemisor is not this store's (DGI's verdicts name none of its CFEs:
// another till numbered an envelope alike): DGI holds none of its CFEs,
// which go back to pending, first in line, to go in a new envelope.
func (db *DB) DGIEnvelopeMismatch(ctx context.Context, id int64, reason string) (*cfe.DGIEnvelope, error) {
	const op = "store.DGIEnvelopeMismatch"
	return db.updateEnvelope(ctx, op, id, func(d *dgiTx, e *dgiEnvelopeRecord, now time.Time) error {
		if e.State != cfe.EnvelopeReceived {
			return conflict(op, "el sobre %d está %s", id, e.State)
		}
		e.State, e.LastError = cfe.EnvelopeRefused, reason
		return d.eachCFE(id, e, func(seq uint64, r *dgiCFERecord) error {
			if r.State != cfe.DGISent {
				return nil
			}
			return d.setState(seq, r, cfe.DGIPending, now)
		})
	})
}
