package app

import (
	"errors"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"syscall"
	"time"

	"github.com/cfe-agent/cfe-agent/localapi/localclient"
	"github.com/cfe-agent/cfe-agent/profiles"
)

// The technician's commands that change the store (backup, recuperar) go
// through the running agent when there is one, since it holds the store:
// its run file names where it serves and its admin token.

// LocalBaseURL turns the base URL of an agent listening on every interface
// (0.0.0.0, [::]) into its loopback address, which every system can dial.
func LocalBaseURL(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return base
	}
	if ip, err := netip.ParseAddr(u.Hostname()); err == nil && ip.IsUnspecified() {
		host := "127.0.0.1"
		if ip.Is6() {
			host = "::1"
		}
		u.Host = net.JoinHostPort(host, u.Port())
	}
	return u.String()
}

// adminClient is the client of the active profile's running agent with the
// admin token of its run file, whose requests wait at most timeout; ok is
// false when no run file names an agent with one.
func adminClient(dataDir string, cfg *profiles.Config, timeout time.Duration) (c *localclient.Client, info RunInfo, ok bool, err error) {
	info, ok = ReadRunFile(dataDir, cfg.Active)
	if !ok || info.AdminToken == "" {
		return nil, info, false, nil
	}
	co := localclient.Options{AdminToken: info.AdminToken, HTTPClient: &http.Client{Timeout: timeout}}
	if p, ok := cfg.ActiveProfile(); ok && p.LAN.Enabled && len(p.LAN.Tokens) > 0 {
		// An agent on a LAN address sees this machine's own address,
		// not loopback: it wants a terminal token before the admin one.
		co.Token = p.LAN.Tokens[0].Value()
	}
	c, err = localclient.New(LocalBaseURL(info.BaseURL), co)
	return c, info, err == nil, err
}

// agentGone reports whether err is the refusal of a connection to an agent
// that a stale run file names: the agent is gone and the store is free.
func agentGone(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }
