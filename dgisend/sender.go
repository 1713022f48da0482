// Package dgisend sends the agent's signed CFEs to DGI itself, in direct
// mode (the profile's dgi.modo: directo; the company is its own electronic
// issuer). It is the direct-mode counterpart of hosted's deliverer: a use
// case between the store (its Store port, implemented by *store.DB) and
// DGI's web services (its DGI port, implemented by *dgi.Client).
//
// One pass (Pass) does, in this order:
//
//  1. Resolves the envelopes whose outcome is not known: an envelope
//     recorded and never sent is sent; one sent without a trustworthy
//     answer (a timeout, a dropped connection, a crash while sending) is
//     asked about first (EFACCONSULTARENVIOSSOBRE by its Idemisor): found
//     received, its IDReceptor, Token and Fechahora are kept; not found, it
//     is sent again with the same Idemisor, so that DGI answers S08 should
//     it hold it after all. No CFE ever goes in a second envelope while DGI
//     may hold its first one.
//  2. Asks for the verdicts (EFACCONSULTARESTADOENVIO) of every received
//     envelope whose Fechahora has passed, and records each CFE's AE, BE
//     (the number annulled) or CE with DGI's codes; a CFE answered E02 (DGI
//     already had it, from another envelope) gets the verdict of its first
//     envelope (EFACCONSULTARESTADOCFE).
//  3. When nothing is unresolved, packs the next pending CFEs in commit
//     order (number order within each serie) into one envelope of at most
//     250 CFEs, 2 MB and one certificate, verifies every CFE's signature
//     (signer.PrepareEnvelope; a CFE that does not verify is never sent:
//     nothing is recorded and the error names it), records it durably with
//     its CFEs, and only then sends it (step 1's rules for its answer).
//     A CFE is verified once: the sender remembers the bytes that verified,
//     and while it waits (step 1 unresolved, a retry, the pace) it verifies
//     the next envelope's CFEs ahead.
//
// Envelopes go one at a time, at least Pace apart (the catch-up's pace
// after days without DGI). Run repeats passes, woken by the store's commit
// notification (Wake) like hosted's deliverer, by Kick, and by a poll.
//
// Reporter (report.go) sends the daily report (Reporte) of every day and
// follows its states at DGI.
//
// It imports cfe, dgi (its client's types) and signer (the envelope's
// checks), never the store or the local module.
package dgisend

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/dgi"
	"github.com/cfe-agent/cfe-agent/signer"
)

// Store is the durable DGI state (store/dgi.go); *store.DB implements it.
type Store interface {
	DGIBegin(ctx context.Context) (uint64, error)
	DGIPending(ctx context.Context, limit int) ([]cfe.DGIItem, error)
	DGIItems(ctx context.Context, seqs []uint64) ([]cfe.DGIItem, error)
	DGIOpenEnvelope(ctx context.Context, items []cfe.DGIItem, fecha time.Time) (*cfe.DGIEnvelope, error)
	DGIOpenEnvelopes(ctx context.Context) ([]*cfe.DGIEnvelope, error)
	DGIEnvelopeSending(ctx context.Context, id int64, at time.Time) (*cfe.DGIEnvelope, error)
	DGIEnvelopeFailed(ctx context.Context, id int64, reason string) (*cfe.DGIEnvelope, error)
	DGIEnvelopeUnknown(ctx context.Context, id int64, reason string) (*cfe.DGIEnvelope, error)
	DGIEnvelopeReceived(ctx context.Context, id, idReceptor int64, token string, fechahora time.Time) (*cfe.DGIEnvelope, error)
	DGIEnvelopeRefused(ctx context.Context, id int64, reasons []cfe.DGIReason) (*cfe.DGIEnvelope, error)
	DGIRecordVerdicts(ctx context.Context, id int64, verdicts []cfe.DGIVerdict) (*cfe.DGIEnvelope, error)
	DGICFEs(ctx context.Context, seqs []uint64) ([]cfe.DGICFE, error)
	DGIIDBase(ctx context.Context) (int64, error)
	DGIEnvelopeMismatch(ctx context.Context, id int64, reason string) (*cfe.DGIEnvelope, error)
}

