package auth

import (
	"cmp"
	"net/netip"
	"time"

	"github.com/cfe-agent/cfe-agent/internal/throttle"
)

// This file is the sandbox's one use of internal/throttle: the throttle of
// addresses that send invalid API keys, and the Retry-After of every 429.

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

// keyThrottle counts invalid API keys per client address.
type keyThrottle struct{ t *throttle.Throttle }

func newKeyThrottle(l KeyFailureLimits) keyThrottle {
	return keyThrottle{throttle.New(throttle.Limits{Failures: cmp.Or(l.Failures, DefaultKeyFailureLimits.Failures),
		Window: cmp.Or(l.Window, DefaultKeyFailureLimits.Window), MaxAddrs: keyThrottleMaxAddrs})}
}

// blocked reports whether a has no try left now, and how long until its next.
func (k keyThrottle) blocked(a netip.Addr, now time.Time) (time.Duration, bool) {
	return k.t.Blocked(a, now)
}

// fail counts an invalid key from a; blocked when a had no try left for it.
func (k keyThrottle) fail(a netip.Addr, now time.Time) (time.Duration, bool) { return k.t.Fail(a, now) }

// retrySeconds is the Retry-After of a wait: whole seconds, at least 1.
func retrySeconds(d time.Duration) int { return throttle.RetryAfter(d) }
