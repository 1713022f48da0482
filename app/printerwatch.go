package app

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/health"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
	"github.com/cfe-agent/cfe-agent/printer"
)

// PrinterWatchInterval is how often the agent asks its default printer
// whether it can print. A printer that stops is seen within this interval
// and one check (printer.CheckTimeout): under 30 s, so that /health is no
// longer ok within a minute (issue 34), while a printer that answers is
// asked three times a minute, a few bytes each.
const PrinterWatchInterval = 20 * time.Second

// PrinterWatch keeps what the agent last learned of its printers: its
// default printer asked between jobs (Run), and every job's outcome
// (recordJob). /state and /health report the default printer's, GET
// /printers every printer's.
type PrinterWatch struct {
	m        *printer.Manager
	def      string // the profile's default printer ("" when none: nothing is asked)
	interval time.Duration
	now      func() time.Time
	log      *slog.Logger

	mu   sync.Mutex
	last map[string]health.Printer // by lower-case name
}

// newPrinterWatch watches the default printer of a's profile on m.
func newPrinterWatch(a *Agent, m *printer.Manager) *PrinterWatch {
	return &PrinterWatch{m: m, def: a.Profile.DefaultPrinter, interval: PrinterWatchInterval, now: time.Now, log: a.Log,
		last: map[string]health.Printer{}}
}

// Run asks the default printer at once and then every interval until ctx
// ends. A printer busy with a job is not asked (its job tells).
func (w *PrinterWatch) Run(ctx context.Context) {
	if w == nil || w.def == "" {
		return
	}
	t := time.NewTicker(w.interval)
	defer t.Stop()
	for {
		w.check(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// check asks the default printer once and records the answer.
func (w *PrinterWatch) check(ctx context.Context) {
	err := w.m.CheckIdle(ctx, w.def)
	if errors.Is(err, printer.ErrBusy) || ctx.Err() != nil {
		return
	}
	w.record(w.def, err, false)
}

// recordJob records the outcome of a job sent to the printer called name:
// a printer that refused or failed it (EUNAVAILABLE, ENOTFOUND) is not
// ready; a job it took says it is. A job refused for what it asked
// (EINVALID) says nothing of the printer.
func (w *PrinterWatch) recordJob(name string, err error) {
	if w == nil || name == "" {
		return
	}
	switch cfe.ErrorCode(err) {
	case "", cfe.EUNAVAILABLE, cfe.ENOTFOUND:
		w.record(name, err, true)
	}
}

// record keeps what err says of the printer name.
func (w *PrinterWatch) record(name string, err error, byJob bool) {
	p := health.Printer{Alias: name, OK: err == nil, At: w.now(), ByJob: byJob}
	if err != nil {
		p.Reason = cfe.ErrorMessage(err)
	}
	key := strings.ToLower(name)
	w.mu.Lock()
	was, seen := w.last[key]
	w.last[key] = p
	w.mu.Unlock()
	if seen && was.OK == p.OK {
		return
	}
	if p.OK {
		if seen {
			w.log.Info("printer ready again", "printer", name)
		}
		return
	}
	w.log.Warn("printer not ready", "printer", name, "reason", p.Reason, "by_job", byJob)
}

// state is what the agent last learned of its default printer; nil before
// the first check or job, or without a default printer.
func (w *PrinterWatch) state() *health.Printer {
	if w == nil || w.def == "" {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	p, ok := w.last[strings.ToLower(w.def)]
	if !ok {
		return nil
	}
	p.Alias = w.def
	return &p
}

// lastCheck is what the agent last learned of the printer called name, for
// GET /printers; nil when nothing.
func (w *PrinterWatch) lastCheck(name string) *apitype.PrinterCheck {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	p, ok := w.last[strings.ToLower(name)]
	w.mu.Unlock()
	if !ok {
		return nil
	}
	src := apitype.PrinterCheckIdle
	if p.ByJob {
		src = apitype.PrinterCheckJob
	}
	return &apitype.PrinterCheck{OK: p.OK, Reason: p.Reason, At: p.At.In(cfe.Montevideo), Source: src}
}
