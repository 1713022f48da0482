package dgisend

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/dgi"
)

// The daily report in direct mode (REP; dgi-lifecycle.md §4): the Reporter
// sends DGI, after midnight in Montevideo, the previous day's report — also
// for a day without receipts — and every earlier day not yet reported,
// oldest first, from the first day it reports on (ReporterConfig.Since, or
// the signature date of the first CFE sent directly). One pass
// (Reporter.Pass) goes through those days in order:
//
//   - a day without a report is reported once DGI has received every CFE
//     signed up to its end (DGI compares the report with them): the report
//     (SecEnvio 1) is built by ReporterConfig.Build, recorded with its
//     signed bytes, and only then sent;
//   - a report recorded and not sent, or whose sending reached nothing, is
//     sent (the same bytes);
//   - a report sent without a trustworthy answer (a timeout, a dropped
//     connection, a crash while sending) is never sent again blindly: DGI
//     is asked first (EFACCONSULTARENVIOSREPORTE by FechaResumen and
//     SecEnvio); found, its state is recorded; not found, the same bytes
//     go again;
//   - a report DGI received (AR) is asked about every Check until DGI has
//     processed it: DR, ER (inconsistent with the CFEs DGI holds: a
//     technician corrects and resends it, Resend) or FR (replaced by a
//     later SecEnvio); every report of the day is updated from the same
//     answer;
//   - a report DGI rejected (BR) keeps DGI's reasons, shown until a
//     technician resends the day.
//
// Failures wait Retry, doubled at each failure of the same day up to
// MaxRetry. A day blocked (its CFEs not yet at DGI, its report failing)
// holds the later days back: they are sent in order.

// ReportStore is the durable state of the daily reports (store/dgireport.go);
// *store.DB implements it.
type ReportStore interface {
	DGIReportStart(ctx context.Context) (cfe.Date, bool, error)
	DGIReports(ctx context.Context, from, to cfe.Date) ([]*cfe.DGIDailyReport, error)
	DGIReportOpen(ctx context.Context, d cfe.Date, seq int, xml []byte) (*cfe.DGIDailyReport, error)
	DGIReportSending(ctx context.Context, d cfe.Date, seq int, at time.Time) (*cfe.DGIDailyReport, error)
	DGIReportFailed(ctx context.Context, d cfe.Date, seq int, reason string, notSent bool) (*cfe.DGIDailyReport, error)
	DGIReportAnswered(ctx context.Context, d cfe.Date, seq int, state string, idReceptor int64, reasons []cfe.DGIReason, at time.Time) (*cfe.DGIDailyReport, error)
	DGIUnreceivedSince(ctx context.Context, until time.Time) (time.Time, error)
}

// ReportDGI is DGI's services the reporter uses; *dgi.Client implements it.
type ReportDGI interface {
	SendReport(ctx context.Context, report []byte) (*dgi.ACKRepDiario, error)
	Reports(ctx context.Context, q dgi.ReportQuery) ([]dgi.ReportInfo, error)
}

// BuildReport returns the signed report of day date with SecEnvio seq (the
// agent's, package app).
type BuildReport func(ctx context.Context, date cfe.Date, seq int) ([]byte, error)

// Defaults of ReporterConfig.
const (
	DefaultReportAfter    = 5 * time.Minute
	DefaultReportRetry    = time.Minute
	DefaultReportMaxRetry = time.Hour
	DefaultReportCheck    = 15 * time.Minute
	DefaultReportPoll     = time.Minute
	// maxReportDays bounds how far back the days to report go.
	maxReportDays = 400
)

// ReporterConfig configures a Reporter. Store and Build are required; DGI
// too, except for Resend alone (a technician's command with the agent
// stopped).
type ReporterConfig struct {
	Store ReportStore
	DGI   ReportDGI
	Build BuildReport
	// Since is the first day to report; zero means the signature date of
	// the first CFE sent directly (Store.DGIReportStart).
	Since cfe.Date
	// After is how long after midnight (Montevideo) the previous day is
	// reported, so that a CFE signed at 23:59:59 is committed and sent
	// first (DefaultReportAfter).
	After time.Duration
	// Retry is the first wait after a failure, doubled at each failure up
	// to MaxRetry; Check how often a received report's state is asked; Poll
	// the wait between Run's passes.
	Retry    time.Duration
	MaxRetry time.Duration
	Check    time.Duration
	Poll     time.Duration
	Now      func() time.Time
	Logger   *slog.Logger
}

