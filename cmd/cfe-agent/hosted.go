package main

import (
	"github.com/cfe-agent/cfe-agent/app"
	"github.com/cfe-agent/cfe-agent/hosted"
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
