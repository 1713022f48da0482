package sandbox_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/sandbox"
	"github.com/cfe-agent/cfe-agent/sandbox/auth"
)

// guardLimits are small thresholds for the login-protection tests.
var guardLimits = sandbox.LoginLimits{Window: 10 * time.Minute, PerIP: 3, PerPrefix: 5, AlertFailures: 4, AlertNetworks: 3}

func withGuard(c *sandbox.Config) { c.LoginLimits = guardLimits }

// attempt logs in as username from addr and returns the response.
func (e *env) attempt(addr, username, secret string) *resp {
	e.t.Helper()
	return e.do("POST", "/api/auth/login", auth.LoginRequest{Username: username, Secret: secret}, testClientHeader, addr)
}

func (e *env) metrics() auth.Metrics {
	e.t.Helper()
	var m auth.Metrics
	e.do("GET", "/sandbox/metrics", nil).expect(e.t, http.StatusOK).decode(e.t, &m)
	return m
}

func TestLoginGuard_PerIP(t *testing.T) {
	t.Parallel()
	e := start(t, withGuard)
	for range 3 {
		e.attempt("203.0.113.7", "ana", "wrong").expect(t, http.StatusUnauthorized)
	}
	// The fourth attempt is refused before the credential is looked at, even
	// when it is correct.
	r := e.attempt("203.0.113.7", "ana", anaPassword).expect(t, http.StatusTooManyRequests)
	if got := r.header.Get("Retry-After"); got != "600" {
		t.Errorf("Retry-After %q, want 600", got)
	}
	ipBody := r.errBody(t)

	t.Run("another address of the network still logs in", func(t *testing.T) {
		e.attempt("203.0.113.8", "ana", anaPassword).expect(t, http.StatusOK)
	})
	t.Run("the block ends with the window", func(t *testing.T) {
		e.clock.Advance(4 * time.Minute)
		if got := e.attempt("203.0.113.7", "ana", anaPassword).expect(t, http.StatusTooManyRequests).header.Get("Retry-After"); got != "360" {
			t.Errorf("Retry-After %q, want 360", got)
		}
		e.clock.Advance(6 * time.Minute)
		e.attempt("203.0.113.7", "ana", anaPassword).expect(t, http.StatusOK)
	})
	t.Run("the prefix limit answers exactly like the address limit", func(t *testing.T) {
		// 198.51.100.0/24: five failures over three addresses, none of them
		// at its own limit.
		for _, a := range []string{"198.51.100.1", "198.51.100.1", "198.51.100.2", "198.51.100.2", "198.51.100.3"} {
			e.attempt(a, "beto", "wrong").expect(t, http.StatusUnauthorized)
		}
		r := e.attempt("198.51.100.200", "beto", betoPassword).expect(t, http.StatusTooManyRequests)
		b := r.errBody(t)
		if b.Error != ipBody.Error || b.Code != ipBody.Code || r.header.Get("Retry-After") != "600" {
			t.Errorf("prefix block %+v (Retry-After %s) differs from address block %+v", b, r.header.Get("Retry-After"), ipBody)
		}
		e.attempt("198.51.101.1", "beto", betoPassword).expect(t, http.StatusOK) // the next /24
	})
	t.Run("IPv6 networks are /64", func(t *testing.T) {
		for _, a := range []string{"2001:db8:0:1::1", "2001:db8:0:1::1", "2001:db8:0:1::2", "2001:db8:0:1::2", "2001:db8:0:1::3"} {
			e.attempt(a, "carla", "wrong").expect(t, http.StatusUnauthorized)
		}
		e.attempt("2001:db8:0:1:ffff::9", "carla", carlaPassword).expect(t, http.StatusTooManyRequests)
		e.attempt("2001:db8:0:2::1", "carla", carlaPassword).expect(t, http.StatusOK)
	})
}

