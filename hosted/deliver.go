package hosted

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// Defaults of DelivererConfig.
const (
	DefaultBatch = 100
	DefaultPoll  = 2 * time.Second
)

// probeEvery is how long an idle deliverer lets pass without a request to
// the service before it probes it (Client.Ping: no credentials, no quota).
const probeEvery = 30 * time.Second

// Outbox is the store's queue of signed CFEs waiting for the hosted service;
// *store.DB implements it.
type Outbox interface {
	// PendingOutbox returns up to limit pending CFEs in commit order.
	PendingOutbox(ctx context.Context, limit int) ([]*cfe.Issued, error)
	// MarkDelivered records the service's id of an accepted CFE.
	MarkDelivered(ctx context.Context, uuid string, hostedID int64) error
	// MarkRejected records why the service refused a CFE for good.
	MarkRejected(ctx context.Context, uuid, reason string) error
	// RecordAttempt records a failed attempt that will be retried.
	RecordAttempt(ctx context.Context, uuid string, cause error, at time.Time) error
}

// DelivererConfig configures a Deliverer. Outbox and Client are required.
type DelivererConfig struct {
	Outbox Outbox
	Client *Client
	// Batch is how many pending CFEs one pass reads; DefaultBatch when zero.
	Batch int
	// Poll is the wait between passes while the outbox is empty;
	// DefaultPoll when zero. Kick and Wake cut it short.
	Poll time.Duration
	// Wake, when set, wakes an idle deliverer as Kick does: the store's
	// commit notification (store.DB.WatchCommits), so a signed CFE leaves
	// at once instead of at the next poll. A value sent while a pass runs
	// makes the next pass start right after it.
	Wake   <-chan struct{}
	Logger *slog.Logger // discarded when nil
}

// Deliverer sends the outbox's CFEs to the hosted service; see the package
// comment. Run it in one goroutine.
type Deliverer struct {
	cfg  DelivererConfig
	log  *slog.Logger
	kick chan struct{}

	pass sync.Mutex // one pass at a time: order is kept by sending one by one

	mu   sync.Mutex
	stat DeliveryStatus
}

// DeliveryStatus is what the deliverer did since it started.
type DeliveryStatus struct {
	Delivered   int       // CFEs the service accepted
	Rejected    int       // CFEs the service refused for good
	LastSuccess time.Time // last accepted CFE; zero when none
	LastError   string    // Spanish; "" once a pass succeeds
	// Retrying is when the next attempt is due after a failure; zero when
	// the last pass succeeded.
	Retrying time.Time
}

// NewDeliverer returns a Deliverer for cfg.
func NewDeliverer(cfg DelivererConfig) *Deliverer {
	if cfg.Batch <= 0 {
		cfg.Batch = DefaultBatch
	}
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultPoll
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Deliverer{cfg: cfg, log: cfg.Logger, kick: make(chan struct{}, 1)}
}

// Kick wakes an idle deliverer, for example after a CFE went back to the
// outbox (a signed CFE wakes it through DelivererConfig.Wake).
func (d *Deliverer) Kick() {
	select {
	case d.kick <- struct{}{}:
	default:
	}
}

// Status reports the deliverer's counters and last error.
func (d *Deliverer) Status() DeliveryStatus {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.stat
}

// Run delivers until ctx ends: pass after pass while CFEs are pending, a
// poll (or a Kick) while the outbox is empty, and a growing backoff, never
// shorter than the service's Retry-After, while the service fails. While
// idle it probes the service every probeEvery, so its reachability stays
// known. A client without credentials delivers nothing: Run only probes.
func (d *Deliverer) Run(ctx context.Context) {
	c := d.cfg.Client
	failures := 0
	for ctx.Err() == nil {
		var n int
		var err error
		if c.Auth() != AuthNone { // without credentials nothing can be delivered: only probe
			n, err = d.Pass(ctx)
		}
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			failures++
			wait := backoff(failures)
			if ra, ok := RetryAfter(err); ok {
				wait = max(wait, ra)
			}
			d.setRetry(c.now().Add(wait))
			d.log.Warn("outbox delivery failed; backing off", "wait", wait, "err", err)
			if c.cfg.Sleep(ctx, wait) != nil {
				return
			}
		case n > 0:
			failures = 0 // more may be pending beyond the batch
		default:
			failures = 0
			if c.now().Sub(c.Status().CheckedAt) >= probeEvery {
				_ = c.Ping(ctx) // keeps /state's reachability fresh while there is nothing to send
			}
			t := time.NewTimer(d.cfg.Poll)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-d.kick:
				t.Stop()
			case <-d.cfg.Wake:
				t.Stop()
			case <-t.C:
			}
		}
	}
}