// ReporterStatus is what the reporter knows beyond the store.
type ReporterStatus struct {
	LastError string    // Spanish; "" after a success
	Waiting   string    // Spanish: why the next day is not reported yet ("" when nothing waits)
	NextTry   time.Time // when the blocked day is tried again
}

// Reporter sends the daily reports; see the comment above. Pass and Run
// must not run at the same time; Resend, Days and Status may be called
// from any goroutine.
type Reporter struct {
	cfg  ReporterConfig
	log  *slog.Logger
	kick chan struct{}

	mu     sync.Mutex
	status ReporterStatus
	// backoff per day: when it may be tried again, and how many failures in
	// a row.
	next     map[cfe.Date]time.Time
	failures map[cfe.Date]int
	// checked: when each day's received report was last asked about.
	checked map[cfe.Date]time.Time
}

// NewReporter returns a Reporter for cfg.
func NewReporter(cfg ReporterConfig) *Reporter {
	if cfg.After <= 0 {
		cfg.After = DefaultReportAfter
	}
	if cfg.Retry <= 0 {
		cfg.Retry = DefaultReportRetry
	}
	if cfg.MaxRetry <= 0 {
		cfg.MaxRetry = DefaultReportMaxRetry
	}
	if cfg.Check <= 0 {
		cfg.Check = DefaultReportCheck
	}
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultReportPoll
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Reporter{cfg: cfg, log: log, kick: make(chan struct{}, 1), next: map[cfe.Date]time.Time{},
		failures: map[cfe.Date]int{}, checked: map[cfe.Date]time.Time{}}
}

// Status returns the reporter's status.
func (r *Reporter) Status() ReporterStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.status
}

// Kick wakes Run for a pass now.
func (r *Reporter) Kick() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// Run runs passes until ctx is done: every Poll, and when kicked.
func (r *Reporter) Run(ctx context.Context) {
	RunPasses(ctx, r.cfg.Poll, r.kick, nil, r.Pass, func(err error) { r.log.Warn("dgi: report pass failed", "err", err) })
}

// LastDay returns the last day due for a report at now: the day before
// today in Montevideo, once After has passed since midnight.
func (r *Reporter) LastDay(now time.Time) cfe.Date {
	return cfe.DateOf(now.Add(-r.cfg.After).In(cfe.Montevideo)).AddDays(-1)
}

// FirstDay returns the first day the reporter reports on (ok false while
// there is none: no CFE was sent directly and no Since is set).
func (r *Reporter) FirstDay(ctx context.Context) (cfe.Date, bool, error) {
	if !r.cfg.Since.IsZero() {
		return r.cfg.Since, true, nil
	}
	return r.cfg.Store.DGIReportStart(ctx)
}

// day is one day to report and its reports, by SecEnvio.
type day struct {
	date    cfe.Date
	reports []*cfe.DGIDailyReport
}

func (d *day) last() *cfe.DGIDailyReport {
	if len(d.reports) == 0 {
		return nil
	}
	return d.reports[len(d.reports)-1]
}

// days returns the days due at now, oldest first, with their reports.
func (r *Reporter) days(ctx context.Context, now time.Time) ([]*day, error) {
	first, ok, err := r.FirstDay(ctx)
	if err != nil || !ok {
		return nil, err
	}
	last := r.LastDay(now)
	if earliest := last.AddDays(-maxReportDays); first.Before(earliest) {
		first = earliest
	}
	if last.Before(first) {
		return nil, nil
	}
	reports, err := r.cfg.Store.DGIReports(ctx, first, last)
	if err != nil {
		return nil, err
	}
	var out []*day
	i := 0
	for d := first; !d.After(last); d = d.AddDays(1) {
		dd := &day{date: d}
		for ; i < len(reports) && reports[i].Date == d; i++ {
			dd.reports = append(dd.reports, reports[i])
		}
		out = append(out, dd)
	}
	return out, nil
}

