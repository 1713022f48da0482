package hosted

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// Defaults of Config.
const (
	DefaultTimeout     = 30 * time.Second
	DefaultMaxAttempts = 4
)

// Backoff between attempts of one request (and, in the deliverer, between
// passes over the outbox while the service fails).
const (
	minBackoff = 500 * time.Millisecond
	maxBackoff = time.Minute
)

// maxResponseBytes caps what is read of one answer: a signed CFE of 700 lines
// is far smaller.
const maxResponseBytes = 8 << 20

// Authentication modes, as Status reports them.
const (
	AuthAPIKey = "api_key" // company API key, X-API-Key
	AuthJWT    = "jwt"     // user login, Authorization: Bearer <JWT>
	AuthNone   = "ninguna" // no credentials: only the proxy's callers' own work
)

// Config configures a Client. Only BaseURL is required.
type Config struct {
	// BaseURL is the service's address, such as https://servicio.ejemplo.com.
	BaseURL string
	// APIKey is a company key (xx_test_… or xx_live_…). It wins over Username.
	APIKey string
	// Username and Secret log in for a JWT when there is no APIKey.
	Username string
	Secret   string
	// Timeout bounds each attempt of a request; DefaultTimeout when zero.
	Timeout time.Duration
	// MaxAttempts bounds the attempts of a request that is safe to repeat;
	// DefaultMaxAttempts when zero. Other requests are sent once.
	MaxAttempts int
	// HTTPClient sends the requests; a client of its own when nil.
	HTTPClient *http.Client
	// Logger receives retries and authentication events, never a secret;
	// discarded when nil.
	Logger *slog.Logger
	// Now is the clock and Sleep waits for d or until ctx ends; time.Now and a
	// timer when nil. Tests inject a clock that Sleep advances.
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
}

// Client is a typed client of the hosted service. It is safe for concurrent
// use.
type Client struct {
	cfg  Config
	base *url.URL
	http *http.Client
	log  *slog.Logger
	now  func() time.Time

	session session // JWT mode only
	gate    gate    // waits for a key's next window, or for Retry-After

	mu        sync.Mutex
	reachable bool
	contact   time.Time // last answer of any kind
	checked   time.Time // last request or probe that ended, answered or not
	lastErr   string
	rate      *RateLimit
}