// Pass sends one batch of pending CFEs in order and returns how many left the
// outbox (accepted or refused for good). It stops at the first CFE that could
// not be delivered for a reason that may pass (service down, limiting,
// credential refused), records the attempt, and returns that error: later
// CFEs wait, so that no number overtakes a lower one of its serie.
func (d *Deliverer) Pass(ctx context.Context) (int, error) {
	d.pass.Lock()
	defer d.pass.Unlock()
	pending, err := d.cfg.Outbox.PendingOutbox(ctx, d.cfg.Batch)
	if err != nil {
		return 0, err
	}
	done := 0
	for _, doc := range pending {
		if err := d.deliver(ctx, doc); err != nil {
			return done, err
		}
		done++
	}
	d.mu.Lock()
	d.stat.LastError, d.stat.Retrying = "", time.Time{}
	d.mu.Unlock()
	return done, nil
}

// deliver sends one CFE and records the outcome; it returns an error only
// when the CFE stays pending.
func (d *Deliverer) deliver(ctx context.Context, doc *cfe.Issued) error {
	c := d.cfg.Client
	res, err := c.Deliver(ctx, SignedCFE{UUID: doc.UUID, XmlFirmado: string(doc.XML), Adenda: doc.Adenda})
	switch {
	case err == nil:
		if err := d.cfg.Outbox.MarkDelivered(ctx, doc.UUID, res.ID); err != nil {
			return err
		}
		d.mu.Lock()
		d.stat.Delivered++
		d.stat.LastSuccess = c.now()
		d.mu.Unlock()
		return nil
	case refusedForGood(err):
		reason := rejectionReason(err)
		d.log.Error("hosted service refused a signed CFE for good", "uuid", doc.UUID, "tipo", int(doc.Type),
			"serie", doc.Serie, "nro", doc.Nro, "reason", reason)
		if err := d.cfg.Outbox.MarkRejected(ctx, doc.UUID, reason); err != nil {
			return err
		}
		d.mu.Lock()
		d.stat.Rejected++
		d.mu.Unlock()
		return nil
	}
	if ctx.Err() == nil {
		if rerr := d.cfg.Outbox.RecordAttempt(ctx, doc.UUID, errors.New(cfe.ErrorMessage(err)), c.now()); rerr != nil {
			d.log.Error("recording a delivery attempt", "uuid", doc.UUID, "err", rerr)
		}
	}
	d.mu.Lock()
	d.stat.LastError = cfe.ErrorMessage(err)
	d.mu.Unlock()
	return err
}

func (d *Deliverer) setRetry(t time.Time) {
	d.mu.Lock()
	d.stat.Retrying = t
	d.mu.Unlock()
}

// refusedForGood reports whether the service answered that this CFE will
// never be accepted as it is: the document breaks a rule (400, 413) or its
// uuid or number is already recorded with other content (409). A refused
// credential, a missing route, a 5xx or a 429 are not the CFE's fault.
func refusedForGood(err error) bool {
	var apiErr *APIError
	if !errors.As(err, &apiErr) {
		return false
	}
	switch cfe.ErrorCode(err) {
	case cfe.EINVALID, cfe.ECONFLICT:
		return true
	}
	return false
}

// rejectionReason is the Spanish reason kept with a refused CFE: the
// service's message, each refused field, its response code and request id.
func rejectionReason(err error) string {
	var b strings.Builder
	b.WriteString(cfe.ErrorMessage(err))
	fields := cfe.ErrorFields(err)
	if len(fields) > 1 || (len(fields) == 1 && !strings.Contains(b.String(), fields[0].Mensaje)) {
		for _, f := range fields {
			b.WriteString("; " + f.Campo + ": " + f.Mensaje)
		}
	}
	var apiErr *APIError
	if errors.As(err, &apiErr) {
		if apiErr.Respuesta != "" {
			b.WriteString(" (código " + apiErr.Respuesta + ")")
		}
		if apiErr.RequestID != "" {
			b.WriteString(" [solicitud " + apiErr.RequestID + "]")
		}
	}
	return b.String()
}