func TestLoginGuard_SuccessConsumesNothing(t *testing.T) {
	t.Parallel()
	e := start(t, withGuard)
	for range 10 {
		e.attempt("203.0.113.9", "ana", anaPassword).expect(t, http.StatusOK)
	}
	e.attempt("203.0.113.9", "ana", "wrong").expect(t, http.StatusUnauthorized)
	e.attempt("203.0.113.9", "ana", "wrong").expect(t, http.StatusUnauthorized)
	e.attempt("203.0.113.9", "ana", anaPassword).expect(t, http.StatusOK)
	if m := e.metrics(); m.LoginFailures != 2 || m.LoginBlocked != 0 {
		t.Errorf("metrics %+v, want 2 failures and no block", m)
	}
}

func TestLoginGuard_DistributedAlert(t *testing.T) {
	t.Parallel()
	e := start(t, withGuard)
	// One failure each from four networks, with spellings that normalize to
	// the same identifier.
	for i, a := range []string{"192.0.2.1", "198.18.0.1", "198.19.0.1", "100.64.0.1"} {
		name := []string{"ana", " ANA", "Ana ", "aNa"}[i]
		e.attempt(a, name, "wrong").expect(t, http.StatusUnauthorized)
		if want := int64(i / 3); e.metrics().LoginAlerts != want { // the 4th failure, from the 3rd+ network
			t.Fatalf("after %d failures: alerts %d, want %d", i+1, e.metrics().LoginAlerts, want)
		}
	}
	t.Run("a correct credential from another network logs in", func(t *testing.T) {
		e.attempt("203.0.113.50", "ana", anaPassword).expect(t, http.StatusOK)
	})
	t.Run("and from one of the attacking networks too", func(t *testing.T) {
		e.attempt("192.0.2.1", "ana", anaPassword).expect(t, http.StatusOK)
	})
	t.Run("one alert per window", func(t *testing.T) {
		e.attempt("203.0.113.60", "ana", "wrong").expect(t, http.StatusUnauthorized)
		if m := e.metrics(); m.LoginAlerts != 1 {
			t.Errorf("alerts %d, want 1", m.LoginAlerts)
		}
	})
	t.Run("failures from one network alone raise no alert", func(t *testing.T) {
		e2 := start(t, withGuard)
		for _, a := range []string{"192.0.2.1", "192.0.2.2", "192.0.2.3", "192.0.2.4"} {
			e2.attempt(a, "beto", "wrong").expect(t, http.StatusUnauthorized)
		}
		if m := e2.metrics(); m.LoginAlerts != 0 || m.LoginFailures != 4 {
			t.Errorf("metrics %+v", m)
		}
	})
}

func TestLoginGuard_ClientAddress(t *testing.T) {
	t.Parallel()
	forwardedFrom := func(e *env, addr, secret string) *resp {
		return e.do("POST", "/api/auth/login", auth.LoginRequest{Username: "ana", Secret: secret}, "X-Forwarded-For", "10.9.9.9, "+addr)
	}
	t.Run("X-Forwarded-For is ignored by default", func(t *testing.T) {
		e := start(t, withGuard, func(c *sandbox.Config) { c.ClientAddr = nil })
		for _, a := range []string{"192.0.2.1", "198.18.0.1", "198.19.0.1"} {
			forwardedFrom(e, a, "wrong").expect(t, http.StatusUnauthorized)
		}
		// All three came from 127.0.0.1.
		forwardedFrom(e, "100.64.0.1", anaPassword).expect(t, http.StatusTooManyRequests)
	})
	t.Run("with TrustProxy the last hop is the client", func(t *testing.T) {
		e := start(t, withGuard, func(c *sandbox.Config) { c.ClientAddr, c.TrustProxy = nil, true })
		for range 3 {
			forwardedFrom(e, "192.0.2.1", "wrong").expect(t, http.StatusUnauthorized)
		}
		forwardedFrom(e, "192.0.2.1", anaPassword).expect(t, http.StatusTooManyRequests)
		forwardedFrom(e, "100.64.0.1", anaPassword).expect(t, http.StatusOK)
	})
}