// DGI is DGI's web services; *dgi.Client implements it.
type DGI interface {
	SendEnvelope(ctx context.Context, envelope []byte) (*dgi.ACKSobre, error)
	EnvelopeStatus(ctx context.Context, idReceptor int64, token string) (*dgi.ACKCFE, error)
	CFEState(ctx context.Context, q dgi.CFEQuery) (*dgi.CFEState, error)
	Envelopes(ctx context.Context, q dgi.EnvelopeQuery) ([]dgi.EnvelopeInfo, error)
}

// Defaults of Config.
const (
	DefaultPoll  = 5 * time.Second
	DefaultRetry = 30 * time.Second
	// DefaultRefusedWait is how long after DGI refused a whole envelope the
	// next one waits (a refused certificate or RUC is not fixed by sending
	// again at once).
	DefaultRefusedWait = 5 * time.Minute
	// envelopeOverhead bounds what an envelope adds to its CFEs (the
	// Caratula with the certificate), for the 2 MB limit.
	envelopeOverhead = 16 << 10
)

// Config configures a Sender. Store and DGI are required.
type Config struct {
	Store Store
	DGI   DGI
	// IDBase is added to the store's envelope number to make the
	// Caratula's Idemisor, which DGI keys its S08 on per RUC: tills of one
	// company that send directly need distinct bases. 0 means the store's
	// (Store.DGIIDBase: random, chosen once).
	IDBase int64
	// MaxCFEs bounds the CFEs of one envelope (cfe.MaxEnvelopeCFEs when 0
	// or more).
	MaxCFEs int
	// Pace is the least time between two envelopes (0: none).
	Pace time.Duration
	// Poll is the wait between passes when nothing wakes the sender
	// (DefaultPoll); Retry the wait after a failure (DefaultRetry);
	// RefusedWait the wait after a refused envelope (DefaultRefusedWait).
	Poll        time.Duration
	Retry       time.Duration
	RefusedWait time.Duration
	// Wake wakes an idle sender: the store's commit notification.
	Wake <-chan struct{}
	// Now is the clock (time.Now when nil).
	Now    func() time.Time
	Logger *slog.Logger
}

// Status is what the sender knows beyond the store: the last failure and
// when it sends next.
type Status struct {
	LastError string    // Spanish; "" after a success
	LastSent  time.Time // the last envelope sent (or sent again)
	NextTry   time.Time // zero when it may send now
	// Verified counts the CFEs whose signature the sender verified and
	// remembers (they go in an envelope without being verified again).
	Verified int
}

// Sender sends pending CFEs to DGI; see the package comment. Pass and Run
// must not run at the same time.
type Sender struct {
	cfg  Config
	log  *slog.Logger
	kick chan struct{}
	// verified remembers the CFEs whose signature verified, by their bytes'
	// SHA-256: a CFE is verified before the first envelope it goes in, and
	// not again when it goes in another (a smaller one, one sent again, a
	// refused envelope's CFEs in a new one).
	verified *signer.VerifiedCFEs

	mu     sync.Mutex
	status Status
	// next holds, per envelope, when it may be asked about again.
	next map[int64]time.Time
}

// New returns a Sender for cfg.
func New(cfg Config) *Sender {
	if cfg.MaxCFEs <= 0 || cfg.MaxCFEs > cfe.MaxEnvelopeCFEs {
		cfg.MaxCFEs = cfe.MaxEnvelopeCFEs
	}
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultPoll
	}
	if cfg.Retry <= 0 {
		cfg.Retry = DefaultRetry
	}
	if cfg.RefusedWait <= 0 {
		cfg.RefusedWait = DefaultRefusedWait
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Sender{cfg: cfg, log: log, kick: make(chan struct{}, 1), next: map[int64]time.Time{},
		verified: signer.NewVerifiedCFEs(4 * cfe.MaxEnvelopeCFEs)}
}

