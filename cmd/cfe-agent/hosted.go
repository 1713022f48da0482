package main

import (
	"context"
	"log/slog"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/hosted"
	"github.com/cfe-agent/cfe-agent/issuer"
	"github.com/cfe-agent/cfe-agent/localapi"
	"github.com/cfe-agent/cfe-agent/profiles"
)

// newHostedClient returns the client of the profile's hosted service, or nil
// when the profile names none (the agent then works offline only).
func newHostedClient(h profiles.Hosted, log *slog.Logger) (*hosted.Client, error) {
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

// hostedParts are the local module's settings for the hosted service: none
// without a client (a nil *hosted.Client must not become a non-nil interface).
func hostedParts(a *agent, cfg *localapi.ServerConfig) {
	if a.hosted == nil {
		return
	}
	cfg.Hosted = a.hosted
	cfg.HostedTransport = hosted.NewTransport(a.profile.Hosted.Timeout)
}

// startDelivery runs the outbox deliverer until ctx ends; the returned
// function waits for it to stop. Without a hosted service there is nothing
// to run and signed CFEs stay in the outbox.
func startDelivery(ctx context.Context, a *agent) (wait func()) {
	switch {
	case a.hosted == nil:
		a.log.Warn("no hosted service in the profile: signed CFEs stay in the local outbox")
		return func() {}
	case a.hosted.Auth() == hosted.AuthNone:
		a.log.Warn("no hosted credentials in the profile (api_key, or username and secret): signed CFEs stay in the local outbox")
		return func() {}
	}
	a.deliverer = hosted.NewDeliverer(hosted.DelivererConfig{Outbox: a.db, Client: a.hosted,
		Logger: a.log.With("component", "outbox")})
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.deliverer.Run(ctx)
	}()
	a.log.Info("delivering signed CFEs to the hosted service", "url", a.hosted.BaseURL().String(), "auth", a.hosted.Auth())
	return func() { <-done }
}

// kickingIssuer wakes the deliverer after each new signature, so a CFE leaves
// for the hosted service at once instead of at the next poll.
type kickingIssuer struct{ a *agent }

func (k kickingIssuer) Issue(ctx context.Context, req *cfe.Request) (*issuer.Result, error) {
	res, err := k.a.issuer.Issue(ctx, req)
	if err == nil && k.a.deliverer != nil && !res.Replayed {
		k.a.deliverer.Kick()
	}
	return res, err
}

// hostedState is the hosted part of the agent's state for /state: what the
// client learnt from its last answers, and the deliverer's last error when
// the client has none.
func hostedState(a *agent) *localapi.HostedState {
	if a.hosted == nil {
		return nil
	}
	st := a.hosted.Status()
	hs := &localapi.HostedState{URL: st.URL, Auth: st.Auth, Reachable: st.Reachable, Contact: st.Contact,
		LastError: st.LastError, WaitUntil: st.WaitUntil}
	if a.deliverer != nil && hs.LastError == "" {
		hs.LastError = a.deliverer.Status().LastError
	}
	if r := st.RateLimit; r != nil {
		hs.RateLimit = &localapi.RateLimit{LimitMinute: r.LimitMinute, RemainingMinute: r.RemainingMinute,
			LimitHour: r.LimitHour, RemainingHour: r.RemainingHour, ObservedAt: r.ObservedAt}
	}
	return hs
}
