package hosted

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// AnnulledOutbox is the store's queue of annulled numbers waiting for the
// hosted service; *store.DB implements it.
type AnnulledOutbox interface {
	// AnnulledUndelivered returns up to limit ranges annulled up to today
	// that the service has not answered yet.
	AnnulledUndelivered(ctx context.Context, today cfe.Date, limit int) ([]cfe.AnnulledRange, error)
	// MarkAnnulledDelivered records that the service took a range.
	MarkAnnulledDelivered(ctx context.Context, r cfe.AnnulledRange) error
	// MarkAnnulledRefused records why the service refused a range for good.
	MarkAnnulledRefused(ctx context.Context, r cfe.AnnulledRange, reason string) error
	// RecordAnnulledAttempt records a failed attempt that will be retried.
	RecordAnnulledAttempt(ctx context.Context, r cfe.AnnulledRange, cause error, at time.Time) error
}

// AnnulledDelivererConfig configures an AnnulledDeliverer. Outbox and
// Client are required.
type AnnulledDelivererConfig struct {
	Outbox AnnulledOutbox
	Client *Client
	Batch  int           // DefaultBatch
	Poll   time.Duration // the wait while nothing is pending; DefaultAnnulledPoll
	Logger *slog.Logger
}

// DefaultAnnulledPoll is the annulled-numbers deliverer's wait while
// nothing is pending: numbers are annulled seldom, and the service needs
// them by the end of their day.
const DefaultAnnulledPoll = 30 * time.Second

// AnnulledDeliverer sends the store's annulled numbers to the hosted
// service (POST /api/v1/numerosanulados), which builds provider mode's
// daily report from every till's CFEs and annulled numbers: in order,
// each range until the service took it or refused it for good, a growing
// backoff, never shorter than the service's Retry-After, while the service
// fails. Run it in one goroutine.
type AnnulledDeliverer struct {
	cfg  AnnulledDelivererConfig
	log  *slog.Logger
	kick chan struct{}

	mu   sync.Mutex
	stat AnnulledStatus
}

// AnnulledStatus is what the deliverer did since it started.
type AnnulledStatus struct {
	Delivered int    // ranges the service took
	Refused   int    // ranges the service refused for good
	LastError string // Spanish; "" once a pass succeeds
}

// NewAnnulledDeliverer returns an AnnulledDeliverer for cfg.
func NewAnnulledDeliverer(cfg AnnulledDelivererConfig) *AnnulledDeliverer {
	if cfg.Batch <= 0 {
		cfg.Batch = DefaultBatch
	}
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultAnnulledPoll
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &AnnulledDeliverer{cfg: cfg, log: cfg.Logger, kick: make(chan struct{}, 1)}
}

// Kick wakes an idle deliverer (a range was just annulled).
func (d *AnnulledDeliverer) Kick() {
	select {
	case d.kick <- struct{}{}:
	default:
	}
}

// Status reports the deliverer's counters and last error.
func (d *AnnulledDeliverer) Status() AnnulledStatus {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.stat
}

// Run delivers until ctx ends.
func (d *AnnulledDeliverer) Run(ctx context.Context) {
	runPasses(ctx, d.cfg.Client, d.kick, d.cfg.Poll, 0, d.log, "annulled numbers not delivered; backing off",
		func(ctx context.Context) (passOutcome, error) {
			n, err := d.Pass(ctx)
			return passOutcome{again: n > 0}, err // more may be pending beyond the batch
		})
}

// Pass sends one batch of pending ranges in order and returns how many left
// the queue (taken or refused for good). It stops at the first range that
// could not be delivered for a reason that may pass, records the attempt
// and returns that error.
func (d *AnnulledDeliverer) Pass(ctx context.Context) (int, error) {
	c := d.cfg.Client
	today := cfe.DateOf(c.now().In(cfe.Montevideo))
	pending, err := d.cfg.Outbox.AnnulledUndelivered(ctx, today, d.cfg.Batch)
	if err != nil {
		return 0, err
	}
	done := 0
	for _, r := range pending {
		if err := d.deliver(ctx, r); err != nil {
			return done, err
		}
		done++
	}
	d.mu.Lock()
	d.stat.LastError = ""
	d.mu.Unlock()
	return done, nil
}

func (d *AnnulledDeliverer) deliver(ctx context.Context, r cfe.AnnulledRange) error {
	c := d.cfg.Client
	n := AnnulledNumbers{TipoCfe: int(r.Type), Serie: r.Serie, Desde: r.From, Hasta: r.To,
		Motivo: r.Reason, Detalle: r.Note, FechaAnulacion: r.At.Format(time.RFC3339)}
	if day := r.ReportDay(); day != cfe.DateOf(r.At.In(cfe.Montevideo)) {
		n.FechaResumen = day.String()
	}
	_, err := c.RegisterAnnulled(ctx, n)
	switch {
	case err == nil:
		if err := d.cfg.Outbox.MarkAnnulledDelivered(ctx, r); err != nil {
			return err
		}
		d.mu.Lock()
		d.stat.Delivered++
		d.mu.Unlock()
		return nil
	case refusedForGood(err):
		reason := rejectionReason(err)
		d.log.Error("hosted service refused annulled numbers for good", "range", r.String(), "reason", reason)
		if err := d.cfg.Outbox.MarkAnnulledRefused(ctx, r, reason); err != nil {
			return err
		}
		d.mu.Lock()
		d.stat.Refused++
		d.mu.Unlock()
		return nil
	}
	if ctx.Err() == nil {
		if rerr := d.cfg.Outbox.RecordAnnulledAttempt(ctx, r, errors.New(cfe.ErrorMessage(err)), c.now()); rerr != nil {
			d.log.Error("recording an annulled numbers attempt", "range", r.String(), "err", rerr)
		}
	}
	d.mu.Lock()
	d.stat.LastError = "no se pudieron entregar los números anulados al servicio en la nube: " + cfe.ErrorMessage(err)
	d.mu.Unlock()
	return err
}
