package auth

import (
	"log/slog"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// loginGuard protects the login endpoint (interface §8.3). It counts failed
// logins in sliding windows per client address, per network prefix (IPv4
// /24, IPv6 /64) and per normalized identifier. Address and prefix counters
// block further attempts with 429; the identifier counter only raises an
// alert when the failures come from several networks, so that an attacker
// spread over many networks cannot lock a user out. Successful logins count
// nothing. State lives in memory: a restart forgets it.
type loginGuard struct {
	limits   LoginLimits
	counters *Counters
	log      *slog.Logger

	mu      sync.Mutex
	byIP    map[netip.Addr][]time.Time
	byNet   map[netip.Prefix][]time.Time
	byIdent map[string][]identFailure
	alerted map[string]time.Time // identifier → when its alert was raised
	sweeps  int
}

type identFailure struct {
	at  time.Time
	net netip.Prefix
}

func newLoginGuard(l LoginLimits, m *Counters, log *slog.Logger) *loginGuard {
	return &loginGuard{limits: l, counters: m, log: log,
		byIP: map[netip.Addr][]time.Time{}, byNet: map[netip.Prefix][]time.Time{},
		byIdent: map[string][]identFailure{}, alerted: map[string]time.Time{}}
}

// networkOf returns the /24 (IPv4) or /64 (IPv6) holding a.
func networkOf(a netip.Addr) netip.Prefix {
	bits := 64
	if a.Is4() {
		bits = 24
	}
	p, _ := a.Prefix(bits)
	return p
}

// blocked reports whether a login attempt from a must be refused now, and
// for how long. It does not say which limit was reached.
func (g *loginGuard) blocked(a netip.Addr, now time.Time) (time.Duration, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	retry := max(
		g.wait(recent(g.byIP[a], now, g.limits.Window), g.limits.PerIP, now),
		g.wait(recent(g.byNet[networkOf(a)], now, g.limits.Window), g.limits.PerPrefix, now))
	if retry > 0 {
		g.counters.loginBlocked.Add(1)
		return retry, true
	}
	return 0, false
}

// wait is how long until fewer than limit of the failures ts remain in the window.
func (g *loginGuard) wait(ts []time.Time, limit int, now time.Time) time.Duration {
	if limit <= 0 || len(ts) < limit {
		return 0
	}
	return ts[len(ts)-limit].Add(g.limits.Window).Sub(now)
}

// fail records a failed login for identifier ident from a.
func (g *loginGuard) fail(a netip.Addr, ident string, now time.Time) {
	g.counters.loginFailures.Add(1)
	g.mu.Lock()
	defer g.mu.Unlock()
	w := g.limits.Window
	n := networkOf(a)
	g.byIP[a] = keepLast(append(recent(g.byIP[a], now, w), now), g.limits.PerIP)
	g.byNet[n] = keepLast(append(recent(g.byNet[n], now, w), now), g.limits.PerPrefix)

	fs := g.byIdent[ident]
	for len(fs) > 0 && now.Sub(fs[0].at) >= w {
		fs = fs[1:]
	}
	fs = keepLast(append(fs, identFailure{at: now, net: n}), max(g.limits.AlertFailures, 1))
	g.byIdent[ident] = fs
	g.maybeAlert(ident, fs, now)

	if g.sweeps++; g.sweeps%1024 == 0 {
		g.sweep(now)
	}
}

// maybeAlert raises one alert per window for an identifier whose recent
// failures reach the threshold from enough distinct networks.
func (g *loginGuard) maybeAlert(ident string, fs []identFailure, now time.Time) {
	if len(fs) < g.limits.AlertFailures {
		return
	}
	nets := map[netip.Prefix]bool{}
	for _, f := range fs {
		nets[f.net] = true
	}
	if len(nets) < g.limits.AlertNetworks {
		return
	}
	if last, ok := g.alerted[ident]; ok && now.Sub(last) < g.limits.Window {
		return
	}
	g.alerted[ident] = now
	g.counters.loginAlerts.Add(1)
	g.log.Warn("distributed login failures against one identifier",
		"identifier", ident, "failures", len(fs), "networks", len(nets), "window", g.limits.Window.String())
}

// sweep forgets entries with no failure left in the window.
func (g *loginGuard) sweep(now time.Time) {
	w := g.limits.Window
	for k, ts := range g.byIP {
		if len(recent(ts, now, w)) == 0 {
			delete(g.byIP, k)
		}
	}
	for k, ts := range g.byNet {
		if len(recent(ts, now, w)) == 0 {
			delete(g.byNet, k)
		}
	}
	for k, fs := range g.byIdent {
		if now.Sub(fs[len(fs)-1].at) >= w {
			delete(g.byIdent, k)
		}
	}
	for k, at := range g.alerted {
		if now.Sub(at) >= w {
			delete(g.alerted, k)
		}
	}
}

// recent drops the times that fell out of the window ending at now.
func recent(ts []time.Time, now time.Time, w time.Duration) []time.Time {
	for len(ts) > 0 && now.Sub(ts[0]) >= w {
		ts = ts[1:]
	}
	return ts
}

// keepLast keeps at most n of the newest entries (they are all a limit needs).
func keepLast[T any](s []T, n int) []T {
	if n > 0 && len(s) > n {
		return append(s[:0:0], s[len(s)-n:]...)
	}
	return s
}

// lastForwarded returns the last address of X-Forwarded-For: the one the
// trusted proxy appended.
func lastForwarded(values []string) (netip.Addr, bool) {
	if len(values) == 0 {
		return netip.Addr{}, false
	}
	hops := strings.Split(values[len(values)-1], ",")
	a, err := netip.ParseAddr(strings.TrimSpace(hops[len(hops)-1]))
	if err != nil {
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}
