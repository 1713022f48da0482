package dgi

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/dgisend"
	"github.com/cfe-agent/cfe-agent/sandbox/data"
	"github.com/cfe-agent/cfe-agent/signer"
)

// The provider's sending: the sandbox, as the provider, sends every CFE it
// holds (agents' deliveries, its own emitir and anular) to DGI, and keeps
// each CFE's DGI state (sandbox/data/dgi.go), which cfeemitido/{id} and
// buscar show.
//
// It is the agent's direct-mode sender (package dgisend) over the
// sandbox's records: dgisend.Sender is a use case between a Store port and
// a DGI port, so the provider implements the Store port once per company
// (companyStore: envelopes carry one company's CFEs, signed with one
// certificate) and gives each company a Sender with its own DGI client
// (the messages are signed with the company's certificate, as DGI checks
// the signer's RUC against the envelope's). Everything dgisend guarantees
// holds here too: the envelope recorded before it is sent, an unknown
// outcome asked about before anything is sent again, verdicts after
// Fechahora, E02 resolved by asking for the CFE's state.
//
// The envelopes are numbered by the company's counter of the generated
// envelopes (generarSobreAutoridad), so that no two envelopes of a company
// share an Idemisor at DGI.

// ProviderConfig configures a Provider. DB, Credentials and NewDGI are
// required.
type ProviderConfig struct {
	DB *data.DB
	// Credentials returns the certificate and key a company's messages to
	// DGI are signed with (the issuing room's).
	Credentials func(ctx context.Context, company int64) (*signer.Credentials, error)
	// NewDGI returns the DGI client that signs with creds.
	NewDGI func(creds *signer.Credentials) (dgisend.DGI, error)
	// Poll is the wait between rounds (DefaultProviderPoll); Kick cuts it
	// short.
	Poll time.Duration
	// Retry is the senders' wait after a failure (dgisend's default when 0).
	Retry time.Duration
	Now   func() time.Time
	Log   *slog.Logger
}

// DefaultProviderPoll is the provider's wait between rounds.
const DefaultProviderPoll = 2 * time.Second

// Provider sends what the sandbox holds to DGI; see above.
type Provider struct {
	cfg  ProviderConfig
	log  *slog.Logger
	kick chan struct{}

	mu      sync.Mutex
	senders map[int64]*dgisend.Sender
	// seen is, per company, the highest CFE id a round looked at without
	// finding one of the company's beyond its cursor: the next round
	// starts there, so that an idle company costs no scan of the others'.
	seen map[int64]int64
}

// NewProvider returns a Provider for cfg.
func NewProvider(cfg ProviderConfig) *Provider {
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultProviderPoll
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Provider{cfg: cfg, log: cfg.Log, kick: make(chan struct{}, 1), senders: map[int64]*dgisend.Sender{}, seen: map[int64]int64{}}
}

// Kick wakes the provider for a round now.
func (p *Provider) Kick() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// Run does rounds until ctx is done.
func (p *Provider) Run(ctx context.Context) {
	dgisend.RunPasses(ctx, p.cfg.Poll, p.kick, nil, roundPass(p.Round), roundFailed(ctx, p.log, "dgi provider: round failed"))
}

// Round runs, for every company with something to send or to ask DGI
// about, its sender's passes while they make progress.
func (p *Provider) Round(ctx context.Context) error {
	var companies []int64
	if err := p.cfg.DB.View(func(tx *bolt.Tx) error {
		for _, c := range data.Companies(tx) {
			if busy, err := p.companyBusy(tx, c); err != nil {
				return err
			} else if busy {
				companies = append(companies, c)
			}
		}
		return nil
	}); err != nil {
		return err
	}
	var first error
	for _, c := range companies {
		s, err := p.sender(ctx, c)
		if err != nil {
			p.log.Warn("dgi provider: no sender for the company", "company", c, "err", err)
			first = cmpErr(first, err)
			continue
		}
		for ctx.Err() == nil {
			progress, err := s.Pass(ctx)
			if err != nil {
				p.log.Warn("dgi provider: pass failed", "company", c, "err", err)
				first = cmpErr(first, err)
			}
			if !progress || err != nil {
				break
			}
		}
	}
	return first
}

func cmpErr(first, err error) error {
	if first != nil {
		return first
	}
	return err
}

