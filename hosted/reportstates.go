package hosted

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// Defaults of ReportStatesConfig.
const (
	// DefaultReportStatesPoll is the wait between two readings of the
	// reports' states: the service sends a day's report once, after
	// midnight, and DGI's later state comes hours after.
	DefaultReportStatesPoll = 5 * time.Minute
	// DefaultReportStatesDays is how many days back the reader asks for.
	DefaultReportStatesDays = 31
)

// ReportStatesConfig configures a ReportStates. Client is required.
type ReportStatesConfig struct {
	Client *Client
	Poll   time.Duration // DefaultReportStatesPoll
	Days   int           // DefaultReportStatesDays
	Logger *slog.Logger
}

// ReportStates is provider mode's view of the daily reports: the hosted
// service builds and sends one report per RUC and day, and the agent reads
// their states back (DailyReports) every Poll, keeping the last answer for
// /state, the status page, the tray and doctor, which must not wait on the
// service.
type ReportStates struct {
	cfg  ReportStatesConfig
	log  *slog.Logger
	kick chan struct{}

	mu      sync.Mutex
	states  []cfe.DailyReportState
	read    bool // states holds an answer
	lastErr string
}

// NewReportStates returns a ReportStates for cfg.
func NewReportStates(cfg ReportStatesConfig) *ReportStates {
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultReportStatesPoll
	}
	if cfg.Days <= 0 {
		cfg.Days = DefaultReportStatesDays
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &ReportStates{cfg: cfg, log: cfg.Logger, kick: make(chan struct{}, 1)}
}

// Kick wakes the reader for a reading now.
func (r *ReportStates) Kick() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// Run reads the states until ctx is done: every Poll, the first one Poll
// after it starts (a report's state changes a few times a day; the agent's
// start costs the key's rate limit nothing more) or at a Kick, and after a
// failure no sooner than the service's Retry-After (the client's own
// retries come first).
func (r *ReportStates) Run(ctx context.Context) {
	c := r.cfg.Client
	for first := true; ctx.Err() == nil; first = false {
		wait := r.cfg.Poll
		if c.Auth() != AuthNone && !first {
			if err := r.Read(ctx); err != nil {
				if ctx.Err() != nil {
					return
				}
				if ra, ok := RetryAfter(err); ok {
					wait = max(wait, ra)
				}
				r.log.Warn("daily report states not read from the hosted service", "wait", wait, "err", err)
			}
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-r.kick:
			t.Stop()
		case <-t.C:
		}
	}
}

// Read asks the service once for the states of the last Days days.
func (r *ReportStates) Read(ctx context.Context) error {
	c := r.cfg.Client
	today := cfe.DateOf(c.now().In(cfe.Montevideo))
	list, err := c.DailyReports(ctx, today.AddDays(-r.cfg.Days), today)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err != nil {
		r.lastErr = "no se pudo leer del servicio en la nube el estado de los reportes diarios: " + cfe.ErrorMessage(err)
		return err
	}
	r.states, r.read, r.lastErr = list, true, ""
	return nil
}

// States returns the states last read, newest day first, without asking the
// service; none before the first reading. It is provider mode's reader of
// the report states (what direct mode keeps in its store).
func (r *ReportStates) States(context.Context) ([]cfe.DailyReportState, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := slices.Clone(r.states)
	slices.SortStableFunc(out, func(a, b cfe.DailyReportState) int { return b.Date.Time(time.UTC).Compare(a.Date.Time(time.UTC)) })
	return out, nil
}

// LastError is the last failure to read the states (Spanish), "" after a
// success.
func (r *ReportStates) LastError() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lastErr
}
