package hosted

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// refreshMargin is how long before a JWT's expiry the client renews it, so
// that no request goes out with a token about to lapse.
const refreshMargin = 10 * time.Minute

// session is the JWT of a user login and its refresh token. Its mutex is held
// across a login or refresh, so concurrent callers wait for the one in flight
// instead of starting their own.
type session struct {
	mu      sync.Mutex
	token   string
	refresh string
	expires time.Time
	// refused is set when the service refused the credential: no further
	// login is attempted (an agent must not loop on a wrong password).
	refused error
	// blockedUntil is the end of a login 429's Retry-After.
	blockedUntil time.Time
}

// tokenResponse is the answer of login and refresh.
type tokenResponse struct {
	Token        string     `json:"token"`
	RefreshToken string     `json:"refresh_token"`
	ExpiresAt    expiryTime `json:"expires_at"`
}

// expiryTime is the expires_at of a token answer: an integer Unix time, as
// the service answers it, or an RFC 3339 text, as earlier sandboxes did.
type expiryTime struct{ time.Time }

func (e *expiryTime) UnmarshalJSON(b []byte) error {
	var unix int64
	if err := json.Unmarshal(b, &unix); err == nil {
		e.Time = time.Unix(unix, 0).UTC()
		return nil
	}
	return json.Unmarshal(b, &e.Time)
}

// invalidate forgets the JWT that authorization carried, if it is still the
// current one, so the next request renews it.
func (s *session) invalidate(authorization string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if authorization == "Bearer "+s.token {
		s.token, s.expires = "", time.Time{}
	}
}

// token returns a JWT valid for at least refreshMargin: the current one, a
// refreshed one, or one from a new login, in that order of preference.
func (c *Client) token(ctx context.Context) (string, error) {
	s := &c.session
	s.mu.Lock()
	defer s.mu.Unlock()
	now := c.now()
	if s.token != "" && now.Before(s.expires.Add(-refreshMargin)) {
		return s.token, nil
	}
	if s.refused != nil {
		return "", s.refused
	}
	if s.refresh != "" {
		err := c.authenticate(ctx, "hosted.refresh", "/api/auth/refresh", map[string]string{"refresh_token": s.refresh})
		switch {
		case err == nil:
			return s.token, nil
		case cfe.ErrorCode(err) != cfe.EUNAUTHORIZED:
			// Service down or busy: keep using a token that has not expired,
			// and keep the refresh token for later.
			if s.token != "" && now.Before(s.expires) {
				return s.token, nil
			}
			return "", err
		}
		s.refresh = "" // rotated, expired or revoked: log in again
	}
	if now.Before(s.blockedUntil) {
		return "", &cfe.Error{Code: cfe.EUNAVAILABLE, Op: "hosted.login",
			Message: "el servicio en la nube limitó los intentos de inicio de sesión; se reintentará más tarde",
			Err:     &APIError{Status: http.StatusTooManyRequests, RetryAfter: s.blockedUntil.Sub(now)}}
	}
	err := c.authenticate(ctx, "hosted.login", "/api/auth/login", map[string]string{"username": c.cfg.Username, "secret": c.cfg.Secret})
	switch cfe.ErrorCode(err) {
	case "":
		return s.token, nil
	case cfe.EUNAUTHORIZED, cfe.EINVALID, cfe.EFORBIDDEN:
		refused := &cfe.Error{Code: cfe.EUNAUTHORIZED, Op: "hosted.login",
			Message: "el servicio en la nube rechazó el usuario o la clave del perfil; corrija hosted.username y hosted.secret", Err: err}
		c.log.Error("hosted service refused the profile's login; no further login will be attempted",
			"username", c.cfg.Username, "err", err)
		c.noteError(true, refused.Message)
		s.refused = refused
		return "", refused
	}
	if ra, ok := RetryAfter(err); ok {
		s.blockedUntil = now.Add(ra)
	}
	return "", err
}

// authenticate sends a login or refresh (once: a login is never retried
// blindly) and keeps the tokens of a success. s.mu is held.
func (c *Client) authenticate(ctx context.Context, op, path string, body map[string]string) error {
	req, err := jsonRequest(op, http.MethodPost, path, body, false)
	if err != nil {
		return err
	}
	status, header, b, err := c.send(ctx, req, http.Header{})
	if err != nil {
		c.noteError(false, msgUnreachable)
		return unavailable(op, err)
	}
	if status != http.StatusOK {
		apiErr := parseAPIError(status, header, b)
		c.noteAnswer(status, apiErr.Message)
		return apiErr.toError(op)
	}
	var tr tokenResponse
	if err := json.Unmarshal(b, &tr); err != nil || tr.Token == "" {
		return &cfe.Error{Code: cfe.EUNAVAILABLE, Op: op, Message: "respuesta inesperada del servicio en la nube al iniciar sesión", Err: err}
	}
	s := &c.session
	s.token, s.refresh, s.expires = tr.Token, tr.RefreshToken, tr.ExpiresAt.Time
	c.noteSuccess()
	c.log.Info("hosted session renewed", "op", op, "expires", tr.ExpiresAt.Time)
	return nil
}

var errNoCredentials = &cfe.Error{Code: cfe.EUNAUTHORIZED,
	Message: "el perfil no tiene credenciales del servicio en la nube (api_key, o username y secret)"}

// Authorize sets the client's credentials on h: X-API-Key, or Authorization
// with a JWT (logging in or refreshing first when needed). A client without
// credentials (AuthNone) sets nothing.
//
// Errors: EUNAUTHORIZED when the service refused the profile's login;
// EUNAVAILABLE when a needed login could not be made (service down, or login
// attempts limited: see RetryAfter).
func (c *Client) Authorize(ctx context.Context, h http.Header) error {
	hdr, err := c.credentials(ctx)
	if err != nil {
		return err
	}
	for k, v := range hdr {
		h[k] = v
	}
	return nil
}

const headerAPIKey = "X-Api-Key" // canonical form of X-API-Key

// credentials returns the headers that authenticate a request.
func (c *Client) credentials(ctx context.Context) (http.Header, error) {
	h := http.Header{}
	switch c.Auth() {
	case AuthAPIKey:
		h.Set(headerAPIKey, c.cfg.APIKey)
	case AuthJWT:
		tok, err := c.token(ctx)
		if err != nil {
			return nil, err
		}
		h.Set("Authorization", "Bearer "+tok)
	}
	return h, nil
}