// companyBusy reports whether company has CFEs not yet in an envelope, put
// back, or open envelopes.
func (p *Provider) companyBusy(tx *bolt.Tx, company int64) (bool, error) {
	if len(data.OpenDGIEnvelopes(tx, company)) > 0 {
		return true, nil
	}
	back, err := data.DGIPutBack(tx, company)
	if err != nil || len(back) > 0 {
		return len(back) > 0, err
	}
	found := false
	from := max(data.DGICursor(tx, company), p.seen[company])
	last := from
	err = data.CFEsAfter(tx, from, func(c *data.CFERecord) (bool, error) {
		found = c.Company == company
		if !found {
			last = c.ID
		}
		return !found, nil
	})
	p.seen[company] = last
	return found, err
}

func (p *Provider) sender(ctx context.Context, company int64) (*dgisend.Sender, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if s := p.senders[company]; s != nil {
		return s, nil
	}
	creds, err := p.cfg.Credentials(ctx, company)
	if err != nil {
		return nil, err
	}
	client, err := p.cfg.NewDGI(creds)
	if err != nil {
		return nil, err
	}
	s := dgisend.New(dgisend.Config{Store: &companyStore{db: p.cfg.DB, company: company, now: p.cfg.Now}, DGI: client,
		Retry: p.cfg.Retry, RefusedWait: p.cfg.Retry, Now: p.cfg.Now,
		Logger: p.log.With("company", company)})
	p.senders[company] = s
	return s, nil
}

// LastError returns the last failure of company's sender (Spanish), "" when
// none.
func (p *Provider) LastError(company int64) string {
	p.mu.Lock()
	s := p.senders[company]
	p.mu.Unlock()
	if s == nil {
		return ""
	}
	return s.Status().LastError
}

// companyStore is dgisend's Store port over one company's records: a CFE's
// commit sequence is its id (ids grow in the order CFEs are recorded).
type companyStore struct {
	db      *data.DB
	company int64
	now     func() time.Time
}

var _ dgisend.Store = (*companyStore)(nil)

func (s *companyStore) view(ctx context.Context, fn func(*bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return cfe.Errorf(cfe.EUNAVAILABLE, "%v", err)
	}
	return s.db.View(fn)
}

func (s *companyStore) update(ctx context.Context, fn func(*bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return cfe.Errorf(cfe.EUNAVAILABLE, "%v", err)
	}
	return s.db.Update(fn)
}

// DGIBegin: the provider sends every CFE it holds, from the first.
func (s *companyStore) DGIBegin(context.Context) (uint64, error) { return 0, nil }

// DGIIDBase: the envelopes' Idemisor is their number (the company's
// counter, shared with the generated envelopes).
func (s *companyStore) DGIIDBase(context.Context) (int64, error) { return 0, nil }

func item(c *data.CFERecord) cfe.DGIItem {
	return cfe.DGIItem{Seq: uint64(c.ID), UUID: c.UUID, Type: c.Type, Serie: c.Serie, Nro: c.Nro,
		TmstFirma: c.TmstFirma.In(cfe.Montevideo), CommittedAt: c.TmstFirma, Total: c.Total, XML: c.XML}
}

func (s *companyStore) cfe(tx *bolt.Tx, id int64) (*data.CFERecord, error) {
	c, err := data.GetCFE(tx, id)
	if err != nil {
		return nil, err
	}
	if c.Company != s.company {
		return nil, cfe.Errorf(cfe.EINVALID, "el CFE %d es de otra empresa", id)
	}
	return c, nil
}

func (s *companyStore) DGIPending(ctx context.Context, limit int) ([]cfe.DGIItem, error) {
	var out []cfe.DGIItem
	err := s.view(ctx, func(tx *bolt.Tx) error {
		back, err := data.DGIPutBack(tx, s.company)
		if err != nil {
			return err
		}
		for _, id := range back {
			if len(out) >= limit {
				return nil
			}
			c, err := s.cfe(tx, id)
			if err != nil {
				return err
			}
			out = append(out, item(c))
		}
		return data.CFEsAfter(tx, data.DGICursor(tx, s.company), func(c *data.CFERecord) (bool, error) {
			if c.Company == s.company {
				out = append(out, item(c))
			}
			return len(out) < limit, nil
		})
	})
	return out, err
}

