package app

import (
	"context"
	"time"

	"github.com/shopspring/decimal"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/dgi"
	"github.com/cfe-agent/cfe-agent/dgisend"
	"github.com/cfe-agent/cfe-agent/health"
	"github.com/cfe-agent/cfe-agent/hosted"
	"github.com/cfe-agent/cfe-agent/profiles"
	"github.com/cfe-agent/cfe-agent/signer"
)

// Direct mode (the profile's dgi.modo: directo): the agent sends its
// envelopes to DGI itself (dgisend) and reports each CFE's state at DGI.
//
// The hosted service's outbox keeps working when the profile names a
// hosted service: the service keeps the company's copy of every CFE (its
// search, PDFs, e-mails) and is, in direct mode, not the one that sends to
// DGI. Sending to DGI starts (store.DB.DGIBegin) at the first CFE the hosted
// service has not accepted yet, before the deliverer runs: a company that
// turns direct mode on leaves what its provider already holds to the
// provider.

// dgiListed is how many rejected and overdue CFEs the state names.
const dgiListed = 5

// NewDGIClient returns the client of DGI's web services of the profile's
// dgi block (nil in provider mode), signing with the company's
// credentials. Without a certificate in the block it pins the one shipped
// for the environment (profiles.DGI.OwnHosts).
func NewDGIClient(p profiles.Profile, creds *signer.Credentials) (*dgi.Client, error) {
	d := p.DGI
	if !d.Direct() {
		return nil, nil
	}
	cfg := dgi.Config{Environment: dgi.Test, ReceptionURL: d.URLRecepcion, QueryURL: d.URLConsultas, Credentials: creds}
	if p.Environment == profiles.Produccion {
		cfg.Environment = dgi.Production
	}
	pemBytes, err := d.CertificatePEM()
	if err != nil {
		return nil, cfe.Errorf(cfe.EINVALID, "dgi.certificado: %v", err)
	}
	if pemBytes != nil {
		certs, err := dgi.ParseCertificates(pemBytes)
		if err != nil {
			return nil, cfe.Errorf(cfe.EINVALID, "dgi.certificado: %v", err)
		}
		cfg.DGICertificate = certs[0]
	}
	return dgi.New(cfg)
}

// newDGISender returns the direct-mode sender of a serving agent, nil in
// provider mode. It begins direct sending in the store before it returns.
// The store's commit notification wakes it (wake). A sender that cannot be
// made (no certificate, DGI's certificate expired, the store refuses) does
// not stop the agent from signing: why is kept in a.DGIError, which the
// state reports.
func newDGISender(ctx context.Context, a *Agent, wake <-chan struct{}) *dgisend.Sender {
	if !a.Profile.DGI.Direct() {
		return nil
	}
	if a.Signer == nil {
		if _, err := a.DB.DGIBegin(ctx); err != nil {
			a.Log.Error("direct mode to DGI cannot begin in the store", "err", err)
		}
		a.DGIError = "no hay un certificado de la empresa utilizable para firmar los mensajes a DGI"
		a.Log.Warn("direct mode to DGI without a usable certificate: nothing is sent to DGI", "err", a.CertErr)
		return nil
	}
	// Begun first: the state counts what waits for DGI even when the
	// client cannot be made.
	_, err := a.DB.DGIBegin(ctx)
	var client *dgi.Client
	if err == nil {
		client, err = NewDGIClient(a.Profile, a.Signer.Credentials())
	}
	if err != nil {
		a.DGIError = cfe.ErrorMessage(err)
		a.Log.Error("direct mode to DGI cannot start: nothing is sent to DGI", "err", err)
		return nil
	}
	a.DGIClient = client
	a.Log.Info("sending signed CFEs to DGI directly", "reception", a.Profile.DGI.URLRecepcion, "queries", a.Profile.DGI.URLConsultas)
	a.DGISender = dgisend.New(dgisend.Config{Store: a.DB, DGI: client, Pace: a.Profile.DGI.PausaEntreSobres, Wake: wake,
		Logger: a.Log.With("component", "dgi")})
	return a.DGISender
}

