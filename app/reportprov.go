package app

import (
	"context"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/hosted"
)

// Provider mode's daily report (docs/reporte-diario-proveedor.md): the
// hosted service builds and sends one report per RUC and day from every
// till's CFEs and annulled numbers, so the agent delivers its annulled
// numbers to it (hosted.AnnulledDeliverer, over the store's outbox of
// annulled numbers) and reads the reports' states back
// (hosted.ReportStates), which /state, the status page, the tray and doctor
// read through DailyReports as in direct mode.

// providerReports is DailyReports in provider mode: the states the hosted
// service last reported, newest day first (read every poll, never while a
// request waits).
type providerReports struct{ r *hosted.ReportStates }

func (p providerReports) DailyReports(ctx context.Context, _ time.Time) ([]cfe.DailyReportState, error) {
	return p.r.States(ctx)
}

// newProviderReports sets up provider mode's side of the daily report on a
// serving agent: a.ReportDays (the states), a.ReportStates and
// a.AnnulledDeliverer, which the caller runs. Nothing in direct mode or
// without a hosted service.
func newProviderReports(a *Agent) (*hosted.ReportStates, *hosted.AnnulledDeliverer) {
	if a.Profile.DGI.Direct() || a.Hosted == nil {
		return nil, nil
	}
	// The profile's pace of reading from the provider, when set: annulled
	// numbers are looked for at that pace (a request only when one waits),
	// the reports' states read ten times slower (the default 30 s makes
	// hosted's 5 minutes), so that they cost the key's rate limit little.
	poll := a.Profile.DGI.ConsultaProveedor
	log := a.Log.With("component", "dgi-report-provider")
	a.ReportStates = hosted.NewReportStates(hosted.ReportStatesConfig{Client: a.Hosted, Poll: 10 * poll, Logger: log})
	a.ReportDays = providerReports{r: a.ReportStates}
	a.AnnulledDeliverer = hosted.NewAnnulledDeliverer(hosted.AnnulledDelivererConfig{Outbox: a.DB, Client: a.Hosted, Poll: poll, Logger: log})
	return a.ReportStates, a.AnnulledDeliverer
}

// providerReportNote is why provider mode's reports may not add up or be
// known: annulled numbers not delivered, or the states not read ("" when
// all is well).
func providerReportNote(a *Agent) string {
	if d := a.AnnulledDeliverer; d != nil {
		if msg := d.Status().LastError; msg != "" {
			return msg
		}
	}
	if r := a.ReportStates; r != nil {
		return r.LastError()
	}
	return ""
}

// providerReports reads the reports' states the hosted service last
// reported (none while the agent does not serve).
func (a *Agent) providerReports(ctx context.Context) ([]cfe.DailyReportState, error) {
	if a.ReportDays == nil {
		return nil, nil
	}
	return a.ReportDays.DailyReports(ctx, time.Time{})
}
