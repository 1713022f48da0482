package localapi_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // zone rules do not depend on the machine's zoneinfo files

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/health"
	"github.com/cfe-agent/cfe-agent/internal/machinezone"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/issuer"
	"github.com/cfe-agent/cfe-agent/localapi"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
	"github.com/cfe-agent/cfe-agent/localapi/localclient"
)

// now is the clock of every test: 14 May 2026, 15:04:05 in Montevideo.
var now = time.Date(2026, 5, 14, 15, 4, 5, 0, cfe.Montevideo)

// fixedState is one snapshot of the agent's facts (or the error reading
// them), which startServer reports as the application does (reporter).
type fixedState struct {
	st  health.State
	err error
}

// Report makes fixedState a StateSource of its own, without the module's
// addresses; startServer replaces it with a reporter of the same facts.
func (f fixedState) Report(ctx context.Context, full bool) (*apitype.StateReport, error) {
	return (&reporter{facts: f, now: time.Now}).Report(ctx, full)
}

// reporter builds the state report of startServer's agent from its facts
// with health.Report, as the application's state use case does (app.Facade):
// version 1.2.3, profile caja1 in the sandbox, the module's own addresses,
// and the machine's time zone as the signing rule reads it (machinezone.Read,
// on each request: a test may change TZ afterwards), at the test clock.
type reporter struct {
	facts fixedState
	now   func() time.Time
	srv   *localapi.Server // set before the module serves
}

func (r *reporter) Report(_ context.Context, full bool) (*apitype.StateReport, error) {
	now := r.now()
	z := machinezone.Read(now)
	id := health.Identity{Version: "1.2.3", Profile: "caja1", Environment: "sandbox",
		Zone: apitype.ZoneReport{OK: z.OK(), Nombre: z.Name, Desfase: issuer.FormatOffset(z.Offset), Mensaje: z.Message()}}
	if r.srv != nil {
		id.BaseURL = r.srv.BaseURL()
		if full {
			id.URLs = r.srv.URLs()
		}
	}
	return health.Report(id, r.facts.st, r.facts.err, now), r.facts.err
}

// healthyState can sign and needs no attention at `now`: a certificate valid
// 47 more days, a fresh e-Ticket range, an empty outbox.
func healthyState() health.State {
	return health.State{
		Certificate: &cfe.CertSummary{
			CommonName: "CN=Comercio de Prueba SA",
			RUC:        "215555550018",
			NotBefore:  time.Date(2025, 7, 1, 0, 0, 0, 0, cfe.Montevideo),
			NotAfter:   time.Date(2026, 7, 1, 0, 0, 0, 0, cfe.Montevideo),
		},
		CAE: []cfe.RangeUse{{
			Range: cfe.CAERange{Type: cfe.ETicket, Serie: "A", DNro: 1, HNro: 1000, CAEID: "90260000123",
				Vencimiento: cfe.Date{Year: 2027, Month: time.March, Day: 31}},
			Remaining: 950,
		}},
	}
}

// funcIssuer adapts a function to localapi.Issuer, for tests of what happens
// around signing (the security pipeline, the status routes, a panic). Signing
// itself is tested on the real issuer, store and signer: see startAgent.
type funcIssuer func(ctx context.Context, req *cfe.Request) (*issuer.Result, error)

func (f funcIssuer) Issue(ctx context.Context, req *cfe.Request) (*issuer.Result, error) {
	return f(ctx, req)
}

// testServer is a Server open on a free port, with its log and a client.
type testServer struct {
	srv    *localapi.Server
	client *localclient.Client
	logs   *testtool.SyncBuffer
}

// startServer opens a Server on 127.0.0.1:0 with an issuer that signs
// nothing (it answers "no CAE range"), the test clock, a healthy state
// reported as the application reports it (reporter: the real time-zone
// reader on TZ=America/Montevideo, read on each request, so a test may change
// TZ afterwards), and the test's edits.
func startServer(t testing.TB, edit func(*localapi.ServerConfig)) *testServer {
	t.Helper()
	t.Setenv("TZ", "America/Montevideo")
	logs := &testtool.SyncBuffer{}
	cfg := localapi.ServerConfig{
		Listen: "127.0.0.1:0",
		Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		Issuer: funcIssuer(func(context.Context, *cfe.Request) (*issuer.Result, error) {
			return nil, &cfe.Error{Code: cfe.EUNAVAILABLE, Respuesta: cfe.RespSinRangoCAE, Message: "sin rango"}
		}),
		State: fixedState{st: healthyState()},
		Now:   func() time.Time { return now },
	}
	if edit != nil {
		edit(&cfg)
	}
	var rep *reporter
	if f, ok := cfg.State.(fixedState); ok {
		rep = &reporter{facts: f, now: cfg.Now}
		cfg.State = rep
	}
	srv := localapi.NewServer(cfg)
	if rep != nil {
		rep.srv = srv
	}
	if err := srv.Open(); err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	c, err := localclient.New(srv.BaseURL(), localclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &testServer{srv: srv, client: c, logs: logs}
}

// request describes one raw HTTP request for the security tests.
type request struct {
	method  string
	path    string
	host    string // Host header; the server's address when empty
	headers map[string]string
	body    io.Reader
}

// response is what the tests read of an answer; send has closed its body.
type response struct {
	StatusCode int
	Header     http.Header
}

// send performs r against ts and returns the answer and its body.
func (ts *testServer) send(t testing.TB, r request) (response, []byte) {
	t.Helper()
	if r.method == "" {
		r.method = http.MethodGet
	}
	req, err := http.NewRequest(r.method, ts.srv.BaseURL()+r.path, r.body)
	if err != nil {
		t.Fatal(err)
	}
	if r.host != "" {
		req.Host = r.host
	}
	for k, v := range r.headers {
		if v != "" {
			req.Header.Set(k, v)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", r.method, r.path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{StatusCode: resp.StatusCode, Header: resp.Header}, b
}

// jsonBody is a POST body of JSON content.
func jsonBody(s string) io.Reader { return strings.NewReader(s) }

// decodeObject decodes a JSON object body into a map, failing the test when
// it is not one.
func decodeObject(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("body is not a JSON object: %v\n%s", err, b)
	}
	return m
}

// logLines decodes the JSON log lines written so far.
func (ts *testServer) logLines(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(ts.logs.String()), "\n") {
		if line != "" {
			out = append(out, decodeObject(t, []byte(line)))
		}
	}
	return out
}