// Days returns where every day due at now stands, newest first: its last
// report's state ("" when none was sent yet). It is the direct-mode source
// of /state's dgi.reportes and of the report's urgency.
func (r *Reporter) Days(ctx context.Context, now time.Time) ([]cfe.DailyReportState, error) {
	days, err := r.days(ctx, now)
	if err != nil {
		return nil, err
	}
	out := make([]cfe.DailyReportState, 0, len(days))
	for i := len(days) - 1; i >= 0; i-- {
		d := days[i]
		if l := d.last(); l != nil {
			st := l.DailyReportState
			if l.Phase != cfe.ReportAnswered {
				st.State = "" // recorded or sent without an answer: not received as far as anyone knows
			}
			out = append(out, st)
			continue
		}
		out = append(out, cfe.DailyReportState{Date: d.date})
	}
	return out, nil
}

func (r *Reporter) due(d cfe.Date, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !now.Before(r.next[d])
}

// failed records a failure of day d: why (Spanish), and the next try.
func (r *Reporter) failed(d cfe.Date, now time.Time, msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	wait := r.cfg.Retry << min(r.failures[d], 20)
	if wait <= 0 || wait > r.cfg.MaxRetry {
		wait = r.cfg.MaxRetry
	}
	r.failures[d]++
	r.next[d] = now.Add(wait)
	r.status.LastError, r.status.NextTry = msg, r.next[d]
}

func (r *Reporter) succeeded(d cfe.Date) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.failures, d)
	delete(r.next, d)
	r.status.LastError, r.status.NextTry = "", time.Time{}
}

func (r *Reporter) waiting(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.status.Waiting = msg
}

// Pass goes once through the days due (see the comment above) and reports
// whether it changed anything.
func (r *Reporter) Pass(ctx context.Context) (bool, error) {
	now := r.cfg.Now()
	days, err := r.days(ctx, now)
	if err != nil {
		return false, err
	}
	progress := false
	r.waiting("")
	for _, d := range days {
		p, blocked, err := r.step(ctx, d, now)
		progress = progress || p
		if err != nil || blocked {
			return progress, err
		}
	}
	return progress, nil
}

// step moves day d's reports on; blocked holds the later days back (d has
// no report DGI received yet).
func (r *Reporter) step(ctx context.Context, d *day, now time.Time) (progress, blocked bool, err error) {
	l := d.last()
	switch {
	case l == nil:
		end := d.date.AddDays(1).Time(cfe.Montevideo).Add(-time.Nanosecond)
		oldest, err := r.cfg.Store.DGIUnreceivedSince(ctx, end)
		if err != nil {
			return false, true, err
		}
		if !oldest.IsZero() {
			r.waiting(fmt.Sprintf("el reporte del %s espera a que DGI reciba los comprobantes firmados hasta ese día (el más antiguo sin recibir es del %s)",
				d.date, oldest.In(cfe.Montevideo).Format("02/01 15:04")))
			return false, true, nil
		}
		if !r.due(d.date, now) {
			return false, true, nil
		}
		doc, err := r.cfg.Build(ctx, d.date, 1)
		if err != nil {
			msg := fmt.Sprintf("no se pudo armar el reporte diario del %s: %s", d.date, cfe.ErrorMessage(err))
			r.log.Error("dgi: cannot build the daily report", "date", d.date, "err", err)
			r.failed(d.date, now, msg)
			return false, true, nil
		}
		rep, err := r.cfg.Store.DGIReportOpen(ctx, d.date, 1, doc)
		if err != nil {
			return false, true, err
		}
		p, err := r.send(ctx, rep, now)
		return p, true, err
	case l.Phase == cfe.ReportRecorded:
		if !r.due(d.date, now) {
			return false, true, nil
		}
		p, err := r.send(ctx, l, now)
		return p, true, err
	case l.Phase == cfe.ReportUnknown:
		if !r.due(d.date, now) {
			return false, true, nil
		}
		p, err := r.resolve(ctx, l, now)
		return p, true, err
	case l.State == cfe.ReportReceived:
		r.mu.Lock()
		last := r.checked[d.date]
		r.mu.Unlock()
		if now.Before(last.Add(r.cfg.Check)) || now.Before(l.CheckedAt.Add(r.cfg.Check)) {
			return false, false, nil
		}
		p, err := r.check(ctx, d, now)
		return p, false, err
	}
	// DR, FR: done. ER and BR wait for a technician's correction (Resend);
	// the later days go on.
	return false, false, nil
}

