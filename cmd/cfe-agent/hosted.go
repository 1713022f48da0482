package main

import (
	"context"

	"github.com/cfe-agent/cfe-agent/app"
	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/hosted"
	"github.com/cfe-agent/cfe-agent/issuer"
	"github.com/cfe-agent/cfe-agent/localapi"
)

// hostedParts are the local module's settings for the hosted service: none
// without a client (a nil *hosted.Client must not become a non-nil interface).
func hostedParts(a *app.Agent, cfg *localapi.ServerConfig) {
	if a.Hosted == nil {
		return
	}
	cfg.Hosted = a.Hosted
	cfg.HostedTransport = hosted.NewTransport(a.Profile.Hosted.Timeout)
}

// kickingIssuer wakes the deliverer after each new signature, so a CFE leaves
// for the hosted service at once instead of at the next poll.
type kickingIssuer struct{ a *app.Agent }

func (k kickingIssuer) Issue(ctx context.Context, req *cfe.Request) (*issuer.Result, error) {
	res, err := k.a.Issuer.Issue(ctx, req)
	if err == nil && k.a.Deliverer != nil && !res.Replayed {
		k.a.Deliverer.Kick()
	}
	if err == nil && !res.Replayed {
		k.a.Backups.NoteSigned()
	}
	return res, err
}
