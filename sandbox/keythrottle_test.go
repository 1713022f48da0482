package sandbox_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/sandbox"
)

// TestKeyThrottle_PerAddress guesses API keys from one address until it is
// throttled, over real HTTP, and checks that a valid key from another
// address still works.
func TestKeyThrottle_PerAddress(t *testing.T) {
	t.Parallel()
	e := start(t, func(c *sandbox.Config) {
		c.KeyFailureLimits = sandbox.KeyFailureLimits{Failures: 3, Window: time.Minute}
	})
	const attacker, pos = "203.0.113.7", "198.51.100.20"
	get := func(addr, key string) *resp {
		return e.do("GET", "/api/v1/usuario/empresas", nil, "X-API-Key", key, testClientHeader, addr)
	}
	get(attacker, keyBeta).expect(t, http.StatusOK)
	for _, guess := range []string{"xx_test_guess-0000000000000000000000001", "garbage", "xx_live_alfa-known-key-0000000000000001"} {
		get(attacker, guess).expect(t, http.StatusUnauthorized)
	}
	for _, key := range []string{"xx_test_guess-0000000000000000000000002", keyBeta} {
		r := get(attacker, key).expect(t, http.StatusTooManyRequests)
		if got := r.header.Get("Retry-After"); got != "20" { // one try every 60 s / 3
			t.Errorf("Retry-After %q, want \"20\"", got)
		}
		b := r.errBody(t)
		if b.Code != "api_key_failures_rate_limited" || !strings.Contains(b.Error, "API keys inválidas") {
			t.Errorf("429 body %+v, want code api_key_failures_rate_limited and a Spanish message", b)
		}
	}
	if m := e.metrics(); m.KeyFailuresBlocked != 2 {
		t.Errorf("api_key_failures_blocked %d, want 2", m.KeyFailuresBlocked)
	}

	t.Run("a valid key from another address is not blocked", func(t *testing.T) {
		get(pos, keyBeta).expect(t, http.StatusOK)
	})
	t.Run("JWT callers from the throttled address are not concerned", func(t *testing.T) {
		tok := e.login("beto", betoPassword, testClientHeader, attacker)
		e.do("GET", "/api/v1/usuario/empresas", nil, append(bearer(tok.Token), testClientHeader, attacker)...).expect(t, http.StatusOK)
	})
	t.Run("the address earns a try back", func(t *testing.T) {
		e.clock.Advance(20 * time.Second)
		get(attacker, keyBeta).expect(t, http.StatusOK)
	})
}
