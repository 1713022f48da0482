package app

import (
	"context"
	"os"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/dgisend"
)

// The daily report to DGI (REP; docs/dgi-direct.md "The daily report"): in
// direct mode the agent sends it itself (dgisend.Reporter, started with the
// envelope sender) and keeps each report's state in the store; in provider
// mode the hosted service sends one report per RUC and day and reports its
// state. Either way /state, the status page, the tray and doctor read the
// days through DailyReports.

// DailyReports is where the daily reports to DGI stand.
type DailyReports interface {
	// DailyReports returns the days whose report the agent answers for at
	// now, newest first, each with its last report's state ("" while none
	// reached DGI).
	DailyReports(ctx context.Context, now time.Time) ([]cfe.DailyReportState, error)
}

// directReports is DailyReports in direct mode: the reports the store
// keeps, from the first day the agent reports on to yesterday (by the
// reporter's clock: offset is EnvTestReportClock's).
type directReports struct {
	r      *dgisend.Reporter
	offset time.Duration
}

func (d directReports) DailyReports(ctx context.Context, now time.Time) ([]cfe.DailyReportState, error) {
	return d.r.Days(ctx, now.Add(d.offset))
}

// EnvTestReportClock is a test hook for tests over the real binaries: a
// duration (Go syntax, "25h") the daily report's clock runs ahead of the
// machine's, so that a test crosses midnight without waiting; with it the
// reporter also passes every second and reads DGI's state every two. The
// agent logs a warning when it is set. Nothing else uses it.
const EnvTestReportClock = "CFE_AGENT_TEST_REPORT_CLOCK"

// testReportOffset reads EnvTestReportClock (0 when unset or unreadable).
func testReportOffset(a *Agent) time.Duration {
	v := os.Getenv(EnvTestReportClock)
	if v == "" {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		a.Log.Warn("ignoring an unreadable test clock of the daily report", "env", EnvTestReportClock, "value", v)
		return 0
	}
	a.Log.Warn("TEST HOOK: the daily report's clock runs ahead of the machine's", "env", EnvTestReportClock, "offset", d)
	return d
}

// reporterConfig is the reporter's configuration over a's store and
// profile (without DGI or Build), and the test clock's offset.
func reporterConfig(a *Agent) (dgisend.ReporterConfig, time.Duration, error) {
	since, err := a.Profile.DGI.ReportsSince()
	if err != nil {
		return dgisend.ReporterConfig{}, 0, cfe.Errorf(cfe.EINVALID, "dgi.reportes_desde: %v", err)
	}
	cfg := dgisend.ReporterConfig{Store: a.DB, Since: since, Logger: a.Log.With("component", "dgi-report")}
	offset := testReportOffset(a)
	if offset != 0 {
		cfg.Now = func() time.Time { return time.Now().Add(offset) }
		cfg.Poll, cfg.Check, cfg.Retry = time.Second, 2*time.Second, time.Second
	}
	return cfg, offset, nil
}

// newDailyReports sets a.ReportDays in direct mode (Open): the days' states,
// read from the store whether or not the reporter runs.
func newDailyReports(a *Agent) {
	if !a.Profile.DGI.Direct() {
		return
	}
	cfg, offset, err := reporterConfig(a)
	if err != nil {
		a.ReportError = cfe.ErrorMessage(err)
		return
	}
	a.ReportDays = directReports{r: dgisend.NewReporter(cfg), offset: offset}
}

// newReporter returns the direct-mode reporter of a serving agent, nil
// when direct mode does not run (no DGI client) or no report can be built
// (a.ReportError says why).
func newReporter(a *Agent) *dgisend.Reporter {
	if a.DGIClient == nil || a.ReportError != "" {
		return nil
	}
	build, err := a.signedReport()
	if err != nil {
		a.ReportError = cfe.ErrorMessage(err)
		a.Log.Error("direct mode cannot build the daily report: no daily report is sent", "err", err)
		return nil
	}
	cfg, offset, _ := reporterConfig(a)
	cfg.DGI, cfg.Build = a.DGIClient, build
	a.Reporter = dgisend.NewReporter(cfg)
	a.ReportDays = directReports{r: a.Reporter, offset: offset}
	return a.Reporter
}

// reportState reads the days' reports for the state, and why the next one
// is not sent ("" when nothing is held back).
func reportState(ctx context.Context, a *Agent, now time.Time) ([]cfe.DailyReportState, string, error) {
	if a.ReportDays == nil {
		return nil, a.ReportError, nil
	}
	days, err := a.ReportDays.DailyReports(ctx, now)
	if err != nil {
		return nil, "", err
	}
	note := a.ReportError
	if r := a.Reporter; r != nil && note == "" {
		st := r.Status()
		note = st.LastError
		if note == "" {
			note = st.Waiting
		}
	}
	return days, note, nil
}