func (s *companyStore) DGIItems(ctx context.Context, seqs []uint64) ([]cfe.DGIItem, error) {
	out := make([]cfe.DGIItem, 0, len(seqs))
	err := s.view(ctx, func(tx *bolt.Tx) error {
		for _, seq := range seqs {
			c, err := s.cfe(tx, int64(seq))
			if err != nil {
				return err
			}
			out = append(out, item(c))
		}
		return nil
	})
	return out, err
}

// nextEnvelopeID takes the company's next envelope number (Idemisor) from
// the counter of the generated envelopes.
func nextEnvelopeID(tx *bolt.Tx, company int64) (int64, error) {
	b, err := tx.CreateBucketIfNotExists(bucketEnvelopeIDs)
	if err != nil {
		return 0, err
	}
	key := data.IDKey(company)
	last, _ := strconv.ParseInt(string(b.Get(key)), 10, 64)
	next := last + 1
	if next > cfe.MaxEnvelopeID {
		next = 1
	}
	return next, b.Put(key, []byte(strconv.FormatInt(next, 10)))
}

func (s *companyStore) DGIOpenEnvelope(ctx context.Context, items []cfe.DGIItem, fecha time.Time) (*cfe.DGIEnvelope, error) {
	if len(items) == 0 || len(items) > cfe.MaxEnvelopeCFEs {
		return nil, cfe.Errorf(cfe.EINVALID, "un sobre lleva de 1 a %d CFE", cfe.MaxEnvelopeCFEs)
	}
	var id int64
	var env *data.DGIEnvelopeRecord
	err := s.update(ctx, func(tx *bolt.Tx) error {
		now := s.now()
		back, err := data.DGIPutBack(tx, s.company)
		if err != nil {
			return err
		}
		cursor := data.DGICursor(tx, s.company)
		env = &data.DGIEnvelopeRecord{Fecha: fecha, State: cfe.EnvelopePrepared, UpdatedAt: now}
		if id, err = nextEnvelopeID(tx, s.company); err != nil {
			return err
		}
		for _, it := range items {
			cid := int64(it.Seq)
			if _, err := s.cfe(tx, cid); err != nil {
				return err
			}
			r, err := data.GetDGI(tx, cid)
			if err != nil {
				return err
			}
			if r != nil && r.State != cfe.DGIPending {
				return cfe.Errorf(cfe.EINVALID, "el CFE %d ya está en el sobre %d (%s)", cid, r.Envelope, r.State)
			}
			back = slices.DeleteFunc(back, func(b int64) bool { return b == cid })
			cursor = max(cursor, cid)
			if err := data.PutDGI(tx, cid, &data.DGIRecord{State: cfe.DGIInEnvelope, Envelope: id, UpdatedAt: now}); err != nil {
				return err
			}
			env.CFEs = append(env.CFEs, cid)
		}
		if err := data.SetDGIPutBack(tx, s.company, back); err != nil {
			return err
		}
		if err := data.SetDGICursor(tx, s.company, cursor); err != nil {
			return err
		}
		return data.PutDGIEnvelope(tx, s.company, id, env)
	})
	if err != nil {
		return nil, err
	}
	return envelopeDomain(id, env), nil
}

func envelopeDomain(id int64, r *data.DGIEnvelopeRecord) *cfe.DGIEnvelope {
	e := &cfe.DGIEnvelope{ID: id, Fecha: r.Fecha, State: r.State, IDReceptor: r.IDReceptor, Token: r.Token,
		Fechahora: r.Fechahora, Reasons: reasonsDomain(r.Reasons), Attempts: r.Attempts, LastError: r.LastError,
		SentAt: r.SentAt, UpdatedAt: r.UpdatedAt}
	for _, c := range r.CFEs {
		e.Seqs = append(e.Seqs, uint64(c))
	}
	return e
}

func reasonsDomain(rs []data.DGIReason) []cfe.DGIReason {
	var out []cfe.DGIReason
	for _, r := range rs {
		out = append(out, cfe.DGIReason{Codigo: r.Codigo, Glosa: r.Glosa, Detalle: r.Detalle})
	}
	return out
}

func reasonsData(rs []cfe.DGIReason) []data.DGIReason {
	var out []data.DGIReason
	for _, r := range rs {
		out = append(out, data.DGIReason{Codigo: r.Codigo, Glosa: r.Glosa, Detalle: r.Detalle})
	}
	return out
}

