package hosted_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/hosted"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/issuer"
	"github.com/cfe-agent/cfe-agent/sandbox"
	"github.com/cfe-agent/cfe-agent/signer"
	"github.com/cfe-agent/cfe-agent/store"
)

// The company of these tests is the sandbox's demo company, DGI's test RUC.
const (
	testRUC      = "219999830019"
	keyAgent     = "xx_test_agente-caja-1-0000000000000001"
	keyTight     = "xx_test_agente-limitada-00000000000002"
	keyInspector = "xx_test_inspector-sin-limite-000000003"
	userName     = "ana"
	userPassword = "clave-de-ana-1"
)

// t0 is the tests' starting time: 10:00:10 in Montevideo, 10 s into a minute
// window of the service.
var t0 = time.Date(2026, time.November, 20, 13, 0, 10, 0, time.UTC)

// clock is the injected time of the sandbox and of the agent's parts. Sleep
// advances it instead of waiting (and yields briefly, so goroutines that wait
// on real events get to run).
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: t0} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func (c *clock) Sleep(ctx context.Context, d time.Duration) error {
	if d > 0 {
		c.Advance(d)
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Millisecond):
		return nil
	}
}

func testSeed() *sandbox.Seed {
	return &sandbox.Seed{
		Users: []sandbox.SeedUser{{Username: userName, Email: "ana@prueba.test", Password: userPassword, Empresas: []string{testRUC}}},
		APIKeys: []sandbox.SeedKey{
			{Empresa: testRUC, Nombre: "caja 1", Key: keyAgent},
			{Empresa: testRUC, Nombre: "limitada", Key: keyTight, LimitePorMinuto: 30, LimitePorHora: 1000},
			{Empresa: testRUC, Nombre: "inspector", Key: keyInspector, LimitePorMinuto: 1000000, LimitePorHora: 1000000},
		},
	}
}

// peer is the real sandbox on a fixed loopback port that can be stopped and
// started again on the same data. A thin wrapper counts what reaches it.
type peer struct {
	t     testing.TB
	clock *clock
	dir   string
	addr  string

	mu  sync.Mutex
	sb  *sandbox.Server
	srv *http.Server

	// loginLimits, when set before start, replace the sandbox's defaults.
	loginLimits sandbox.LoginLimits
	// handledMu guards handled (requests by path) and lose, which, when set,
	// decides that the answer to a request the sandbox has handled is lost:
	// the connection is closed instead.
	handledMu sync.Mutex
	handled   map[string]int
	lose      func(r *http.Request) bool

	logins    atomic.Int64
	refreshes atomic.Int64
	// limited counts 429 answers to key requests by minute window.
	limitedMu sync.Mutex
	limited   map[time.Time]int
}

// newPeer reserves a port; start runs the sandbox on it.
func newPeer(t testing.TB, c *clock) *peer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	p := &peer{t: t, clock: c, dir: t.TempDir(), addr: addr, limited: map[time.Time]int{}}
	t.Cleanup(p.stop)
	return p
}

func startPeer(t testing.TB, c *clock) *peer {
	p := newPeer(t, c)
	p.start()
	return p
}

func (p *peer) url() string { return "http://" + p.addr }

func (p *peer) start() {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	sb, err := sandbox.New(sandbox.Config{Environment: sandbox.EnvSandbox, DataDir: p.dir, DemoPassword: "demo-password",
		Seed: testSeed(), Now: p.clock.Now, PasswordCost: bcrypt.MinCost, LoginLimits: p.loginLimits})
	if err != nil {
		p.t.Fatal(err)
	}
	// The port was released by newPeer or an earlier stop: another socket
	// may hold it briefly. Listen again until it is free, for a second.
	var ln net.Listener
	testtool.WaitUntil(p.t, time.Second, func() bool {
		ln, err = net.Listen("tcp", p.addr)
		return err == nil
	})
	if err != nil {
		sb.Close()
		p.t.Fatal(err)
	}
	p.sb = sb
	p.srv = &http.Server{Handler: p.count(sb.Handler()), ReadHeaderTimeout: 5 * time.Second}
	go p.srv.Serve(ln)
}

func (p *peer) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.srv == nil {
		return
	}
	p.srv.Close()
	if err := p.sb.Close(); err != nil {
		p.t.Error(err)
	}
	p.srv, p.sb = nil, nil
}

// count records logins, refreshes and rate-limit refusals as the sandbox
// answers them.
func (p *peer) count(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/api/auth/login":
			p.logins.Add(1)
		case "/api/auth/refresh", "/auth/refresh":
			p.refreshes.Add(1)
		}
		p.handledMu.Lock()
		if p.handled == nil {
			p.handled = map[string]int{}
		}
		p.handled[r.URL.Path]++
		lose := p.lose != nil && p.lose(r)
		p.handledMu.Unlock()
		if lose {
			next.ServeHTTP(httptest.NewRecorder(), r)
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				conn.Close()
			}
			return
		}
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		if sw.code == http.StatusTooManyRequests && r.URL.Path != "/api/auth/login" {
			p.limitedMu.Lock()
			p.limited[p.clock.Now().Truncate(time.Minute)]++
			p.limitedMu.Unlock()
		}
	})
}

// requestsTo counts the requests to path that reached the sandbox.
func (p *peer) requestsTo(path string) int {
	p.handledMu.Lock()
	defer p.handledMu.Unlock()
	return p.handled[path]
}

// loseAnswers makes the sandbox's answers to requests for which f is true
// never arrive.
func (p *peer) loseAnswers(f func(r *http.Request) bool) {
	p.handledMu.Lock()
	defer p.handledMu.Unlock()
	p.lose = f
}