// Status returns the sender's status.
func (s *Sender) Status() Status {
	s.mu.Lock()
	st := s.status
	s.mu.Unlock()
	st.Verified = s.verified.Len()
	return st
}

// Kick wakes the sender for a pass now.
func (s *Sender) Kick() {
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

func (s *Sender) fail(msg string) {
	s.mu.Lock()
	s.status.LastError = msg
	s.status.NextTry = s.cfg.Now().Add(s.cfg.Retry)
	s.mu.Unlock()
}

func (s *Sender) wait(d time.Duration, msg string) {
	s.mu.Lock()
	s.status.LastError = msg
	s.status.NextTry = s.cfg.Now().Add(d)
	s.mu.Unlock()
}

func (s *Sender) ok() {
	s.mu.Lock()
	s.status.LastError, s.status.NextTry = "", time.Time{}
	s.mu.Unlock()
}

func (s *Sender) mayTry(now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !now.Before(s.status.NextTry)
}

// Run begins direct sending (Store.DGIBegin) and runs passes until ctx is
// done.
func (s *Sender) Run(ctx context.Context) {
	if _, err := s.cfg.Store.DGIBegin(ctx); err != nil {
		s.log.Error("dgi: cannot begin direct sending", "err", err)
		s.fail(cfe.ErrorMessage(err))
	}
	RunPasses(ctx, s.cfg.Poll, s.kick, s.cfg.Wake, s.Pass, func(err error) { s.log.Warn("dgi: pass failed", "err", err) })
}

// Pass does one round of the package comment's steps and reports whether
// it changed anything (another pass may do more).
func (s *Sender) Pass(ctx context.Context) (bool, error) {
	now := s.cfg.Now()
	if s.cfg.IDBase == 0 {
		base, err := s.cfg.Store.DGIIDBase(ctx)
		if err != nil {
			return false, err
		}
		s.cfg.IDBase = base
	}
	open, err := s.cfg.Store.DGIOpenEnvelopes(ctx)
	if err != nil {
		return false, err
	}
	progress, unresolved := false, false
	for _, e := range open {
		switch e.State {
		case cfe.EnvelopePrepared, cfe.EnvelopeUnknown:
			unresolved = true
			if !s.due(e.ID, now) || !s.mayTry(now) {
				continue
			}
			p, err := s.resolve(ctx, e, now)
			progress = progress || p
			if err != nil {
				return progress, err
			}
		case cfe.EnvelopeReceived:
			if now.Before(e.Fechahora) || !s.due(e.ID, now) {
				continue
			}
			p, err := s.verdicts(ctx, e, now)
			progress = progress || p
			if err != nil {
				return progress, err
			}
		}
	}
	if unresolved || !s.mayTry(now) {
		s.verifyAhead(ctx)
		return progress, nil
	}
	if st := s.Status(); s.cfg.Pace > 0 && !st.LastSent.IsZero() && now.Before(st.LastSent.Add(s.cfg.Pace)) {
		s.verifyAhead(ctx)
		return progress, nil
	}
	sent, err := s.sendNext(ctx, now)
	return progress || sent, err
}

func (s *Sender) due(id int64, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !now.Before(s.next[id])
}

func (s *Sender) later(id int64, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next[id] = at
}

// resolve sends an envelope never sent, and asks DGI about one that may
// have left.
func (s *Sender) resolve(ctx context.Context, e *cfe.DGIEnvelope, now time.Time) (bool, error) {
	if e.State == cfe.EnvelopePrepared && e.Attempts == 0 {
		return s.send(ctx, e, now, nil)
	}
	list, err := s.cfg.DGI.Envelopes(ctx, s.query(e, now))
	if err != nil {
		msg := "no se pudo preguntar a DGI por el sobre " + s.name(e) + ": " + cfe.ErrorMessage(err)
		s.fail(msg)
		s.later(e.ID, now.Add(s.cfg.Retry))
		_, serr := s.cfg.Store.DGIEnvelopeFailed(ctx, e.ID, msg)
		return false, serr
	}
	for _, info := range list {
		if info.IdEmisor == s.cfg.IDBase+e.ID && info.Estado == dgi.EnvelopeReceived && info.Token != "" {
			s.log.Info("dgi: envelope found at DGI after an unknown outcome", "envelope", e.ID, "idReceptor", info.IdReceptor)
			if _, err := s.cfg.Store.DGIEnvelopeReceived(ctx, e.ID, info.IdReceptor, info.Token, info.Fechahora); err != nil {
				return false, err
			}
			s.ok()
			return true, nil
		}
	}
	// DGI does not hold it: send it again, with the same Idemisor (S08
	// should it arrive after all).
	return s.send(ctx, e, now, nil)
}

// query asks for envelope e's Idemisor, received from a little before it
// was made until now (within DGI's 31 days).
func (s *Sender) query(e *cfe.DGIEnvelope, now time.Time) dgi.EnvelopeQuery {
	from := e.Fecha.Add(-time.Hour)
	to := now.Add(time.Hour)
	if limit := from.AddDate(0, 0, dgi.MaxQueryDays); to.After(limit) {
		from = to.AddDate(0, 0, -dgi.MaxQueryDays)
	}
	return dgi.EnvelopeQuery{IdEmisor: s.cfg.IDBase + e.ID, Desde: from.In(cfe.Montevideo), Hasta: to.In(cfe.Montevideo)}
}

func (s *Sender) name(e *cfe.DGIEnvelope) string { return fmt.Sprintf("%d", s.cfg.IDBase+e.ID) }

// build makes the envelope's document from its stored CFEs.
func (s *Sender) build(ctx context.Context, e *cfe.DGIEnvelope) ([]byte, error) {
	items, err := s.cfg.Store.DGIItems(ctx, e.Seqs)
	if err != nil {
		return nil, err
	}
	req := signer.EnvelopeRequest{Kind: cfe.EnvelopeDGI, RutReceptor: cfe.RUCDGI, IdEmisor: s.cfg.IDBase + e.ID, Fecha: e.Fecha,
		CFEs: make([]cfe.EnvelopeCFE, 0, len(items)), Verified: s.verified}
	for _, it := range items {
		req.CFEs = append(req.CFEs, cfe.EnvelopeCFE{XML: it.XML})
	}
	return signer.MakeEnvelope(req)
}

// send sends envelope e (its document doc, built from the store when nil)
// and records DGI's answer.
func (s *Sender) send(ctx context.Context, e *cfe.DGIEnvelope, now time.Time, doc []byte) (bool, error) {
	var err error
	if doc == nil {
		doc, err = s.build(ctx, e)
	}
	if err != nil {
		msg := "no se puede armar el sobre " + s.name(e) + ": " + cfe.ErrorMessage(err)
		s.fail(msg)
		_, serr := s.cfg.Store.DGIEnvelopeFailed(ctx, e.ID, msg)
		return false, errors.Join(err, serr)
	}
	if _, err := s.cfg.Store.DGIEnvelopeSending(ctx, e.ID, now); err != nil {
		return false, err
	}
	s.mu.Lock()
	s.status.LastSent = now
	s.mu.Unlock()
	ack, err := s.cfg.DGI.SendEnvelope(ctx, doc)
	switch {
	case err != nil && dgi.OutcomeUnknown(err):
		msg := "no se sabe si DGI recibió el sobre " + s.name(e) + " (" + cfe.ErrorMessage(err) + "): se le preguntará antes de enviarlo de nuevo"
		s.log.Warn("dgi: envelope outcome unknown", "envelope", e.ID, "err", err)
		s.fail(msg)
		s.later(e.ID, now.Add(s.cfg.Retry))
		_, serr := s.cfg.Store.DGIEnvelopeUnknown(ctx, e.ID, msg)
		return true, serr
	case err != nil:
		msg := "no se pudo enviar el sobre " + s.name(e) + " a DGI: " + cfe.ErrorMessage(err)
		s.log.Warn("dgi: envelope not sent", "envelope", e.ID, "err", err)
		s.fail(msg)
		s.later(e.ID, now.Add(s.cfg.Retry))
		_, serr := s.cfg.Store.DGIEnvelopeFailed(ctx, e.ID, msg)
		return false, serr
	case ack.Received():
		s.log.Info("dgi: envelope received", "envelope", e.ID, "idReceptor", ack.IDReceptor, "cfes", len(e.Seqs))
		if _, err := s.cfg.Store.DGIEnvelopeReceived(ctx, e.ID, ack.IDReceptor, ack.Token, ack.Fechahora); err != nil {
			return false, err
		}
		s.ok()
		return true, nil
	case ack.Duplicate():
		// DGI holds an envelope of this Idemisor: read its Token.
		s.log.Info("dgi: envelope already at DGI (S08)", "envelope", e.ID)
		if _, err := s.cfg.Store.DGIEnvelopeUnknown(ctx, e.ID, "DGI ya tenía el sobre "+s.name(e)+" (S08)"); err != nil {
			return false, err
		}
		return true, nil
	}
	reasons := reasonsOf(ack.Motivos)
	msg := "DGI rechazó el sobre " + s.name(e) + ": " + describe(reasons) + "; sus comprobantes se enviarán en otro sobre"
	s.log.Warn("dgi: envelope refused", "envelope", e.ID, "estado", ack.Estado, "motivos", describe(reasons))
	s.wait(s.cfg.RefusedWait, msg)
	_, err = s.cfg.Store.DGIEnvelopeRefused(ctx, e.ID, reasons)
	return true, err
}

// sendNext packs the next pending CFEs into an envelope, records it and
// sends it.
func (s *Sender) sendNext(ctx context.Context, now time.Time) (bool, error) {
	items, err := s.cfg.Store.DGIPending(ctx, s.cfg.MaxCFEs)
	if err != nil {
		s.fail("no se pueden leer los comprobantes a enviar a DGI: " + cfe.ErrorMessage(err))
		return false, err
	}
	if len(items) == 0 {
		return false, nil
	}
	items = pack(items, s.cfg.MaxCFEs)
	// Check the envelope before recording it: a CFE that cannot go in one
	// stops here, named, and nothing is recorded.
	req := signer.EnvelopeRequest{Kind: cfe.EnvelopeDGI, RutReceptor: cfe.RUCDGI, Fecha: now.Truncate(time.Second),
		CFEs: make([]cfe.EnvelopeCFE, 0, len(items)), Verified: s.verified}
	for _, it := range items {
		req.CFEs = append(req.CFEs, cfe.EnvelopeCFE{XML: it.XML})
	}
	// Its CFEs are read and checked once (cfe.CheckEnvelope), then it is
	// written before it is recorded (its size) and after (its number).
	var checked *cfe.CheckedEnvelope
	for {
		var env *cfe.Envelope
		if env, err = signer.PrepareEnvelope(req); err == nil {
			env.Caratula.IdEmisor = s.cfg.IDBase + 1
			if checked, err = cfe.CheckEnvelope(env); err == nil {
				var doc []byte
				if doc, err = checked.Build(env.Caratula.IdEmisor, env.Caratula.Fecha); err == nil && len(doc) > cfe.MaxEnvelopeBytes && len(items) > 1 {
					n := len(items) * 9 / 10
					items, req.CFEs = items[:n], req.CFEs[:n]
					continue
				}
			}
		}
		break
	}
	if err != nil {
		s.fail("no se puede armar el sobre para DGI: " + cfe.ErrorMessage(err))
		return false, err
	}
	e, err := s.cfg.Store.DGIOpenEnvelope(ctx, items, req.Fecha)
	if err != nil {
		return false, err
	}
	doc, err := checked.Build(s.cfg.IDBase+e.ID, e.Fecha)
	if err != nil {
		return false, err
	}
	s.log.Info("dgi: envelope recorded", "envelope", e.ID, "cfes", len(items))
	return s.send(ctx, e, now, doc)
}

// verifyAhead verifies, while the sender waits (an envelope unresolved, a
// retry or the pace), the CFEs of the next envelope, so that it is built
// without verifying them then: after days without DGI the backlog's next
// envelope is verified during the outage, and in the catch-up each next
// one during the pace. Nothing is recorded or refused here: what verifies
// is remembered (s.verified), and a CFE that does not is verified again
// by sendNext, which refuses the envelope naming it.
func (s *Sender) verifyAhead(ctx context.Context) {
	items, err := s.cfg.Store.DGIPending(ctx, s.cfg.MaxCFEs)
	if err != nil || len(items) == 0 {
		return
	}
	req := signer.EnvelopeRequest{Kind: cfe.EnvelopeDGI, RutReceptor: cfe.RUCDGI, CFEs: make([]cfe.EnvelopeCFE, 0, len(items)), Verified: s.verified}
	for _, it := range items {
		req.CFEs = append(req.CFEs, cfe.EnvelopeCFE{XML: it.XML})
	}
	_, _ = signer.PrepareEnvelope(req)
}

// pack takes the longest prefix of items that fits one envelope: at most
// max CFEs, signed with one certificate, within 2 MB.
func pack(items []cfe.DGIItem, max int) []cfe.DGIItem {
	if len(items) > max {
		items = items[:max]
	}
	first := certOf(items[0].XML)
	size := envelopeOverhead
	for i, it := range items {
		size += len(it.XML)
		if i > 0 && (size > cfe.MaxEnvelopeBytes || !bytes.Equal(certOf(it.XML), first)) {
			return items[:i]
		}
	}
	return items
}

// certOf returns the certificate text of a signed CFE's KeyInfo (nil when
// none is found: PrepareEnvelope then names the CFE).
func certOf(xml []byte) []byte {
	i := bytes.Index(xml, []byte("X509Certificate>"))
	if i < 0 {
		return nil
	}
	rest := xml[i+len("X509Certificate>"):]
	j := bytes.IndexByte(rest, '<')
	if j < 0 {
		return nil
	}
	return rest[:j]
}

// verdicts asks DGI for the verdicts of received envelope e and records
// them.
func (s *Sender) verdicts(ctx context.Context, e *cfe.DGIEnvelope, now time.Time) (bool, error) {
	ack, err := s.cfg.DGI.EnvelopeStatus(ctx, e.IDReceptor, e.Token)
	if err != nil {
		if !errors.Is(err, dgi.ErrNotProcessed) {
			s.log.Warn("dgi: verdicts not read", "envelope", e.ID, "err", err)
			s.mu.Lock()
			s.status.LastError = "no se pudo leer la respuesta de DGI al sobre " + s.name(e) + ": " + cfe.ErrorMessage(err)
			s.mu.Unlock()
		}
		s.later(e.ID, now.Add(s.cfg.Retry))
		return false, nil
	}
	cfes, err := s.cfg.Store.DGICFEs(ctx, e.Seqs)
	if err != nil {
		return false, err
	}
	type key struct {
		t     cfe.Type
		serie string
		nro   int64
	}
	bySeq := map[key]cfe.DGICFE{}
	for _, c := range cfes {
		if c.Envelope == e.ID {
			bySeq[key{c.Type, c.Serie, c.Nro}] = c
		}
	}
	var out []cfe.DGIVerdict
	matched := 0
	for _, v := range ack.CFEs {
		c, ok := bySeq[key{v.TipoCFE, v.Serie, v.Nro}]
		if !ok {
			s.log.Warn("dgi: verdict on a CFE not in the envelope", "envelope", e.ID, "tipo", v.TipoCFE, "serie", v.Serie, "nro", v.Nro)
			continue
		}
		matched++
		estado, reasons := v.Estado, reasonsOf(v.Motivos)
		if v.Original != nil || hasCode(reasons, "E02") {
			// DGI already had it from another envelope: its verdict is
			// that envelope's.
			st, err := s.cfg.DGI.CFEState(ctx, dgi.CFEQuery{Tipo: v.TipoCFE, Serie: v.Serie, Nro: v.Nro})
			if err != nil {
				s.log.Warn("dgi: state of a CFE DGI already had not read", "tipo", v.TipoCFE, "serie", v.Serie, "nro", v.Nro, "err", err)
				continue
			}
			estado, reasons = st.Estado, nil
		}
		state := verdictState(estado)
		if state == "" {
			continue
		}
		out = append(out, cfe.DGIVerdict{Seq: c.Seq, State: state, Reasons: reasons})
	}
	if matched == 0 && len(ack.CFEs) > 0 {
		// DGI answers for an envelope of this Idemisor with none of its
		// CFEs: another till numbered one alike. DGI holds none of these:
		// they go back to pending, in a new envelope.
		msg := fmt.Sprintf("DGI tiene otro sobre con el número %s (de otra caja de la empresa): sus comprobantes se envían en un sobre nuevo", s.name(e))
		s.log.Error("dgi: the envelope DGI holds under this Idemisor carries none of ours", "envelope", e.ID, "idReceptor", e.IDReceptor)
		_, err := s.cfg.Store.DGIEnvelopeMismatch(ctx, e.ID, msg)
		return err == nil, err
	}
	if len(out) == 0 {
		s.later(e.ID, now.Add(s.cfg.Retry))
		return false, nil
	}
	done, err := s.cfg.Store.DGIRecordVerdicts(ctx, e.ID, out)
	if err != nil {
		return false, err
	}
	if done.State != cfe.EnvelopeDone {
		s.later(e.ID, now.Add(s.cfg.Retry))
	}
	return true, nil
}

func verdictState(estado string) string {
	switch estado {
	case dgi.CFEReceived, dgi.CFERequoted:
		return cfe.DGIAccepted
	case dgi.CFERejected:
		return cfe.DGIRejected
	case dgi.CFCObserved:
		return cfe.DGIObserved
	}
	return ""
}

func reasonsOf(ms []dgi.Motivo) []cfe.DGIReason {
	out := make([]cfe.DGIReason, 0, len(ms))
	for _, m := range ms {
		out = append(out, cfe.DGIReason{Codigo: m.Codigo, Glosa: m.Glosa, Detalle: m.Detalle})
	}
	return out
}

func hasCode(rs []cfe.DGIReason, code string) bool {
	for _, r := range rs {
		if r.Codigo == code {
			return true
		}
	}
	return false
}

// describe writes DGI's reasons for a person: "E05 Formato (falta el RUC)".
func describe(rs []cfe.DGIReason) string {
	var b bytes.Buffer
	for i, r := range rs {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(r.Codigo)
		if r.Glosa != "" {
			b.WriteString(" " + r.Glosa)
		}
		if r.Detalle != "" {
			b.WriteString(" (" + r.Detalle + ")")
		}
	}
	if b.Len() == 0 {
		return "sin motivo informado"
	}
	return b.String()
}

// Describe writes DGI's reasons for a person (the tray, the status page,
// doctor): "E05 Formato (falta el RUC)".
func Describe(rs []cfe.DGIReason) string { return describe(rs) }

// RunPasses is the loop of the sender and the reporter, and of the
// sandbox's provider rooms that drive them: a pass at once, then one at
// every poll, kick or wake (a nil channel never wakes); each pass is
// repeated while it makes progress, until ctx ends. failed hears a pass's
// error.
func RunPasses(ctx context.Context, poll time.Duration, kick, wake <-chan struct{}, pass func(context.Context) (bool, error), failed func(error)) {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-kick:
		case <-wake:
		}
		for ctx.Err() == nil {
			progress, err := pass(ctx)
			if err != nil {
				failed(err)
			}
			if !progress {
				break
			}
		}
		if !t.Stop() {
			select {
			case <-t.C:
			default:
			}
		}
		t.Reset(poll)
	}
}