func (s *companyStore) DGIOpenEnvelopes(ctx context.Context) ([]*cfe.DGIEnvelope, error) {
	var out []*cfe.DGIEnvelope
	err := s.view(ctx, func(tx *bolt.Tx) error {
		for _, id := range data.OpenDGIEnvelopes(tx, s.company) {
			r, err := data.GetDGIEnvelope(tx, s.company, id)
			if err != nil {
				return err
			}
			out = append(out, envelopeDomain(id, r))
		}
		return nil
	})
	return out, err
}

// updateEnvelope applies fn to envelope id in one transaction; each
// calls fn2 for every CFE the envelope still carries.
func (s *companyStore) updateEnvelope(ctx context.Context, id int64, fn func(tx *bolt.Tx, e *data.DGIEnvelopeRecord, now time.Time) error) (*cfe.DGIEnvelope, error) {
	var e *data.DGIEnvelopeRecord
	err := s.update(ctx, func(tx *bolt.Tx) error {
		var err error
		if e, err = data.GetDGIEnvelope(tx, s.company, id); err != nil {
			return err
		}
		now := s.now()
		if err := fn(tx, e, now); err != nil {
			return err
		}
		e.UpdatedAt = now
		return data.PutDGIEnvelope(tx, s.company, id, e)
	})
	if err != nil {
		return nil, err
	}
	return envelopeDomain(id, e), nil
}

// carried calls fn for each CFE of envelope id that it still carries (a
// CFE put back and sent again belongs to its later envelope).
func carried(tx *bolt.Tx, id int64, e *data.DGIEnvelopeRecord, fn func(cid int64, r *data.DGIRecord) error) error {
	for _, cid := range e.CFEs {
		r, err := data.GetDGI(tx, cid)
		if err != nil {
			return err
		}
		if r == nil || r.Envelope != id {
			continue
		}
		if err := fn(cid, r); err != nil {
			return err
		}
	}
	return nil
}

// moveAll moves every CFE envelope id carries to state.
func moveAll(tx *bolt.Tx, id int64, e *data.DGIEnvelopeRecord, state string, now time.Time, when func(*data.DGIRecord) bool) error {
	return carried(tx, id, e, func(cid int64, r *data.DGIRecord) error {
		if when != nil && !when(r) {
			return nil
		}
		r.State, r.UpdatedAt = state, now
		return data.PutDGI(tx, cid, r)
	})
}

func (s *companyStore) DGIEnvelopeSending(ctx context.Context, id int64, at time.Time) (*cfe.DGIEnvelope, error) {
	return s.updateEnvelope(ctx, id, func(_ *bolt.Tx, e *data.DGIEnvelopeRecord, _ time.Time) error {
		e.Attempts++
		e.SentAt = at
		return nil
	})
}

func (s *companyStore) DGIEnvelopeFailed(ctx context.Context, id int64, reason string) (*cfe.DGIEnvelope, error) {
	return s.updateEnvelope(ctx, id, func(_ *bolt.Tx, e *data.DGIEnvelopeRecord, _ time.Time) error {
		e.LastError = reason
		return nil
	})
}

func (s *companyStore) DGIEnvelopeUnknown(ctx context.Context, id int64, reason string) (*cfe.DGIEnvelope, error) {
	return s.updateEnvelope(ctx, id, func(tx *bolt.Tx, e *data.DGIEnvelopeRecord, now time.Time) error {
		e.State, e.LastError = cfe.EnvelopeUnknown, reason
		return moveAll(tx, id, e, cfe.DGIUnknown, now, nil)
	})
}

func (s *companyStore) DGIEnvelopeReceived(ctx context.Context, id, idReceptor int64, token string, fechahora time.Time) (*cfe.DGIEnvelope, error) {
	return s.updateEnvelope(ctx, id, func(tx *bolt.Tx, e *data.DGIEnvelopeRecord, now time.Time) error {
		if e.IDReceptor != 0 && e.IDReceptor != idReceptor {
			return cfe.Errorf(cfe.ECONFLICT, "el sobre %d ya se registró recibido con el IDReceptor %d", id, e.IDReceptor)
		}
		if e.State == cfe.EnvelopeReceived || e.State == cfe.EnvelopeDone {
			return nil
		}
		e.State, e.IDReceptor, e.Token, e.Fechahora, e.LastError = cfe.EnvelopeReceived, idReceptor, token, fechahora, ""
		return moveAll(tx, id, e, cfe.DGISent, now, func(r *data.DGIRecord) bool {
			return r.State == cfe.DGIInEnvelope || r.State == cfe.DGIUnknown
		})
	})
}

// putBack moves the CFEs envelope id carries back to pending, first in
// line for a new envelope.
func (s *companyStore) putBack(tx *bolt.Tx, id int64, e *data.DGIEnvelopeRecord, now time.Time) error {
	back, err := data.DGIPutBack(tx, s.company)
	if err != nil {
		return err
	}
	if err := carried(tx, id, e, func(cid int64, r *data.DGIRecord) error {
		r.State, r.UpdatedAt = cfe.DGIPending, now
		back = append(back, cid)
		return data.PutDGI(tx, cid, r)
	}); err != nil {
		return err
	}
	slices.Sort(back)
	return data.SetDGIPutBack(tx, s.company, slices.Compact(back))
}

func (s *companyStore) DGIEnvelopeRefused(ctx context.Context, id int64, reasons []cfe.DGIReason) (*cfe.DGIEnvelope, error) {
	return s.updateEnvelope(ctx, id, func(tx *bolt.Tx, e *data.DGIEnvelopeRecord, now time.Time) error {
		e.State, e.Reasons = cfe.EnvelopeRefused, reasonsData(reasons)
		return s.putBack(tx, id, e, now)
	})
}

func (s *companyStore) DGIEnvelopeMismatch(ctx context.Context, id int64, reason string) (*cfe.DGIEnvelope, error) {
	return s.updateEnvelope(ctx, id, func(tx *bolt.Tx, e *data.DGIEnvelopeRecord, now time.Time) error {
		e.State, e.LastError = cfe.EnvelopeRefused, reason
		return s.putBack(tx, id, e, now)
	})
}

func final(state string) bool {
	return state == cfe.DGIAccepted || state == cfe.DGIRejected || state == cfe.DGIObserved
}

// DGIRecordVerdicts records DGI's verdicts. An AE also marks the CFE
// accepted (estado "aceptado", as marcar-aceptado does by hand) unless it
// was marked before.
func (s *companyStore) DGIRecordVerdicts(ctx context.Context, id int64, verdicts []cfe.DGIVerdict) (*cfe.DGIEnvelope, error) {
	return s.updateEnvelope(ctx, id, func(tx *bolt.Tx, e *data.DGIEnvelopeRecord, now time.Time) error {
		for _, v := range verdicts {
			cid := int64(v.Seq)
			if !slices.Contains(e.CFEs, cid) {
				return cfe.Errorf(cfe.EINVALID, "el CFE %d no está en el sobre %d", cid, id)
			}
			if !final(v.State) {
				return cfe.Errorf(cfe.EINVALID, "%q no es un veredicto de DGI", v.State)
			}
			r, err := data.GetDGI(tx, cid)
			if err != nil {
				return err
			}
			if r == nil {
				r = &data.DGIRecord{}
			}
			r.State, r.Envelope, r.Reasons, r.UpdatedAt = v.State, id, reasonsData(v.Reasons), now
			if err := data.PutDGI(tx, cid, r); err != nil {
				return err
			}
			if v.State == cfe.DGIAccepted {
				c, err := s.cfe(tx, cid)
				if err != nil {
					return err
				}
				if c.Accepted == nil {
					at := now.UTC()
					c.Accepted = &at
					if err := data.PutCFE(tx, c); err != nil {
						return err
					}
				}
			}
		}
		done := true
		if err := carried(tx, id, e, func(_ int64, r *data.DGIRecord) error {
			done = done && final(r.State)
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

func (s *companyStore) DGICFEs(ctx context.Context, seqs []uint64) ([]cfe.DGICFE, error) {
	var out []cfe.DGICFE
	err := s.view(ctx, func(tx *bolt.Tx) error {
		for _, seq := range seqs {
			r, err := data.GetDGI(tx, int64(seq))
			if err != nil {
				return err
			}
			if r == nil {
				continue
			}
			c, err := s.cfe(tx, int64(seq))
			if err != nil {
				return err
			}
			out = append(out, cfe.DGICFE{Seq: seq, UUID: c.UUID, Type: c.Type, Serie: c.Serie, Nro: c.Nro,
				TmstFirma: c.TmstFirma, CommittedAt: c.TmstFirma, Total: c.Total, State: r.State, Envelope: r.Envelope,
				Reasons: reasonsDomain(r.Reasons), UpdatedAt: r.UpdatedAt})
		}
		return nil
	})
	return out, err
}