type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

// get sends an inspection request with the unlimited key and decodes the JSON
// answer.
func (p *peer) get(path string, query url.Values, out any) {
	p.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, p.url()+path+"?"+query.Encode(), nil)
	req.Header.Set("X-API-Key", keyInspector)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		p.t.Fatalf("GET %s: HTTP %d", path, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		p.t.Fatal(err)
	}
}

// received lists every CFE the sandbox recorded as delivered by an agent,
// in the sandbox's id order.
func (p *peer) received() []sandbox.IssuedSummary {
	var all []sandbox.IssuedSummary
	p.get("/api/v1/cfeemitido/buscar", url.Values{"tipoFiltro": {"0"}}, &all)
	var out []sandbox.IssuedSummary
	for _, s := range all {
		if s.Origen == "agente" {
			out = append(out, s)
		}
	}
	return out
}

// local is an agent's signing side: a real bbolt store, a signer with a
// generated test certificate and the issuer over both, at the test clock.
type local struct {
	db  *store.DB
	iss *issuer.Issuer
}

var montevideo = func(time.Time) issuer.ZoneStatus {
	return issuer.ZoneStatus{Name: "America/Montevideo", Offset: -3 * 3600}
}

// certificate is one agent certificate, shared by the tests (RSA generation
// is slow).
var certificate = sync.OnceValues(func() (*signer.Credentials, error) {
	return signer.GenerateTestCertificate(testRUC, "Empresa de Prueba S.A.", t0.AddDate(0, -1, 0))
})

// openLocal opens (or reopens) the agent's store at path; a new file gets
// e-Ticket ranges in series A (numbers 1 to 120) and B.
func openLocal(t testing.TB, path string, c *clock) *local {
	t.Helper()
	return openLocalWith(t, path, c, store.Options{})
}

// openLocalWith is openLocal with store options (the clock is the test's).
func openLocalWith(t testing.TB, path string, c *clock, opts store.Options) *local {
	t.Helper()
	opts.Now = c.Now
	db, err := store.Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if have, err := db.Ranges(ctx); err != nil {
		t.Fatal(err)
	} else if len(have) == 0 {
		for _, r := range []cfe.CAERange{
			{RUC: testRUC, Type: cfe.ETicket, Serie: "A", DNro: 1, HNro: 120, CAEID: "90260000001",
				Autorizado: cfe.Date{Year: 2026, Month: 1, Day: 5}, Vencimiento: cfe.Date{Year: 2027, Month: 12, Day: 31}, Source: "manual"},
			{RUC: testRUC, Type: cfe.ETicket, Serie: "B", DNro: 1, HNro: 1000, CAEID: "90260000002",
				Autorizado: cfe.Date{Year: 2026, Month: 1, Day: 5}, Vencimiento: cfe.Date{Year: 2028, Month: 6, Day: 30}, Source: "manual"},
		} {
			if err := db.PutRange(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	creds, err := certificate()
	if err != nil {
		t.Fatal(err)
	}
	sg, err := signer.New(signer.Config{Credentials: creds, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	emisor := cfe.Emisor{RUCEmisor: testRUC, RznSoc: "Empresa de Prueba S.A.", CdgDGISucur: 1,
		DomFiscal: "Av. 18 de Julio 1000", Ciudad: "Montevideo", Departamento: "Montevideo"}
	l := &local{db: db}
	l.iss = issuer.New(issuer.Config{Store: db, Signer: dgiSigner{sg}, Emisor: func() cfe.Emisor { return emisor },
		Tax: cfe.DefaultTaxConfig(), Now: c.Now, Zone: montevideo})
	return l
}

func (l *local) close(t testing.TB) {
	t.Helper()
	if err := l.db.Close(); err != nil {
		t.Error(err)
	}
}

// dgiSigner adapts *signer.Signer to issuer.Signer, as cmd/cfe-agent does.
type dgiSigner struct{ s *signer.Signer }

func (d dgiSigner) Sign(unsigned []byte) ([]byte, string, error) {
	signed, err := d.s.Sign(unsigned)
	if err != nil {
		return nil, "", err
	}
	return signed.XML, signed.DigestValue, nil
}

// sign signs n e-Tickets of one item each (the i-th costs 100+i pesos, IVA
// included at the basic rate), with uuids prefix-0001 and on.
func (l *local) sign(t testing.TB, prefix string, n int) []string {
	t.Helper()
	uuids := make([]string, n)
	for i := range n {
		uuids[i] = fmt.Sprintf("%s-%04d", prefix, i+1)
		body := fmt.Sprintf(`{"uuid":%q,"cfe":{"idDoc":{"tipoCfe":101,"formaPago":1,"montoBruto":1},
			"detalles":[{"indicadorFacturacion":3,"nombreItem":"Artículo %d","cantidad":1,"precioUnitario":%d}]}}`,
			uuids[i], i+1, 100+i)
		req, err := cfe.DecodeRequest(strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.iss.Issue(context.Background(), req); err != nil {
			t.Fatalf("signing %s: %v", uuids[i], err)
		}
	}
	return uuids
}

func (l *local) pending(t testing.TB) int {
	t.Helper()
	st, err := l.db.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st.Pending
}

// newClient returns a client of the peer at the test clock.
func newClient(t testing.TB, p *peer, cfg hosted.Config) *hosted.Client {
	t.Helper()
	cfg.BaseURL = p.url()
	cfg.Now, cfg.Sleep = p.clock.Now, p.clock.Sleep
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Second
	}
	c, err := hosted.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