// New returns a Client for cfg.
//
// Errors: EINVALID when BaseURL is not an http(s) URL.
func New(cfg Config) (*Client, error) {
	u, err := url.Parse(strings.TrimRight(cfg.BaseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, cfe.Invalid("hosted.New", cfe.FieldError{Campo: "hosted.base_url",
			Mensaje: "se espera una URL como https://servicio.ejemplo.com"})
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Transport: NewTransport(cfg.Timeout)}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Sleep == nil {
		cfg.Sleep = sleep
	}
	return &Client{cfg: cfg, base: u, http: cfg.HTTPClient, log: cfg.Logger, now: cfg.Now}, nil
}

// NewTransport returns the HTTP transport the client (and the local module's
// proxy) use toward the service: bounded dial, TLS handshake and wait for
// response headers, keep-alive connections.
func NewTransport(timeout time.Duration) *http.Transport {
	return &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: timeout,
		MaxIdleConnsPerHost:   8,
		IdleConnTimeout:       90 * time.Second,
		ForceAttemptHTTP2:     true,
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// BaseURL returns the service's base URL.
func (c *Client) BaseURL() *url.URL { u := *c.base; return &u }

// Auth returns the authentication mode: AuthAPIKey, AuthJWT or AuthNone.
func (c *Client) Auth() string {
	switch {
	case c.cfg.APIKey != "":
		return AuthAPIKey
	case c.cfg.Username != "":
		return AuthJWT
	}
	return AuthNone
}

// request is one call to the service.
type request struct {
	op          string
	method      string
	path        string
	query       url.Values
	body        []byte
	contentType string
	// retry marks a request that is safe to repeat: a GET, or a POST that the
	// service deduplicates (the same uuid, the same annulment).
	retry bool
}

// jsonRequest builds a request whose body is v as JSON.
func jsonRequest(op, method, path string, v any, retry bool) (*request, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return &request{op: op, method: method, path: path, body: b, contentType: "application/json", retry: retry}, nil
}

// do sends req, with authentication, pacing and retries, and decodes a 2xx
// JSON answer into out (when not nil).
func (c *Client) do(ctx context.Context, req *request, out any) error {
	reauthed := false
	for attempt := 1; ; attempt++ {
		if err := c.gate.wait(ctx, c.now, c.cfg.Sleep); err != nil {
			return unavailable(req.op, err)
		}
		hdr, err := c.credentials(ctx)
		if err != nil {
			return err
		}
		status, header, body, err := c.send(ctx, req, hdr)
		last := !req.retry || attempt >= c.cfg.MaxAttempts
		if err != nil {
			c.noteError(false, msgUnreachable)
			if last {
				return unavailable(req.op, err)
			}
			c.log.Warn("hosted request failed; retrying", "op", req.op, "attempt", attempt, "err", err)
			if err := c.cfg.Sleep(ctx, backoff(attempt)); err != nil {
				return unavailable(req.op, err)
			}
			continue
		}
		c.observe(status, header, hdr.Get(headerAPIKey) != "")
		if status >= 200 && status < 300 {
			c.noteSuccess()
			if out == nil || len(body) == 0 {
				return nil
			}
			if err := json.Unmarshal(body, out); err != nil {
				return &cfe.Error{Code: cfe.EINTERNAL, Op: req.op, Message: "respuesta inesperada del servicio en la nube", Err: err}
			}
			return nil
		}
		apiErr := parseAPIError(status, header, body)
		c.noteAnswer(status, apiErr.Message)
		switch {
		case status == http.StatusUnauthorized && c.Auth() == AuthJWT && !reauthed:
			// The JWT may have been revoked or its session closed: log in
			// again once. The request was refused before doing anything, so
			// sending it again is safe whatever it is.
			c.session.invalidate(hdr.Get("Authorization"))
			reauthed = true
			continue
		case (status == http.StatusTooManyRequests || status >= http.StatusBadGateway) && !last:
			// Every request waits, not only this one: the service is busy or
			// the key is limited for all of them.
			wait := max(apiErr.RetryAfter, backoff(attempt))
			c.log.Warn("hosted service busy or limiting; retrying", "op", req.op, "status", status, "wait", wait)
			c.gate.hold(c.now().Add(wait))
			continue
		}
		return apiErr.toError(req.op)
	}
}

// send makes one attempt: it returns the status, headers and body of the
// answer, or the transport error.
func (c *Client) send(ctx context.Context, req *request, hdr http.Header) (int, http.Header, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	u := c.base.JoinPath(req.path)
	u.RawQuery = req.query.Encode()
	var body io.Reader
	if req.body != nil {
		body = bytes.NewReader(req.body)
	}
	hr, err := http.NewRequestWithContext(ctx, req.method, u.String(), body)
	if err != nil {
		return 0, nil, nil, err
	}
	for k, v := range hdr {
		hr.Header[k] = v
	}
	hr.Header.Set("Accept", "application/json")
	if req.contentType != "" {
		hr.Header.Set("Content-Type", req.contentType)
	}
	resp, err := c.http.Do(hr)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return 0, nil, nil, err
	}
	return resp.StatusCode, resp.Header, b, nil
}

// backoff is the wait before attempt+1: exponential from minBackoff, capped
// at maxBackoff, with jitter over its upper half.
func backoff(attempt int) time.Duration {
	d := maxBackoff
	if attempt < 16 {
		d = min(minBackoff<<(attempt-1), maxBackoff)
	}
	return d/2 + rand.N(d/2+1)
}

// msgUnreachable is the Spanish message of a request the service did not
// answer.
const msgUnreachable = "no se pudo contactar el servicio en la nube"

func unavailable(op string, err error) *cfe.Error {
	return &cfe.Error{Code: cfe.EUNAVAILABLE, Op: op, Message: msgUnreachable, Err: err}
}

func (c *Client) String() string { return fmt.Sprintf("hosted.Client(%s, %s)", c.base, c.Auth()) }
