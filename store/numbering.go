package store

import (
	"context"
	"fmt"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// slotState is where a reserved number stands.
type slotState int

const (
	slotReserved slotState = iota // handed out; the caller is building and signing the CFE
	slotQueued                    // Commit called; waiting for its turn
	slotWriting                   // in the transaction the committer is writing
)

// slot is one number handed out and not yet committed or given back.
type slot struct {
	res   *cfe.Reservation
	state slotState
	since time.Time // when it was reserved (real clock)
	// holeSince is, when the number was a hole that this slot refilled, when
	// it first became one: if it is given back again, it is a hole as old as
	// that, so a number that keeps being refilled and given back (a caller
	// retrying a request that fails after its reservation) cannot hold the
	// higher numbers of the serie longer than ReclaimTimeout.
	holeSince time.Time
	rec       *issuedRecord // what to store, set by Commit
	queued    time.Time     // when Commit queued it (real clock)
	prev      int64         // the counter value it follows, set when picked for a batch
	done      chan struct{} // closed when finished
	err       error         // outcome, set before done is closed
}

func (s *slot) key() seqKey { return seqKey{s.res.Type, s.res.Serie} }

// finish records the outcome and wakes the Commit waiting on s.
func (s *slot) finish(err error) {
	s.err = err
	close(s.done)
}

// sequence is the in-memory numbering state of one (type, serie). Every number
// between last and the highest slot is a slot, a hole, or was passed over when
// numbering jumped to the start of another range.
type sequence struct {
	last    int64               // last committed number: what the counter on disk holds
	slots   map[int64]*slot     // numbers handed out, by number
	holes   map[int64]time.Time // numbers given back below a higher slot, with when
	changed chan struct{}       // closed and replaced whenever holes or slots change in a way waiters care about
	// annulled are the serie's annulled runs (annulled.go), in number
	// order: never handed out.
	annulled []numberRun
}

// seq returns the sequence of k, creating it. The caller holds db.mu.
func (db *DB) seq(k seqKey) *sequence {
	s := db.seqs[k]
	if s == nil {
		s = &sequence{slots: map[int64]*slot{}, holes: map[int64]time.Time{}, changed: make(chan struct{})}
		db.seqs[k] = s
	}
	return s
}

func (q *sequence) broadcast() {
	close(q.changed)
	q.changed = make(chan struct{})
}

// top is the highest number committed or handed out.
func (q *sequence) top() int64 {
	t := q.last
	for n := range q.slots {
		t = max(t, n)
	}
	return t
}

func (q *sequence) lowestHole() (int64, bool) {
	var low int64
	for n := range q.holes {
		if low == 0 || n < low {
			low = n
		}
	}
	return low, low != 0
}

// next returns the number range r would hand out: the lowest hole if the
// sequence has one (holes are refilled before anything else, so r qualifies
// only if it holds it), else the number after the top, but at least r.DNro,
// past the annulled numbers that follow it.
func (q *sequence) next(r cfe.CAERange) (n int64, fillsHole, ok bool) {
	if h, found := q.lowestHole(); found {
		return h, true, r.DNro <= h && h <= r.HNro
	}
	n = q.skipAnnulled(max(q.top()+1, r.DNro))
	return n, false, n <= r.HNro
}

// take hands out n to s.
func (q *sequence) take(n int64, s *slot) {
	q.slots[n] = s
	if since, ok := q.holes[n]; ok {
		s.holeSince = since
		delete(q.holes, n)
		q.broadcast()
	}
}

// remove gives back the uncommitted number n: it becomes a hole if a higher
// number is still handed out; otherwise the sequence shrinks, dropping the
// holes above its new top, so the next number follows the top again.
func (q *sequence) remove(n int64, now time.Time) {
	since := now
	if s := q.slots[n]; s != nil && !s.holeSince.IsZero() {
		since = s.holeSince // a refilled hole given back again keeps its age
	}
	delete(q.slots, n)
	top := q.top()
	if n < top {
		q.holes[n] = since
	} else {
		for h := range q.holes {
			if h > top {
				delete(q.holes, h)
			}
		}
	}
	q.broadcast()
}

// commit records that n is on disk.
func (q *sequence) commit(n int64) {
	delete(q.slots, n)
	q.last = n
}

// Reserve takes the next number of type t from a range usable on day today:
// not expired, with numbers left. Within a serie it hands out the lowest free
// number (a released one first, else the one after the last handed out, but at
// least the range's DNro). Across series it prefers a serie with a released
// number to refill, then the range that expires first, then the lowest serie,
// then the lowest DNro. Nothing is written to disk.
//
// Errors: EUNAVAILABLE with Respuesta cfe.RespSinRangoCAE when no range is
// usable; EINVALID for an unknown type or a zero date; EUNAVAILABLE when ctx is
// done or the store is closed.
func (db *DB) Reserve(ctx context.Context, t cfe.Type, today cfe.Date) (*cfe.Reservation, error) {
	return db.ReserveFor(ctx, t, today, nil)
}

// ReserveFor is Reserve among the ranges fits accepts (nil accepts all), as
// cfe.IssueStore documents: each serie offers the range and number Reserve
// would take from it, and a serie whose offer fits refuses is passed over, so
// no number is ever skipped. When every offer is refused, the error is fits's
// answer for the offer Reserve would have taken.
func (db *DB) ReserveFor(ctx context.Context, t cfe.Type, today cfe.Date, fits cfe.RangeCheck) (*cfe.Reservation, error) {
	const op = "store.Reserve"
	if err := ctx.Err(); err != nil {
		return nil, ctxError(op, err)
	}
	if !t.Valid() {
		return nil, invalid(op, field("tipo", "%d no es un tipo de CFE de DGI", int(t)))
	}
	if info, _ := t.Info(); info.Contingency {
		// A paper form's number is the one printed on it (CommitKeyed).
		return nil, invalid(op, field("tipo", "%s es un comprobante de contingencia: se ingresa con la serie y el número impresos en el formulario", t.Name()))
	}
	if today.IsZero() {
		return nil, invalid(op, field("fecha", "es obligatoria"))
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return nil, errClosed(op)
	}
	if err := db.holdLocked(op, t, today); err != nil {
		return nil, err
	}
	r, n, ok, refused := db.pick(t, today, fits)
	if refused != nil {
		return nil, refused
	}
	if !ok {
		return nil, &cfe.Error{Code: cfe.EUNAVAILABLE, Op: op, Respuesta: cfe.RespSinRangoCAE,
			Message: fmt.Sprintf("no hay un rango CAE vigente con números disponibles para el tipo %d (%s)", int(t), t.Name())}
	}
	res := &cfe.Reservation{Type: t, Serie: r.Serie, Nro: n, Range: r}
	db.seq(seqKey{t, r.Serie}).take(n, &slot{res: res, since: time.Now(), done: make(chan struct{})})
	db.noteBusyLocked()
	return res, nil
}

// noteBusyLocked updates DB.busy with the CFEs in progress now (reserved,
// waiting for their turn or being written). The caller holds db.mu.
func (db *DB) noteBusyLocked() {
	n := 0
	for _, q := range db.seqs {
		n += len(q.slots)
	}
	db.busy = max(float64(n), db.busy*busyDecay)
}

// busyDecay is how much DB.busy forgets per reservation: a peak counts for
// some tens of reservations.
const busyDecay = 0.95

// pick chooses the range and number of the next reservation of type t, as
// ReserveFor documents; refused is fits's error when it refused every offer.
// The caller holds db.mu.
func (db *DB) pick(t cfe.Type, today cfe.Date, fits cfe.RangeCheck) (_ cfe.CAERange, _ int64, ok bool, refused error) {
	type candidate struct {
		r    cfe.CAERange
		n    int64
		fill bool
	}
	best := map[string]candidate{} // per serie: the lowest number
	var order []string             // series in the order of their first range by preference
	for _, r := range db.ranges[t] {
		if r.Expired(today) {
			continue
		}
		n, fill, ok := db.seq(seqKey{t, r.Serie}).next(r)
		if !ok {
			continue
		}
		c, seen := best[r.Serie]
		if !seen {
			order = append(order, r.Serie)
		}
		if !seen || n < c.n {
			best[r.Serie] = candidate{r, n, fill}
		}
	}
	var chosen, first *candidate // the preferred offer that fits, the preferred offer
	prefer := func(c candidate, over *candidate) bool {
		return over == nil || (c.fill && !over.fill) || (c.fill == over.fill && byPreference(c.r, over.r) < 0)
	}
	errs := map[string]error{}
	for _, serie := range order {
		c := best[serie]
		if prefer(c, first) {
			first = &c
		}
		if fits != nil {
			if err := fits(c.r); err != nil {
				errs[serie] = err
				continue
			}
		}
		if prefer(c, chosen) {
			chosen = &c
		}
	}
	switch {
	case chosen != nil:
		return chosen.r, chosen.n, true, nil
	case first != nil:
		return cfe.CAERange{}, 0, false, errs[first.r.Serie]
	}
	return cfe.CAERange{}, 0, false, nil
}

// Release gives back a reservation that will not be committed: its number is
// handed out again by the next Reserve. Releasing a reservation that Commit
// has taken (committed or not), or releasing twice, does nothing.
func (db *DB) Release(r *cfe.Reservation) {
	if r == nil {
		return
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	q, s := db.slotOf(r)
	if s == nil || s.state != slotReserved {
		return
	}
	q.remove(r.Nro, time.Now())
	db.wakeCommitter() // one CFE fewer being signed: see collect
}

// slotOf finds the slot of reservation r: the same pointer Reserve returned.
// The caller holds db.mu.
func (db *DB) slotOf(r *cfe.Reservation) (*sequence, *slot) {
	q := db.seqs[seqKey{r.Type, r.Serie}]
	if q == nil {
		return nil, nil
	}
	s := q.slots[r.Nro]
	if s == nil || s.res != r {
		return nil, nil
	}
	return q, s
}

// Commit stores doc, the signed CFE numbered by r, with its counter, indexes,
// outbox entry and audit event in one transaction that is fsynced before
// Commit returns. The stored delivery state is pending, whatever doc says.
//
// It waits until every lower number of the serie is committed (they may be
// written in the same transaction). If a lower number is given back and no
// reservation takes it within Options.ReclaimTimeout, Commit fails with
// EUNAVAILABLE and the caller should retry with a new reservation. ctx bounds
// the wait, not the write: once the CFE is in a transaction, Commit returns
// that transaction's outcome. Because a cancelled Commit leaves a gap the
// higher numbers must wait on, commit a signed CFE with a context that does
// not end when the client goes away.
//
// Whatever the outcome, the reservation is finished when Commit returns: on
// failure its number is given back.
//
// Errors: ECONFLICT (Respuesta cfe.RespConflictoUUID) when doc.UUID is already
// stored; EINVALID when doc does not match r or lacks a required field;
// EUNAVAILABLE when the reservation is no longer valid, the range expired on
// the signature date (Respuesta cfe.RespSinRangoCAE), a lower number stayed
// unclaimed, ctx ended, the store closed or the write failed.
func (db *DB) Commit(ctx context.Context, r *cfe.Reservation, doc *cfe.Issued) error {
	const op = "store.Commit"
	if r == nil || doc == nil {
		return invalid(op, field("reserva", "la reserva y el comprobante son obligatorios"))
	}
	if fields := checkIssued(r, doc); len(fields) > 0 {
		db.Release(r)
		return invalid(op, fields...)
	}
	rec := toIssuedRecord(doc)
	rec.Delivery = deliveryRecord{State: cfe.DeliveryPending}
	// Compressed here, in the caller's goroutine, not in the committer's
	// transaction.
	zxml, err := db.codec.encode(doc.XML)
	if err != nil {
		db.Release(r)
		return &cfe.Error{Code: cfe.EINTERNAL, Op: op, Message: "no se pudo comprimir el comprobante firmado", Err: err}
	}
	rec.zxml = zxml
	rec.words = wordsOfIssued(doc)

	db.mu.Lock()
	q, s := db.slotOf(r)
	if s == nil || s.state != slotReserved {
		db.mu.Unlock()
		return &cfe.Error{Code: cfe.EUNAVAILABLE, Op: op,
			Message: fmt.Sprintf("la reserva del número %d de la serie %s ya no es válida; reintente", r.Nro, r.Serie)}
	}
	if db.closed {
		q.remove(r.Nro, time.Now())
		s.finish(errClosed(op))
		db.mu.Unlock()
		return s.err
	}
	s.state, s.rec, s.queued = slotQueued, &rec, time.Now()
	db.mu.Unlock()

	db.wakeCommitter()
	return db.await(ctx, q, s)
}

// checkIssued checks that doc is the CFE of reservation r and has what the
// store needs.
func checkIssued(r *cfe.Reservation, doc *cfe.Issued) []cfe.FieldError {
	var fs []cfe.FieldError
	fs = append(fs, cfe.CheckUUID(doc.UUID)...)
	if doc.Type != r.Type {
		fs = append(fs, field("tipo", "es %d pero la reserva es del tipo %d", int(doc.Type), int(r.Type)))
	}
	if doc.Serie != r.Serie {
		fs = append(fs, field("serie", "es %q pero la reserva es de la serie %q", doc.Serie, r.Serie))
	}
	if doc.Nro != r.Nro {
		fs = append(fs, field("numero", "es %d pero el número reservado es %d", doc.Nro, r.Nro))
	}
	if doc.RangeID != r.Range.ID {
		fs = append(fs, field("rango", "es %q pero el número se reservó del rango %q", doc.RangeID, r.Range.ID))
	}
	if doc.CAE != r.Range.CAEData() {
		fs = append(fs, field("cae", "no coincide con el rango %s", r.Range.ID))
	}
	if doc.TmstFirma.IsZero() {
		fs = append(fs, field("tmst_firma", "es obligatoria"))
	}
	if len(doc.XML) == 0 {
		fs = append(fs, field("xml", "el CFE firmado es obligatorio"))
	}
	return fs
}

// await waits until the committer has finished s, or gives s up when ctx ends
// or a lower number stays unclaimed too long, as Commit documents.
func (db *DB) await(ctx context.Context, q *sequence, s *slot) error {
	for {
		w, finished := db.waitPlan(ctx, q, s)
		if finished {
			return s.err
		}
		select {
		case <-s.done:
		case <-w.changed:
		case <-w.ctxDone:
		case <-w.timeout():
		}
		w.stop()
	}
}

// waitSet is what a waiting Commit wakes up on.
type waitSet struct {
	changed <-chan struct{}
	ctxDone <-chan struct{}
	timer   *time.Timer
}

func (w waitSet) timeout() <-chan time.Time {
	if w.timer == nil {
		return nil
	}
	return w.timer.C
}

func (w waitSet) stop() {
	if w.timer != nil {
		w.timer.Stop()
	}
}

// waitPlan looks at s under db.mu. It reports finished when s has an outcome,
// giving s up first if ctx has ended or a lower number stayed unclaimed too
// long; otherwise it says what to wait for. A slot being written cannot be
// given up: its Commit waits for the transaction's outcome.
func (db *DB) waitPlan(ctx context.Context, q *sequence, s *slot) (w waitSet, finished bool) {
	db.mu.Lock()
	defer db.mu.Unlock()
	select {
	case <-s.done:
		return w, true
	default:
	}
	w.changed = q.changed
	if s.state != slotQueued {
		return w, false
	}
	var deadline time.Time
	err := ctx.Err()
	if err != nil {
		err = ctxError("store.Commit", err)
	} else {
		deadline, err = db.blockedLocked(q, s)
	}
	if err != nil {
		q.remove(s.res.Nro, time.Now())
		s.finish(err)
		return w, true
	}
	w.ctxDone = ctx.Done()
	if !deadline.IsZero() {
		w.timer = time.NewTimer(time.Until(deadline))
	}
	return w, false
}

// blockedLocked looks at what lies below the queued slot s. It fails when a
// hole below s has stayed unclaimed longer than ReclaimTimeout, and takes back
// reservations below s older than ReservationTimeout (they become holes).
// Otherwise it returns when to look again (zero: only when something
// changes). The caller holds db.mu.
func (db *DB) blockedLocked(q *sequence, s *slot) (time.Time, error) {
	now := time.Now()
	n := s.res.Nro
	var deadline time.Time
	earliest := func(t time.Time) {
		if deadline.IsZero() || t.Before(deadline) {
			deadline = t
		}
	}
	gap := func(h int64) error {
		return &cfe.Error{Code: cfe.EUNAVAILABLE, Op: "store.Commit", Err: cfe.ErrNumberGap,
			Message: fmt.Sprintf("no se guardó el comprobante: el número %d de la serie %s quedó sin usar; reintente", h, s.res.Serie)}
	}
	for m, o := range q.slots {
		if m >= n || o.state != slotReserved {
			continue
		}
		if expiry := o.since.Add(db.opts.ReservationTimeout); now.Before(expiry) {
			earliest(expiry)
			continue
		}
		q.remove(m, now) // its late Commit will find the reservation gone
	}
	for h, since := range q.holes {
		if h >= n {
			continue
		}
		expiry := since.Add(db.opts.ReclaimTimeout)
		if !now.Before(expiry) {
			return time.Time{}, gap(h)
		}
		earliest(expiry)
	}
	return deadline, nil
}
