package localapi

import (
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

// Default throttle of wrong LAN tokens: 10 failures at once per address,
// then one more try every 6 s; at most 4096 addresses tracked.
const (
	DefaultLANFailures    = 10
	DefaultLANFailWindow  = time.Minute
	defaultLANThrottleMax = 4096
)

// errThrottled is the cause of a request refused because its address sent
// too many wrong tokens (429).
var errThrottled = errors.New("too many failed authentications")

// newLANThrottle returns the throttle of wrong LAN tokens configured by lan.
func newLANThrottle(lan LANConfig) *throttle.Throttle {
	l := throttle.Limits{Failures: lan.MaxFailures, Window: lan.FailureWindow, MaxAddrs: defaultLANThrottleMax}
	if l.Failures <= 0 {
		l.Failures = DefaultLANFailures
	}
	if l.Window <= 0 {
		l.Window = DefaultLANFailWindow
	}
	return throttle.New(l)
}

// lanThrottled answers 429 with Retry-After, and returns true, when the
// caller's address has used up its tries of LAN tokens. A throttled address
// is refused whatever it presents, a valid token included: were a right
// token let through, a guesser would lose nothing by being throttled. Other
// addresses are not affected, and loopback callers never get here.
func (s *Server) lanThrottled(w http.ResponseWriter, r *http.Request) bool {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	retry, blocked := s.lanFails.Blocked(ap.Addr(), s.now())
	if !blocked {
		return false
	}
	secs := max(int((retry+time.Second-1)/time.Second), 1)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	s.refuse(w, r, "too many wrong LAN tokens", &cfe.Error{Code: cfe.EUNAUTHORIZED, Err: errThrottled,
		Message: fmt.Sprintf("demasiados intentos con un token de terminal incorrecto desde esta dirección; reintente en %d segundos", secs),
		Fields:  []cfe.FieldError{{Campo: "Authorization", Mensaje: "verifique el token configurado en la terminal"}}})
	return true
}

// lanFailed counts a wrong or missing LAN token from the caller's address.
func (s *Server) lanFailed(r *http.Request) {
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		s.lanFails.Fail(ap.Addr(), s.now())
		if _, blocked := s.lanFails.Blocked(ap.Addr(), s.now()); blocked {
			s.log.LogAttrs(r.Context(), slog.LevelWarn, "LAN caller throttled after wrong tokens",
				slog.String("remote", ap.Addr().Unmap().String()))
		}
	}
}
