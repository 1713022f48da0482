package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/health"
	"github.com/cfe-agent/cfe-agent/hosted"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
	"github.com/cfe-agent/cfe-agent/profiles"
)

// NewHostedClient returns the client of the profile's hosted service, or nil
// when the profile names none (the agent then works offline only).
func NewHostedClient(h profiles.Hosted, log *slog.Logger) (*hosted.Client, error) {
	if h.BaseURL == "" {
		return nil, nil
	}
	return hosted.New(hosted.Config{
		BaseURL:  h.BaseURL,
		APIKey:   h.APIKey.Value(),
		Username: h.Username,
		Secret:   h.Secret.Value(),
		Timeout:  h.Timeout,
		Logger:   log.With("component", "hosted"),
	})
}

// newDeliverer returns the outbox deliverer of a serving agent, nil without
// a hosted service. Without credentials it sends nothing and only keeps the
// service's reachability known; signed CFEs stay in the outbox. The store's
// commit notification wakes it (wake, from store.DB.WatchCommits), so a
// signed CFE leaves at once instead of at the next poll.
func newDeliverer(a *Agent, wake <-chan struct{}) *hosted.Deliverer {
	if a.Hosted == nil {
		a.Log.Warn("no hosted service in the profile: signed CFEs stay in the local outbox")
		return nil
	}
	if a.Hosted.Auth() == hosted.AuthNone {
		a.Log.Warn("no hosted credentials in the profile (api_key, or username and secret): signed CFEs stay in the local outbox")
	} else {
		a.Log.Info("delivering signed CFEs to the hosted service", "url", a.Hosted.BaseURL().String(), "auth", a.Hosted.Auth())
	}
	log := a.Log.With("component", "outbox")
	a.Deliverer = hosted.NewDeliverer(hosted.DelivererConfig{Outbox: newLoggedOutbox(a.DB, log), Client: a.Hosted,
		Wake: wake, Logger: log})
	return a.Deliverer
}

// hostedState is the hosted part of the agent's state for /state: what the
// client learnt from its last requests and probes, and the deliverer's last
// error when the client has none.
func hostedState(a *Agent) *health.Hosted {
	if a.Hosted == nil {
		return nil
	}
	st := a.Hosted.Status()
	h := &health.Hosted{BaseURL: st.URL, CheckedAt: st.CheckedAt, Reachable: st.Reachable, Auth: st.Auth,
		LastError: st.LastError, WaitUntil: st.WaitUntil}
	if d := a.Deliverer; d != nil && h.LastError == "" {
		h.LastError = d.Status().LastError
	}
	if r := st.RateLimit; r != nil {
		h.RateLimit = &apitype.RateLimit{LimitMinute: r.LimitMinute, RemainingMinute: r.RemainingMinute,
			LimitHour: r.LimitHour, RemainingHour: r.RemainingHour, ObservedAt: r.ObservedAt}
	}
	return h
}

// Bounds of settleNumbering.
const (
	// numberingCheckTimeout bounds the check the agent makes before it
	// serves: a service that does not answer in time is asked again in the
	// background while numbering is held, and not at all otherwise.
	numberingCheckTimeout = 10 * time.Second
	// numberingRetry is the pause between attempts while numbering is held.
	numberingRetry = 15 * time.Second
)

// settleNumbering asks the hosted service for the last number it holds of
// every (type, serie) of the store's ranges and raises the store's counters
// to them (store.ResumeNumbering), ending a hold. It runs before the agent
// serves: a store behind the service (an old backup put back, a lost journal)
// then resumes above what the service already has. Without a hosted service
// or credentials there is nothing to ask.
func (a *Agent) settleNumbering(ctx context.Context) error {
	if a.Hosted == nil || a.Hosted.Auth() == hosted.AuthNone {
		return nil
	}
	all, err := a.DB.Ranges(ctx)
	if err != nil {
		return err
	}
	// Contingency ranges (2xx) are the paper forms': never numbered, they
	// have no counter to raise, and asking for them would cost 21 searches.
	ranges := make([]cfe.CAERange, 0, len(all))
	for _, r := range all {
		if info, _ := r.Type.Info(); !info.Contingency {
			ranges = append(ranges, r)
		}
	}
	lasts, err := a.Hosted.LastNumbers(ctx, ranges, cfe.DateOf(time.Now().In(cfe.Montevideo)))
	if err != nil {
		return err
	}
	for _, l := range lasts {
		a.Log.Info("the hosted service's last number", "type", int(l.Type), "serie", l.Serie, "number", l.Last)
	}
	return a.DB.ResumeNumbering(ctx, "the hosted service "+a.Hosted.BaseURL().String(), lasts)
}

// checkNumbering runs settleNumbering once, bounded, before the agent
// serves. While the store stays held it returns a function that keeps
// asking in the background until the service answers or ctx ends; nil
// otherwise.
func (a *Agent) checkNumbering(ctx context.Context) func(context.Context) {
	cctx, cancel := context.WithTimeout(ctx, numberingCheckTimeout)
	err := a.settleNumbering(cctx)
	cancel()
	if err != nil {
		a.Log.Warn("could not ask the hosted service where numbering stands", "err", err)
	}
	if a.DB.NumberingHold() == nil {
		return nil
	}
	a.Log.Warn("numbering is held: signing is refused until the hosted service answers or a technician runs \"cfe-agent cae used-elsewhere\"",
		"reason", a.DB.NumberingHold().Reason)
	return func(ctx context.Context) {
		t := time.NewTicker(numberingRetry)
		defer t.Stop()
		for a.DB.NumberingHold() != nil {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			if err := a.settleNumbering(ctx); err != nil {
				a.Log.Warn("could not ask the hosted service where numbering stands", "err", err)
				continue
			}
			a.Log.Info("numbering known from the hosted service: signing resumes")
		}
	}
}