// newDGIReader returns provider mode's reader of DGI's verdicts (the hosted
// service sends to DGI and reports each CFE's state, docs/dgi-provider.md),
// nil in direct mode or without a hosted service.
func newDGIReader(ctx context.Context, a *Agent) *hosted.DGIReader {
	if a.Profile.DGI.Direct() || a.Hosted == nil {
		return nil
	}
	// Begun before the deliverer runs: what it delivers from now on is
	// awaited, what was delivered before is not.
	if err := a.DB.DGIProviderBegin(ctx); err != nil {
		a.Log.Error("provider mode cannot begin reading DGI's verdicts in the store", "err", err)
		return nil
	}
	a.DGIReader = hosted.NewDGIReader(hosted.DGIReaderConfig{Store: a.DB, Client: a.Hosted, Poll: a.Profile.DGI.ConsultaProveedor,
		Logger: a.Log.With("component", "dgi-provider")})
	return a.DGIReader
}

// dgiState reads the DGI part of the state report. In provider mode it is
// what the hosted service reported of the delivered CFEs (nil while it
// reported nothing: a service that does not report DGI's states).
func dgiState(ctx context.Context, a *Agent, now time.Time) (*health.DGIStatus, error) {
	if !a.Profile.DGI.Direct() {
		return providerDGIState(ctx, a, now)
	}
	counts, err := a.DB.DGICounts(ctx)
	if err != nil {
		return nil, err
	}
	st := &health.DGIStatus{Counts: counts, UrgentAfter: a.Profile.DGI.UrgentAfterOrDefault()}
	if counts.Rechazados > 0 {
		if st.Rejections, err = a.DB.DGIRejections(ctx, 4*dgiListed); err != nil {
			return nil, err
		}
	}
	if counts.Observados > 0 {
		if st.Observations, err = a.DB.DGIObservations(ctx, 4*dgiListed); err != nil {
			return nil, err
		}
	}
	if counts.Pendientes+counts.Desconocidos > 0 {
		tax := taxConfig(a.Profile.Tax)
		capPesos := tax.TopeUI.Mul(tax.ValorUI)
		urgent := func(t cfe.Type, total decimal.Decimal) bool { return cfe.UrgentForDGI(t, total.GreaterThan(capPesos)) }
		if st.Overdue, st.OverdueTotal, err = a.DB.DGIOverdue(ctx, now.Add(-st.UrgentAfter), urgent, dgiListed); err != nil {
			return nil, err
		}
	}
	if s := a.DGISender; s != nil {
		st.LastError = s.Status().LastError
	}
	st.Stopped = a.DGIError
	if st.Reports, st.ReportNote, err = reportState(ctx, a, now); err != nil {
		return nil, err
	}
	return st, nil
}

// providerDGIState is dgiState in provider mode: the counts and rejections
// the hosted service reported (no overdue list: the provider decides when
// it sends, and the agent only learns it after the fact).
func providerDGIState(ctx context.Context, a *Agent, now time.Time) (*health.DGIStatus, error) {
	counts, err := a.DB.DGIProviderCounts(ctx)
	if err != nil {
		return nil, err
	}
	reports, err := a.providerReports(ctx)
	if err != nil {
		return nil, err
	}
	refused, err := annulledRefused(ctx, a, now)
	if err != nil {
		return nil, err
	}
	if counts == (cfe.DGICounts{}) && len(reports) == 0 && len(refused) == 0 {
		return nil, nil
	}
	st := &health.DGIStatus{Counts: counts, UrgentAfter: a.Profile.DGI.UrgentAfterOrDefault(), Reports: reports,
		ReportNote: providerReportNote(a), Provider: true, AnnulledRefused: refused}
	if counts.Rechazados > 0 {
		if st.Rejections, err = a.DB.DGIRejections(ctx, 4*dgiListed); err != nil {
			return nil, err
		}
	}
	if counts.Observados > 0 {
		if st.Observations, err = a.DB.DGIObservations(ctx, 4*dgiListed); err != nil {
			return nil, err
		}
	}
	if r := a.DGIReader; r != nil {
		st.LastError = r.LastError()
	}
	return st, nil
}

// annulledRefusedDays is how far back /state looks for annulled numbers
// the hosted service refused.
const annulledRefusedDays = 30

// annulledRefused returns the annulled numbers of the last
// annulledRefusedDays that the hosted service refused for good.
func annulledRefused(ctx context.Context, a *Agent, now time.Time) ([]health.AnnulledRefusal, error) {
	today := cfe.DateOf(now.In(cfe.Montevideo))
	rs, err := a.DB.AnnulledRefusals(ctx, today.AddDays(-annulledRefusedDays), today)
	if err != nil {
		return nil, err
	}
	out := make([]health.AnnulledRefusal, 0, len(rs))
	for _, r := range rs {
		out = append(out, health.AnnulledRefusal{Range: r.Range, Reason: r.Reason})
	}
	return out, nil
}