// send sends report rep (recorded) and records DGI's answer.
func (r *Reporter) send(ctx context.Context, rep *cfe.DGIDailyReport, now time.Time) (bool, error) {
	d, seq := rep.Date, rep.Seq
	if _, err := r.cfg.Store.DGIReportSending(ctx, d, seq, now); err != nil {
		return false, err
	}
	ack, err := r.cfg.DGI.SendReport(ctx, rep.XML)
	if err != nil {
		unknown := dgi.OutcomeUnknown(err)
		msg := fmt.Sprintf("no se pudo enviar el reporte diario del %s (secuencia %d) a DGI: %s", d, seq, cfe.ErrorMessage(err))
		if unknown {
			msg = fmt.Sprintf("no se sabe si DGI recibió el reporte diario del %s (secuencia %d): %s; se le preguntará antes de enviarlo de nuevo",
				d, seq, cfe.ErrorMessage(err))
		}
		r.log.Warn("dgi: daily report not sent", "date", d, "seq", seq, "unknown", unknown, "err", err)
		r.failed(d, now, msg)
		_, serr := r.cfg.Store.DGIReportFailed(ctx, d, seq, msg, !unknown)
		return true, serr
	}
	reasons := make([]cfe.DGIReason, 0, len(ack.Motivos))
	for _, m := range ack.Motivos {
		reasons = append(reasons, cfe.DGIReason(m))
	}
	r.log.Info("dgi: daily report answered", "date", d, "seq", seq, "estado", ack.Estado, "idReceptor", ack.IDReceptor)
	if _, err := r.cfg.Store.DGIReportAnswered(ctx, d, seq, ack.Estado, ack.IDReceptor, reasons, now); err != nil {
		return true, err
	}
	r.succeeded(d)
	r.markChecked(d, now)
	return true, nil
}

func (r *Reporter) markChecked(d cfe.Date, now time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.checked[d] = now
}

// resolve asks DGI about a report sent without a trustworthy answer, and
// sends it again only when DGI does not hold it.
func (r *Reporter) resolve(ctx context.Context, rep *cfe.DGIDailyReport, now time.Time) (bool, error) {
	list, err := r.cfg.DGI.Reports(ctx, dgi.ReportQuery{FechaResumen: rep.Date, Secuencia: rep.Seq})
	if err != nil {
		msg := fmt.Sprintf("no se pudo preguntar a DGI por el reporte diario del %s (secuencia %d): %s", rep.Date, rep.Seq, cfe.ErrorMessage(err))
		r.failed(rep.Date, now, msg)
		_, serr := r.cfg.Store.DGIReportFailed(ctx, rep.Date, rep.Seq, msg, false)
		return false, serr
	}
	var found *dgi.ReportInfo
	for i := range list {
		// A received one wins over a rejected copy of the same SecEnvio.
		if found == nil || list[i].Estado != dgi.ReportFailed && found.Estado == dgi.ReportFailed {
			found = &list[i]
		}
	}
	if found == nil {
		r.log.Info("dgi: daily report not at DGI after an unknown outcome: sending it again", "date", rep.Date, "seq", rep.Seq)
		return r.send(ctx, rep, now)
	}
	r.log.Info("dgi: daily report found at DGI after an unknown outcome", "date", rep.Date, "seq", rep.Seq, "estado", found.Estado)
	var reasons []cfe.DGIReason
	if found.Estado == dgi.ReportFailed {
		reasons = []cfe.DGIReason{{Codigo: dgi.ReportFailed, Glosa: "Reporte rechazado",
			Detalle: "DGI lo rechazó; sus motivos no se conocen porque la respuesta se perdió"}}
	}
	if _, err := r.cfg.Store.DGIReportAnswered(ctx, rep.Date, rep.Seq, found.Estado, found.IdReceptor, reasons, now); err != nil {
		return false, err
	}
	r.succeeded(rep.Date)
	r.markChecked(rep.Date, now)
	return true, nil
}

