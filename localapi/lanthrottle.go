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

// defaultLANThrottleMax caps the addresses the LAN throttle tracks.
const defaultLANThrottleMax = 4096

// errThrottled is the cause of a request refused because its address sent
// too many wrong tokens (429).
var errThrottled = errors.New("too many failed authentications")

// newLANThrottle returns the throttle of wrong LAN tokens configured by lan:
// by default 10 failures at once per address, then one more try every 6 s
// (throttle.New's defaults).
func newLANThrottle(lan LANConfig) *throttle.Throttle {
	return throttle.New(throttle.Limits{Failures: lan.MaxFailures, Window: lan.FailureWindow, MaxAddrs: defaultLANThrottleMax})
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
	if blocked {
		s.refuseThrottled(w, r, retry)
	}
	return blocked
}

// refuseThrottled answers 429 with Retry-After for an address out of tries.
func (s *Server) refuseThrottled(w http.ResponseWriter, r *http.Request, retry time.Duration) {
	secs := throttle.RetryAfter(retry)
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	s.refuse(w, r, "too many wrong LAN tokens", &cfe.Error{Code: cfe.EUNAUTHORIZED, Err: errThrottled,
		Message: fmt.Sprintf("demasiados intentos con un token de terminal incorrecto desde esta dirección; reintente en %d segundos", secs),
		Fields:  []cfe.FieldError{{Campo: "Authorization", Mensaje: "verifique el token configurado en la terminal"}}})
}

// lanFailed counts a wrong or missing LAN token from the caller's address
// and reports whether the address had no try left for it: then it has
// answered 429, and the caller answers nothing (a wrong token is told apart
// from a right one only within the address's tries).
func (s *Server) lanFailed(w http.ResponseWriter, r *http.Request) bool {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	retry, blocked := s.lanFails.Fail(ap.Addr(), s.now())
	if _, out := s.lanFails.Blocked(ap.Addr(), s.now()); out { // this failure used the last try, or found none
		s.log.LogAttrs(r.Context(), slog.LevelWarn, "LAN caller throttled after wrong tokens",
			slog.String("remote", ap.Addr().Unmap().String()))
	}
	if blocked {
		s.refuseThrottled(w, r, retry)
	}
	return blocked
}
