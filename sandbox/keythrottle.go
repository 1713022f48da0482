package sandbox

import (
	"cmp"
	"net/http"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/throttle"
)

// KeyFailureLimits throttle invalid API keys per client address: after
// Failures invalid, revoked or other-environment keys without pause, an address
// gets 429 with Retry-After for every key it presents, valid or not, and
// earns one try back every Window/Failures. Other addresses are never
// affected.
type KeyFailureLimits struct {
	Failures int
	Window   time.Duration
}

// DefaultKeyFailureLimits give each zero field of Config.KeyFailureLimits.
var DefaultKeyFailureLimits = KeyFailureLimits{Failures: 20, Window: time.Minute}

// keyThrottleMaxAddrs caps the addresses the key throttle tracks.
const keyThrottleMaxAddrs = 16384

// codeKeyFailures is the error code of an address throttled for invalid keys.
const codeKeyFailures = "api_key_failures_rate_limited"

func newKeyThrottle(l KeyFailureLimits) *throttle.Throttle {
	return throttle.New(throttle.Limits{Failures: cmp.Or(l.Failures, DefaultKeyFailureLimits.Failures),
		Window: cmp.Or(l.Window, DefaultKeyFailureLimits.Window), MaxAddrs: keyThrottleMaxAddrs})
}

// keyThrottled answers 429, and returns true, when the caller's address has
// used up its tries of API keys. A valid key from it waits too: were it let
// through, a guesser would lose nothing by being throttled.
func (s *Server) keyThrottled(w http.ResponseWriter, r *http.Request) bool {
	retry, blocked := s.keyFails.Blocked(s.clientAddr(r), s.now())
	if blocked {
		s.refuseKeyThrottled(w, r, retry)
	}
	return blocked
}

func (s *Server) refuseKeyThrottled(w http.ResponseWriter, r *http.Request, retry time.Duration) {
	s.metrics.keyFailuresBlocked.Add(1)
	writeTooMany(w, r, codeKeyFailures, "demasiadas API keys inválidas desde esta dirección; intente más tarde", retry)
}

// keyFailed counts an API key that did not authenticate (err), and reports
// whether the address had no try left for it: then it has answered 429, so
// that concurrent guesses learn no more outcomes than the address has tries.
func (s *Server) keyFailed(w http.ResponseWriter, r *http.Request, err error) bool {
	if cfe.ErrorCode(err) != cfe.EUNAUTHORIZED {
		return false
	}
	retry, blocked := s.keyFails.Fail(s.clientAddr(r), s.now())
	if blocked {
		s.refuseKeyThrottled(w, r, retry)
	}
	return blocked
}