// check asks DGI for the state of every report of day d, matched by
// IDReceptor, and records those that changed.
func (r *Reporter) check(ctx context.Context, d *day, now time.Time) (bool, error) {
	r.markChecked(d.date, now)
	list, err := r.cfg.DGI.Reports(ctx, dgi.ReportQuery{FechaResumen: d.date})
	if err != nil {
		r.mu.Lock()
		r.status.LastError = fmt.Sprintf("no se pudo consultar a DGI el estado del reporte diario del %s: %s", d.date, cfe.ErrorMessage(err))
		r.mu.Unlock()
		return false, nil
	}
	byID := map[int64]string{}
	for _, info := range list {
		byID[info.IdReceptor] = info.Estado
	}
	progress := false
	for _, rep := range d.reports {
		st, ok := byID[rep.ReceiverID]
		if !ok || rep.ReceiverID == 0 || rep.Phase != cfe.ReportAnswered || st == rep.State {
			continue
		}
		var reasons []cfe.DGIReason
		if st == cfe.ReportMismatch {
			reasons = []cfe.DGIReason{{Codigo: cfe.ReportMismatch, Glosa: "Reporte con inconsistencias",
				Detalle: "DGI encontró diferencias entre el reporte y los comprobantes que recibió de ese día"}}
		}
		r.log.Info("dgi: daily report state", "date", d.date, "seq", rep.Seq, "from", rep.State, "to", st)
		if _, err := r.cfg.Store.DGIReportAnswered(ctx, d.date, rep.Seq, st, 0, reasons, now); err != nil {
			return progress, err
		}
		progress = true
	}
	return progress, nil
}

// Resend builds and records a corrected report of day d, SecEnvio one more
// than the day's last (1 when the day has none), to be sent by the next
// pass; the report it replaces becomes FR at DGI once DGI receives it.
//
// Errors: EINVALID for a day not yet over (Montevideo); ECONFLICT when the
// day's last report has no answer from DGI yet; the builder's.
func (r *Reporter) Resend(ctx context.Context, d cfe.Date) (*cfe.DGIDailyReport, error) {
	const op = "dgisend.Resend"
	now := r.cfg.Now()
	if today := cfe.DateOf(now.In(cfe.Montevideo)); !d.Before(today) {
		return nil, &cfe.Error{Code: cfe.EINVALID, Op: op, Message: fmt.Sprintf("el día %s no terminó: su reporte se envía después de la medianoche", d)}
	}
	reports, err := r.cfg.Store.DGIReports(ctx, d, d)
	if err != nil {
		return nil, err
	}
	seq := 1
	if n := len(reports); n > 0 {
		l := reports[n-1]
		if l.Phase != cfe.ReportAnswered {
			return nil, &cfe.Error{Code: cfe.ECONFLICT, Op: op, Message: fmt.Sprintf(
				"el reporte %d del %s todavía no tiene respuesta de DGI: espere a que la tenga antes de enviar una corrección", l.Seq, d)}
		}
		seq = l.Seq + 1
	}
	doc, err := r.cfg.Build(ctx, d, seq)
	if err != nil {
		return nil, err
	}
	rep, err := r.cfg.Store.DGIReportOpen(ctx, d, seq, doc)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	delete(r.next, d)
	delete(r.failures, d)
	r.mu.Unlock()
	r.Kick()
	return rep, nil
}
