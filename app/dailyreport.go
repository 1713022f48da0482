package app

import (
	"context"
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
// keeps, from the first day the agent reports on to yesterday.
type directReports struct{ r *dgisend.Reporter }

func (d directReports) DailyReports(ctx context.Context, now time.Time) ([]cfe.DailyReportState, error) {
	return d.r.Days(ctx, now)
}

// reporterConfig is the reporter's configuration over a's store and
// profile (without DGI, Build or a clock).
func reporterConfig(a *Agent) (dgisend.ReporterConfig, error) {
	since, err := a.Profile.DGI.ReportsSince()
	if err != nil {
		return dgisend.ReporterConfig{}, cfe.Errorf(cfe.EINVALID, "dgi.reportes_desde: %v", err)
	}
	return dgisend.ReporterConfig{Store: a.DB, Since: since, Logger: a.Log.With("component", "dgi-report")}, nil
}

// newDailyReports sets a.Reports in direct mode (Open): the days' states,
// read from the store whether or not the reporter runs.
func newDailyReports(a *Agent) {
	if !a.Profile.DGI.Direct() {
		return
	}
	cfg, err := reporterConfig(a)
	if err != nil {
		a.ReportError = cfe.ErrorMessage(err)
		return
	}
	a.Reports = directReports{r: dgisend.NewReporter(cfg)}
}

// newReporter returns the direct-mode reporter of a serving agent, nil
// when direct mode does not run (no DGI client) or no report can be built
// (a.ReportError says why).
func newReporter(a *Agent) *dgisend.Reporter {
	if a.DGIClient == nil || a.ReportError != "" {
		return nil
	}
	build := a.signedReport()
	if build == nil {
		a.ReportError = "este agente no sabe armar el reporte diario"
		a.Log.Error("direct mode without a daily report builder: no daily report is sent")
		return nil
	}
	cfg, _ := reporterConfig(a)
	cfg.DGI, cfg.Build = a.DGIClient, build
	a.Reporter = dgisend.NewReporter(cfg)
	return a.Reporter
}

// reportState reads the days' reports for the state, and why the next one
// is not sent ("" when nothing is held back).
func reportState(ctx context.Context, a *Agent, now time.Time) ([]cfe.DailyReportState, string, error) {
	if a.Reports == nil {
		return nil, a.ReportError, nil
	}
	days, err := a.Reports.DailyReports(ctx, now)
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
