package sandbox_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/cfe-agent/cfe-agent/sandbox"
	"github.com/cfe-agent/cfe-agent/sandbox/auth"
)

// Known test data.
const (
	rucAlfa = "211111110015"
	rucBeta = "212222220011"

	keyAlfa      = "xx_test_alfa-known-key-0000000000000001" // id 1, default limits
	keyBeta      = "xx_test_beta-known-key-0000000000000002" // id 2, Beta's limits
	keyAlfaTight = "xx_test_alfa-tight-key-0000000000000003" // id 3, 3 a minute and 5 an hour

	anaPassword   = "clave-de-ana-1"
	betoPassword  = "clave-de-beto-2"
	carlaPassword = "clave-de-carla-3"
)

func testSeed() *sandbox.Seed {
	return &sandbox.Seed{
		Companies: []sandbox.SeedCompany{
			{RUC: rucAlfa, RazonSocial: "Alfa S.A."},
			{RUC: rucBeta, RazonSocial: "Beta S.R.L.", LimitePorMinuto: 50, LimitePorHora: 500},
		},
		Users: []sandbox.SeedUser{
			{Username: "ana", Email: "ana@alfa.test", Password: anaPassword, Empresas: []string{rucAlfa}},
			{Username: "beto", Email: "beto@alfa.test", Password: betoPassword, Empresas: []string{rucAlfa, rucBeta}},
			{Username: "carla", Email: "carla@beta.test", Password: carlaPassword, Empresas: []string{rucBeta}},
		},
		APIKeys: []sandbox.SeedKey{
			{Empresa: rucAlfa, Nombre: "caja 1", Key: keyAlfa},
			{Empresa: rucBeta, Nombre: "caja beta", Key: keyBeta},
			{Empresa: rucAlfa, Nombre: "limitada", Key: keyAlfaTight, LimitePorMinuto: 3, LimitePorHora: 5},
		},
	}
}

// clock is the injected, settable time of a test server.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

func (c *clock) Advance(d time.Duration) { c.Set(c.Now().Add(d)) }

// testClientHeader carries the simulated client address through the
// Config.ClientAddr hook: tests play callers from several networks over one
// loopback connection.
const testClientHeader = "X-Test-Client-Addr"

func clientFromHeader(r *http.Request) (netip.Addr, bool) {
	a, err := netip.ParseAddr(r.Header.Get(testClientHeader))
	return a, err == nil
}

// env is a running sandbox on 127.0.0.1:0.
type env struct {
	t     testing.TB
	srv   *sandbox.Server
	url   string
	clock *clock
	cfg   sandbox.Config
}

// t0 is the tests' starting time: 10:00:30 in Montevideo.
var t0 = time.Date(2026, time.March, 2, 13, 0, 30, 0, time.UTC)

// start runs a sandbox with the test seed; opts adjust its Config.
func start(t testing.TB, opts ...func(*sandbox.Config)) *env {
	t.Helper()
	c := &clock{t: t0}
	cfg := sandbox.Config{
		Environment:  sandbox.EnvSandbox,
		DataDir:      t.TempDir(),
		Listen:       "127.0.0.1:0",
		DemoPassword: "demo-password",
		Seed:         testSeed(),
		Now:          c.Now,
		ClientAddr:   clientFromHeader,
		PasswordCost: bcrypt.MinCost,
	}
	for _, o := range opts {
		o(&cfg)
	}
	e := &env{t: t, clock: c, cfg: cfg}
	e.open()
	return e
}

func (e *env) open() {
	e.t.Helper()
	srv, err := sandbox.New(e.cfg)
	if err != nil {
		e.t.Fatal(err)
	}
	if err := srv.Open(); err != nil {
		srv.Close()
		e.t.Fatal(err)
	}
	e.srv, e.url = srv, srv.URL()
	e.t.Cleanup(func() { e.close() })
}

func (e *env) close() {
	if e.srv != nil {
		if err := e.srv.Close(); err != nil {
			e.t.Error(err)
		}
		e.srv = nil
	}
}

// resp is a received response.
type resp struct {
	status int
	header http.Header
	body   []byte
}

// errBody is the common error shape.
type errBody struct {
	Error     string `json:"error"`
	Code      string `json:"code"`
	Details   []struct{ Campo, Mensaje string }
	RequestID string `json:"request_id"`
}

func (r *resp) decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

func (r *resp) errBody(t testing.TB) errBody {
	t.Helper()
	var b errBody
	r.decode(t, &b)
	if b.RequestID == "" || b.RequestID != r.header.Get("X-Request-Id") {
		t.Errorf("request_id %q and X-Request-Id %q should be equal and set", b.RequestID, r.header.Get("X-Request-Id"))
	}
	return b
}

// expect fails the test unless the status is want.
func (r *resp) expect(t testing.TB, want int) *resp {
	t.Helper()
	if r.status != want {
		t.Fatalf("status %d, want %d; body %s", r.status, want, r.body)
	}
	return r
}

// do sends a request; body is JSON-encoded unless it is a string (sent as
// is); headers come in name, value pairs.
func (e *env) do(method, path string, body any, headers ...string) *resp {
	e.t.Helper()
	var rd io.Reader
	ctype := "application/json"
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, e.url+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", ctype)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := testClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return &resp{status: res.StatusCode, header: res.Header, body: raw}
}

// testClient gives every request of the tests a deadline: a server that
// stopped answering fails the test that waited for it, not the whole run at
// go test's timeout. It is generous, for a machine under load.
var testClient = &http.Client{Timeout: 2 * time.Minute}

func bearer(token string) []string { return []string{"Authorization", "Bearer " + token} }

// login logs in and fails the test unless it succeeds.
func (e *env) login(username, secret string, headers ...string) auth.TokenResponse {
	e.t.Helper()
	var tok auth.TokenResponse
	e.do("POST", "/api/auth/login", auth.LoginRequest{Username: username, Secret: secret}, headers...).
		expect(e.t, http.StatusOK).decode(e.t, &tok)
	return tok
}

// jwtPart decodes part i (0 header, 1 claims) of a JWT.
func jwtPart(t testing.TB, token string, i int) map[string]any {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", token)
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[i])
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]any{}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
