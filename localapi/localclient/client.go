// Package localclient is the one client of the agent's local module (the
// localapi server) over HTTP: the agent's own commands (backup, restore,
// doctor, diagnostics) and tests call a running agent through it. It reads
// the wire types of localapi/apitype and links neither the server nor its
// router.
//
// Every request has a timeout (30 s unless the caller's http.Client says
// otherwise). A failed request is a *cfe.Error, mapped from the HTTP status
// as the hosted client maps the hosted service's (400/413 EINVALID, 401
// EUNAUTHORIZED, 403 EFORBIDDEN, 404 ENOTFOUND, 409 ECONFLICT, 429 and 5xx
// other than 500 EUNAVAILABLE, 500 EINTERNAL), with the module's Spanish
// message; it wraps a *StatusError with the status and the request id. A
// module that cannot be reached is EUNAVAILABLE.
package localclient

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

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/httpcode"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// defaultTimeout bounds a request of a client made without an http.Client.
const defaultTimeout = 30 * time.Second

// maxAnswer bounds the answer read (a state report with its recent
// receipts, a printer listing).
const maxAnswer = 64 << 20

// Options configures a Client.
type Options struct {
	// HTTPClient sends the requests; a client with a 30 s timeout when nil.
	HTTPClient *http.Client
	// Token is the terminal's LAN token, sent as "Authorization: Bearer".
	// Callers on the agent's own machine need none.
	Token string
	// AdminToken is the running agent's admin token (its run file), sent in
	// X-CFE-Admin: POST /backup needs it.
	AdminToken string
}

// Client calls a local module over HTTP. It is safe for concurrent use.
type Client struct {
	base  *url.URL
	http  *http.Client
	token string
	admin string
}

// StatusError is an answer whose HTTP status says the request failed; the
// *cfe.Error a Client returns wraps it.
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

// toError wraps e in the *cfe.Error of its status (httpcode.Code, as
// hosted reads the hosted service's), with the module's own message for the user.
func (e *StatusError) toError(op string) *cfe.Error {
	code := httpcode.Code(e.StatusCode)
	msg := e.Message
	if msg == "" {
		msg = fmt.Sprintf("el módulo local respondió HTTP %d", e.StatusCode)
	}
	return &cfe.Error{Code: code, Op: op, Message: msg, Err: e}
}

// New returns a client of the local module at baseURL, such as
// http://127.0.0.1:18787.
func New(baseURL string, opts Options) (*Client, error) {
	u, err := url.Parse(strings.TrimSuffix(baseURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("localclient: base URL %q is not an http URL", baseURL)
	}
	hc := opts.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: defaultTimeout}
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
// and the error (wrapping a *StatusError).
func (c *Client) SignCFE(ctx context.Context, body []byte) (*apitype.SignResponse, error) {
	var resp apitype.SignResponse
	err := c.do(ctx, http.MethodPost, "/sign-cfe", body, &resp, http.StatusOK)
	var se *StatusError
	if errors.As(err, &se) && resp.CodigoRespuesta != "" {
		return &resp, err
	}
	if err != nil {
		return nil, err
	}
	return &resp, nil
}

// Printers calls GET /printers.
func (c *Client) Printers(ctx context.Context) (*apitype.PrintersReport, error) {
	var rep apitype.PrintersReport
	if err := c.do(ctx, http.MethodGet, "/printers", nil, &rep, http.StatusOK); err != nil {
		return nil, err
	}
	return &rep, nil
}

// Backup asks the running agent for a backup (POST /backup); the client
// needs Options.AdminToken.
func (c *Client) Backup(ctx context.Context) (*apitype.BackupResult, error) {
	var out apitype.BackupResult
	if err := c.do(ctx, http.MethodPost, "/backup", []byte("{}"), &out, http.StatusOK); err != nil {
		return nil, err
	}
	return &out, nil
}

// Recover asks the running agent to recover a stored CFE that cannot be
// read back (POST /recuperar); the client needs Options.AdminToken.
func (c *Client) Recover(ctx context.Context, req apitype.RecoverRequest) (*apitype.RecoverResult, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	var out apitype.RecoverResult
	if err := c.do(ctx, http.MethodPost, "/recuperar", body, &out, http.StatusOK); err != nil {
		return nil, err
	}
	return &out, nil
}

// DailyReport asks the running agent to run a daily-report command (POST
// /reporte-diario); the client needs Options.AdminToken.
func (c *Client) DailyReport(ctx context.Context, req apitype.DailyReportRequest) (*apitype.DailyReportResult, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	var out apitype.DailyReportResult
	if err := c.do(ctx, http.MethodPost, "/reporte-diario", body, &out, http.StatusOK); err != nil {
		return nil, err
	}
	return &out, nil
}

// ResendReport asks the running agent to resend a day's daily report
// corrected (POST /reporte/reenviar); the client needs the admin token.
func (c *Client) ResendReport(ctx context.Context, req apitype.ReportResendRequest) (*apitype.ReportResendResult, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	var out apitype.ReportResendResult
	if err := c.do(ctx, http.MethodPost, "/reporte/reenviar", body, &out, http.StatusOK); err != nil {
		return nil, err
	}
	return &out, nil
}

// do sends a request and decodes the JSON answer into out. A status not in
// ok is a *cfe.Error wrapping a *StatusError; out is still filled when the
// body decodes into it.
func (c *Client) do(ctx context.Context, method, path string, body []byte, out any, ok ...int) error {
	op := "localclient: " + method + " " + path
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
		req.Header.Set(apitype.HeaderAdmin, c.admin)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return &cfe.Error{Code: cfe.EUNAVAILABLE, Op: op, Err: err,
			Message: "el agente no responde en " + c.base.String()}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return &cfe.Error{Code: cfe.EUNAVAILABLE, Op: op, Err: fmt.Errorf("reading the answer: %w", err),
			Message: "la respuesta del agente se cortó"}
	}
	decodeErr := json.Unmarshal(raw, out)
	for _, st := range ok {
		if resp.StatusCode == st {
			if decodeErr != nil {
				return fmt.Errorf("%s: answer is not the expected JSON: %w", op, decodeErr)
			}
			return nil
		}
	}
	se := &StatusError{StatusCode: resp.StatusCode, RequestID: resp.Header.Get(apitype.HeaderRequestID)}
	var plain apitype.PlainError
	var sign apitype.SignResponse
	switch {
	case json.Unmarshal(raw, &plain) == nil && plain.Error != "":
		se.Message = plain.Error
	case json.Unmarshal(raw, &sign) == nil && sign.MensajeRespuesta != "":
		se.Message = sign.MensajeRespuesta
	}
	return se.toError(op)
}

// KeyIn asks the running agent to key in paper contingency receipts all or
// nothing (POST /contingencia); the client needs Options.AdminToken. A
// batch refused line by line is answered, not an error: see
// apitype.KeyInResult.OK.
func (c *Client) KeyIn(ctx context.Context, requests []json.RawMessage) (*apitype.KeyInResult, error) {
	body, err := json.Marshal(requests)
	if err != nil {
		return nil, err
	}
	var out apitype.KeyInResult
	if err := c.do(ctx, http.MethodPost, "/contingencia", body, &out, http.StatusOK); err != nil {
		return nil, err
	}
	return &out, nil
}
