package localapi

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"strconv"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/throttle"
)

// The LAN throttle's limits (internal/throttle). Failures are wrong or
// missing tokens; each tier earns its tries back over FailureWindow (one
// minute by default).
const (
	defaultLANFailures       = 10   // per address
	defaultLANPrefixFailures = 30   // per IPv4 /24 or IPv6 /64
	defaultLANTotalFailures  = 60   // over all LAN callers: the ceiling
	defaultLANThrottleMax    = 4096 // addresses tracked, and prefixes tracked
	lanTrustedMax            = 1024 // addresses and prefixes trusted
	lanTrustFor              = 24 * time.Hour
)

// errThrottled is the cause of a request refused because its address sent
// too many wrong tokens (429).
var errThrottled = errors.New("too many failed authentications")

// newLANThrottle returns the throttle of wrong LAN tokens configured by lan.
//
// Each address may send 10 wrong or missing tokens without pause, then earns
// one try every 6 s; each IPv4 /24 or IPv6 /64 30, then one every 2 s; all
// LAN callers together 60, then one a second: whatever number of addresses
// and prefixes a guesser has, it checks at most about 60 tokens a minute
// (120 in its first minute), and waits for the rest.
//
// The ceiling and a terminal with the right token: a caller whose tiers are
// out of tries is refused (429) whatever it presents, before its token is
// looked at, so that a guesser learns nothing more by sending the right token
// among wrong ones. Were that rule kept for the ceiling alone, a guesser on
// other machines would stop every till of the shop. So the ceiling and the
// prefix tier hold only callers that have not shown they know a token: an
// address that presented a valid token in the last 24 hours is held by its
// own address tier only, and the other addresses of its /24 or /64 by their
// address and prefix tiers, not by the ceiling (throttle.Limits.TrustFor).
// A guesser cannot earn that trust without a token; one that spoofs a
// trusted address, or sits in a trusted prefix, gets that address's 10 or
// that prefix's 30 tries a minute, as before. What the rule costs: a
// terminal that has not presented its token since the agent started (or in
// 24 hours), at a new address in a new prefix, waits with the guesser's
// callers while the ceiling is reached.
func newLANThrottle(lan LANConfig) *throttle.Throttle {
	return throttle.New(throttle.Limits{
		Failures:       cmp.Or(lan.MaxFailures, defaultLANFailures),
		Window:         lan.FailureWindow,
		MaxAddrs:       defaultLANThrottleMax,
		PrefixFailures: cmp.Or(lan.PrefixFailures, defaultLANPrefixFailures),
		MaxPrefixes:    defaultLANThrottleMax,
		TotalFailures:  cmp.Or(lan.TotalFailures, defaultLANTotalFailures),
		TrustFor:       lanTrustFor,
		MaxTrusted:     lanTrustedMax,
	})
}

// lanThrottled answers 429 with Retry-After, and returns true, when a tier
// holding the caller's address has no try left (newLANThrottle says which
// tiers hold whom). A throttled caller is refused whatever it presents, a
// valid token included: were a right token let through, a guesser would
// lose nothing by being throttled. Loopback callers never get here.
func (s *Server) lanThrottled(w http.ResponseWriter, r *http.Request) bool {
	a, ok := remoteAddr(r)
	if !ok {
		return false
	}
	v := s.lanFails.Check(a, s.now())
	if v.Blocked() {
		s.refuseThrottled(w, r, a, v)
	}
	return v.Blocked()
}

// refuseThrottled answers 429 with Retry-After for a caller out of tries,
// saying which tier holds it.
func (s *Server) refuseThrottled(w http.ResponseWriter, r *http.Request, a netip.Addr, v throttle.Verdict) {
	secs := throttle.RetryAfter(v.Wait)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	var from string
	switch v.Tier {
	case throttle.Prefix:
		from = "desde esta red (" + throttle.PrefixOf(a).String() + ")"
	case throttle.Total:
		from = "en la red local, desde equipos que no presentaron un token válido en las últimas 24 horas"
	default:
		from = "desde esta dirección"
	}
	s.refuse(w, r, "too many wrong LAN tokens ("+v.Tier.String()+")", &cfe.Error{Code: cfe.EUNAUTHORIZED, Err: errThrottled,
		Message: fmt.Sprintf("demasiados intentos con un token de terminal incorrecto %s; reintente en %d segundos", from, secs),
		Fields:  []cfe.FieldError{{Campo: "Authorization", Mensaje: "verifique el token configurado en la terminal"}}})
}

// lanFailed counts a wrong or missing LAN token from the caller's address
// and reports whether a tier holding it had no try left for it: then it has
// answered 429, and the caller answers nothing (a wrong token is told apart
// from a right one only within the caller's tries).
func (s *Server) lanFailed(w http.ResponseWriter, r *http.Request) bool {
	a, ok := remoteAddr(r)
	if !ok {
		return false
	}
	now := s.now()
	v := s.lanFails.Failure(a, now)
	if v.Blocked() {
		s.refuseThrottled(w, r, a, v)
		return true
	}
	s.logExhausted(r, a, v.Emptied, now)
	return false
}

// lanPassed records that the caller presented a valid token: its address
// and prefix are trusted (newLANThrottle).
func (s *Server) lanPassed(r *http.Request) {
	if a, ok := remoteAddr(r); ok {
		s.lanFails.Success(a, s.now())
	}
}

// logExhausted logs the tiers a counted failure used the last try of: the
// caller's address and its prefix each time, the ceiling at most once per
// failure window (under attack it empties at every try it earns back).
func (s *Server) logExhausted(r *http.Request, a netip.Addr, emptied throttle.Tiers, now time.Time) {
	if emptied.Has(throttle.Address) {
		s.log.LogAttrs(r.Context(), slog.LevelWarn, "LAN caller throttled after wrong tokens",
			slog.String("remote", a.String()))
	}
	if emptied.Has(throttle.Prefix) {
		s.log.LogAttrs(r.Context(), slog.LevelWarn, "LAN network throttled after wrong tokens",
			slog.String("prefix", throttle.PrefixOf(a).String()), slog.String("remote", a.String()))
	}
	if !emptied.Has(throttle.Total) {
		return
	}
	window := s.lanFails.Limits().Window
	last := s.lanCeilingLogged.Load()
	if last != 0 && now.UnixNano()-last < int64(window) || !s.lanCeilingLogged.CompareAndSwap(last, now.UnixNano()) {
		return
	}
	s.log.LogAttrs(r.Context(), slog.LevelWarn,
		"LAN failed-token ceiling reached: callers without a recent valid token wait",
		slog.Int("failures", s.lanFails.Limits().TotalFailures), slog.Duration("window", window),
		slog.String("remote", a.String()))
}

// remoteAddr is the caller's IP address, IPv4-mapped IPv6 as IPv4.
func remoteAddr(r *http.Request) (netip.Addr, bool) {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}, false
	}
	return ap.Addr().Unmap(), true
}
