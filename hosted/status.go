package hosted

import (
	"context"
	"fmt"
	"net/http"
	"time"
)

// Status is what the client knows of the service, from its last answers.
type Status struct {
	URL       string
	Auth      string    // AuthAPIKey, AuthJWT or AuthNone
	Reachable bool      // the last request got an answer (of any status)
	Contact   time.Time // when the service last answered; zero if never
	CheckedAt time.Time // when the last request or probe ended; zero if none did
	LastError string    // Spanish; "" after a success
	RateLimit *RateLimit
	// WaitUntil is when the next request may be sent, after a 429 or with
	// the key's window used up; zero when it may be sent now.
	WaitUntil time.Time
}

// Status reports the client's view of the service. It sends nothing.
func (c *Client) Status() Status {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := Status{URL: c.base.String(), Auth: c.Auth(), Reachable: c.reachable, Contact: c.contact, CheckedAt: c.checked,
		LastError: c.lastErr}
	if c.rate != nil {
		r := *c.rate
		st.RateLimit = &r
	}
	if until := c.gate.until(); until.After(c.now()) {
		st.WaitUntil = until
	}
	return st
}

// Observe records what an answer of the service says (reachability,
// rate-limit headers, a 429's Retry-After, a refused JWT) for a request sent
// on the client's behalf by someone else: the local module's proxy, when it
// added the client's credentials. ownCredentials tells whether it did.
func (c *Client) Observe(resp *http.Response, ownCredentials bool) {
	msg := fmt.Sprintf("el servicio en la nube respondió HTTP %d", resp.StatusCode)
	if !ownCredentials {
		// A caller's own credential, and its key's limits, say nothing of the
		// profile's; only a server error says something of the service.
		if resp.StatusCode >= 500 {
			c.noteAnswer(resp.StatusCode, msg)
		} else {
			c.noteSuccess()
		}
		return
	}
	c.observe(resp.StatusCode, resp.Header, c.Auth() == AuthAPIKey)
	c.noteAnswer(resp.StatusCode, msg)
	if resp.StatusCode == http.StatusUnauthorized && c.Auth() == AuthJWT {
		c.session.invalidate(resp.Request.Header.Get("Authorization"))
	}
}

// ObserveFailure records that a request sent on the client's behalf got no
// answer.
func (c *Client) ObserveFailure() { c.noteError(false, msgUnreachable) }

// observe reads the rate-limit headers of an answer to a request made with
// the client's key, and holds further requests back while the key has none
// left or the service asked to wait.
func (c *Client) observe(status int, h http.Header, withKey bool) {
	now := c.now()
	if ra := retryAfter(h); status == http.StatusTooManyRequests && ra > 0 {
		c.gate.hold(now.Add(ra))
	}
	if !withKey {
		return
	}
	rl, ok := parseRateLimit(h, now)
	if !ok {
		return
	}
	c.mu.Lock()
	c.rate = &rl
	c.mu.Unlock()
	if until, ok := rl.exhaustedUntil(); ok {
		c.gate.hold(until)
	}
}

func (c *Client) noteSuccess() {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	c.reachable, c.contact, c.checked, c.lastErr = true, now, now, ""
}

// noteAnswer records an answer of the service. Only answers that say the
// service or the profile's credential has a problem (401, 403, 429, 5xx)
// become the last error; any other (a 404 for an unknown id, a 400 for a bad
// request) says the service works.
func (c *Client) noteAnswer(status int, msg string) {
	switch {
	case status == http.StatusUnauthorized, status == http.StatusForbidden,
		status == http.StatusTooManyRequests, status >= 500:
		c.noteError(true, msg)
	default:
		c.noteSuccess()
	}
}

// noteError records a failure; answered tells whether the service answered.
func (c *Client) noteError(answered bool, msg string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	c.reachable, c.lastErr, c.checked = answered, msg, now
	if answered {
		c.contact = now
	}
}

// Ping reports whether the service answers at all: it sends a request without
// credentials (which no rate limit counts) and accepts any HTTP answer.
//
// Errors: EUNAVAILABLE when the service does not answer.
func (c *Client) Ping(ctx context.Context) error {
	const op = "hosted.Ping"
	_, _, _, err := c.send(ctx, &request{op: op, method: http.MethodGet, path: "/api/v1/usuario/empresas"}, http.Header{})
	switch {
	case ctx.Err() != nil:
		return unavailable(op, ctx.Err()) // stopped, not unreachable
	case err != nil:
		c.noteError(false, msgUnreachable)
		return unavailable(op, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	c.reachable, c.contact, c.checked = true, now, now
	if c.lastErr == msgUnreachable {
		c.lastErr = "" // a credential's or a limit's error stays until a request succeeds
	}
	return nil
}

// errNoCredentials is returned by calls that need credentials on a client
// that has none.
