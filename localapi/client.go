package localapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// ClientOptions configures a Client.
type ClientOptions struct {
	// HTTPClient sends the requests; a client with a 30 s timeout when nil.
	HTTPClient *http.Client
	// Token is the terminal's LAN token, sent as "Authorization: Bearer".
	// Callers on the agent's own machine need none.
	Token string
	// AdminToken is the running agent's admin token (its run file), sent in
	// X-CFE-Admin: POST /backup needs it.
	AdminToken string
}

// Client calls a local module (this package's Server) over HTTP.
type Client struct {
	base  *url.URL
	http  *http.Client
	token string
	admin string
}

// StatusError is an answer whose HTTP status says the request failed.
type StatusError struct {
	StatusCode int
	// Message is the server's explanation (Spanish), when the body had one.
	Message   string
	RequestID string
}

func (e *StatusError) Error() string {
	msg := fmt.Sprintf("local module answered %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.Message != "" {
		msg += ": " + e.Message
	}
	if e.RequestID != "" {
		msg += " (request " + e.RequestID + ")"
	}
	return msg
}

// NewClient returns a client of the local module at baseURL, such as
// http://127.0.0.1:18787.
func NewClient(baseURL string, opts ClientOptions) (*Client, error) {
	u, err := url.Parse(strings.TrimSuffix(baseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("localapi: base URL %q is not an http URL", baseURL)
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second}
	}
	return &Client{base: u, http: hc, token: opts.Token, admin: opts.AdminToken}, nil
}

// Health calls GET /health. A module that cannot sign answers 503 with a
// report: Health returns that report (OK false) and no error.
func (c *Client) Health(ctx context.Context) (*apitype.HealthReport, error) {
	var h apitype.HealthReport
	if err := c.do(ctx, http.MethodGet, "/health", nil, &h, http.StatusOK, http.StatusServiceUnavailable); err != nil {
		return nil, err
	}
	return &h, nil
}

// State calls GET /state.
func (c *Client) State(ctx context.Context) (*apitype.StateReport, error) {
	var st apitype.StateReport
	if err := c.do(ctx, http.MethodGet, "/state", nil, &st, http.StatusOK); err != nil {
		return nil, err
	}
	return &st, nil
}

// SignCFE calls POST /sign-cfe with body, the JSON request as POS software
// sends it ({"uuid", "adenda", "cfe"}). A rejection is a response, not an
// error: check CodigoRespuesta. When the module refused the request at the
// protocol level (4xx), SignCFE returns both the response, which says why,
// and a *StatusError.
func (c *Client) SignCFE(ctx context.Context, body []byte) (*apitype.SignResponse, error) {
	var resp apitype.SignResponse
	err := c.do(ctx, http.MethodPost, "/sign-cfe", body, &resp, http.StatusOK)
	var se *StatusError
	if errors.As(err, &se) && resp.CodigoRespuesta != "" {
		return &resp, se
	}
	if err != nil {
		return nil, err
	}
	return &resp, nil
}

// do sends a request and decodes the JSON answer into out. A status not in
// ok is a *StatusError; out is still filled when the body decodes into it.
func (c *Client) do(ctx context.Context, method, path string, body []byte, out any, ok ...int) error {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base.JoinPath(path).String(), rd)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if c.admin != "" {
		req.Header.Set(headerAdmin, c.admin)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("localapi: %s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("localapi: %s %s: reading the answer: %w", method, path, err)
	}
	decodeErr := json.Unmarshal(raw, out)
	for _, st := range ok {
		if resp.StatusCode == st {
			if decodeErr != nil {
				return fmt.Errorf("localapi: %s %s: answer is not the expected JSON: %w", method, path, decodeErr)
			}
			return nil
		}
	}
	se := &StatusError{StatusCode: resp.StatusCode, RequestID: resp.Header.Get(headerRequestID)}
	var plain apitype.PlainError
	var sign apitype.SignResponse
	switch {
	case json.Unmarshal(raw, &plain) == nil && plain.Error != "":
		se.Message = plain.Error
	case json.Unmarshal(raw, &sign) == nil && sign.MensajeRespuesta != "":
		se.Message = sign.MensajeRespuesta
	}
	return se
}
