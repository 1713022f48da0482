package localapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/health"
	"github.com/cfe-agent/cfe-agent/hosted"
	"github.com/cfe-agent/cfe-agent/localapi"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
	"github.com/cfe-agent/cfe-agent/sandbox"
)

const (
	keyCaja      = "xx_test_caja-del-perfil-000000000001"
	keyLimitada  = "xx_test_caja-limitada-00000000000002"
	keyOtra      = "xx_test_otra-terminal-000000000000003"
	proxyUser    = "ana"
	proxyPass    = "clave-de-ana-1"
	lanToken     = "token-de-la-terminal-lan-1"
	demoRUC      = "219999830019"
	sandboxEpoch = "2026-05-14T18:04:05Z" // the tests' clock, 15:04:05 in Montevideo
)

// hostedPeer is the real sandbox behind a recorder of what reaches it.
type hostedPeer struct {
	url    string
	sb     *sandbox.Server
	logins atomic.Int64

	mu    sync.Mutex
	seen  []http.Header // headers of every request that reached it
	calls []string      // "METHOD path" of every request that reached it
}

func startHosted(t *testing.T) *hostedPeer {
	t.Helper()
	at, _ := time.Parse(time.RFC3339, sandboxEpoch)
	sb, err := sandbox.New(sandbox.Config{Environment: sandbox.EnvSandbox, DataDir: t.TempDir(), DemoPassword: "demo-password",
		Now: func() time.Time { return at }, PasswordCost: bcrypt.MinCost,
		Seed: &sandbox.Seed{
			Users: []sandbox.SeedUser{{Username: proxyUser, Email: "ana@prueba.test", Password: proxyPass, Empresas: []string{demoRUC}}},
			APIKeys: []sandbox.SeedKey{
				{Empresa: demoRUC, Nombre: "caja", Key: keyCaja},
				{Empresa: demoRUC, Nombre: "limitada", Key: keyLimitada, LimitePorMinuto: 3, LimitePorHora: 100},
				{Empresa: demoRUC, Nombre: "otra", Key: keyOtra, LimitePorMinuto: 500, LimitePorHora: 5000},
			},
		}})
	if err != nil {
		t.Fatal(err)
	}
	p := &hostedPeer{sb: sb}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/auth/login" {
			p.logins.Add(1)
		}
		p.mu.Lock()
		p.seen = append(p.seen, r.Header.Clone())
		p.calls = append(p.calls, r.Method+" "+r.URL.Path)
		p.mu.Unlock()
		sb.Handler().ServeHTTP(w, r)
	})}
	go srv.Serve(ln)
	p.url = "http://" + ln.Addr().String()
	t.Cleanup(func() {
		srv.Close()
		sb.Close()
	})
	return p
}

func (p *hostedPeer) lastSeen() http.Header {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seen[len(p.seen)-1]
}

// callsSince returns the "METHOD path" of the requests that reached the
// service after the first n.
func (p *hostedPeer) callsSince(n int) []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string{}, p.calls[n:]...)
}

func (p *hostedPeer) requests() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.seen)
}

// direct sends a request straight to the sandbox.
func (p *hostedPeer) direct(t *testing.T, method, path string, body io.Reader, headers ...string) (int, http.Header, []byte) {
	t.Helper()
	req, _ := http.NewRequest(method, p.url+path, body)
	for i := 0; i < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

// emit has the sandbox sign an e-Ticket and returns its hosted id.
func (p *hostedPeer) emit(t *testing.T, uuid string) int64 {
	t.Helper()
	status, _, b := p.direct(t, http.MethodPost, "/api/v1/comprobante/emitir", strings.NewReader(`{"uuid":"`+uuid+`",
		"cfe":{"idDoc":{"tipoCfe":101,"formaPago":1,"montoBruto":1},
		"detalles":[{"indicadorFacturacion":3,"nombreItem":"Yerba","cantidad":2,"precioUnitario":61}]}}`),
		"Content-Type", "application/json", "X-API-Key", keyOtra)
	var r hosted.Comprobante
	if status != http.StatusOK || json.Unmarshal(b, &r) != nil || r.ID == 0 {
		t.Fatalf("emitir: HTTP %d %s", status, b)
	}
	return r.ID
}

// startProxy opens the local module in front of the peer with a hosted
// client of cfg.
func startProxy(t *testing.T, p *hostedPeer, cfg hosted.Config, edit ...func(*localapi.ServerConfig)) (*testServer, *hosted.Client) {
	t.Helper()
	cfg.BaseURL = p.url
	cl, err := hosted.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := startServer(t, func(c *localapi.ServerConfig) {
		c.Hosted = cl
		for _, e := range edit {
			e(c)
		}
	})
	return ts, cl
}

func TestProxy_Forwards(t *testing.T) {
	p := startHosted(t)
	id := p.emit(t, "venta-1")
	ts, cl := startProxy(t, p, hosted.Config{APIKey: keyCaja})

	for _, path := range []string{
		"/api/v1/cfeemitido/buscar?tipoFiltro=101",
		"/api/v1/cfeemitido/" + itoa(id),
		"/api/v1/comprobante/getByIdCfeEmitido?idCfeEmitido=" + itoa(id),
		"/api/v1/cfeemitido/987654",
	} {
		t.Run("GET "+path, func(t *testing.T) {
			wantStatus, _, want := p.direct(t, http.MethodGet, path, nil, "X-API-Key", keyOtra)
			resp, got := ts.send(t, request{path: path})
			if resp.StatusCode != wantStatus || !sameJSON(t, got, want) {
				t.Errorf("proxied: HTTP %d %s\ndirect: HTTP %d %s", resp.StatusCode, got, wantStatus, want)
			}
			var e struct {
				RequestID string `json:"request_id"`
			}
			if json.Unmarshal(got, &e) == nil && e.RequestID != "" && e.RequestID != resp.Header.Get("X-Request-Id") {
				t.Errorf("X-Request-Id %q is not the service's %q", resp.Header.Get("X-Request-Id"), e.RequestID)
			}
			if p.lastSeen().Get("X-API-Key") != keyCaja {
				t.Error("the profile's key was not added")
			}
			if resp.Header.Get(hosted.HeaderLimitMinute) != "120" || resp.Header.Get("X-Request-Id") == "" ||
				len(resp.Header.Values("X-Request-Id")) != 1 {
				t.Errorf("headers %v: want the service's rate-limit headers and one X-Request-Id", resp.Header)
			}
		})
	}

	t.Run("anular with a form body", func(t *testing.T) {
		form := url.Values{"idCfeReferencia": {itoa(id)}, "fecha": {"2026-05-14"}}.Encode()
		send := func() (response, hosted.Comprobante) {
			resp, b := ts.send(t, request{method: http.MethodPost, path: "/api/v1/comprobante/anular",
				headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, body: strings.NewReader(form)})
			var c hosted.Comprobante
			if err := json.Unmarshal(b, &c); err != nil {
				t.Fatalf("HTTP %d %s", resp.StatusCode, b)
			}
			return resp, c
		}
		resp, first := send()
		if resp.StatusCode != http.StatusOK || first.CodRespuesta != "00" || first.TipoCfe != 102 {
			t.Fatalf("HTTP %d %+v: want the e-Ticket's credit note (102)", resp.StatusCode, first)
		}
		_, again := send()
		if again.ID != first.ID {
			t.Errorf("repeated annulment answered %d, want the same counter-receipt %d", again.ID, first.ID)
		}
		_, _, direct := p.direct(t, http.MethodGet, "/api/v1/comprobante/getByIdCfeEmitido?idCfeEmitido="+itoa(first.ID), nil, "X-API-Key", keyOtra)
		var d hosted.Comprobante
		if json.Unmarshal(direct, &d) != nil || d != first {
			t.Errorf("the service holds %+v, the proxy answered %+v", d, first)
		}
	})

	t.Run("the caller's own key is kept", func(t *testing.T) {
		resp, _ := ts.send(t, request{path: "/api/v1/cfeemitido/" + itoa(id), headers: map[string]string{"X-API-Key": keyOtra}})
		if resp.StatusCode != http.StatusOK || resp.Header.Get(hosted.HeaderLimitMinute) != "500" {
			t.Errorf("HTTP %d, limit %q: want the caller's key (500 a minute)", resp.StatusCode, resp.Header.Get(hosted.HeaderLimitMinute))
		}
		if got := cl.Status().RateLimit; got == nil || got.LimitMinute != 120 {
			t.Errorf("the profile key's headroom %+v must not take another key's headers", got)
		}
	})

	t.Run("a caller's own 429 does not hold the profile back", func(t *testing.T) {
		var last response
		for range 4 {
			last, _ = ts.send(t, request{path: "/api/v1/usuario/empresas", headers: map[string]string{"X-API-Key": keyLimitada}})
		}
		if last.StatusCode != http.StatusTooManyRequests {
			t.Fatalf("fourth request of a key limited to 3: HTTP %d", last.StatusCode)
		}
		if st := cl.Status(); !st.WaitUntil.IsZero() || st.LastError != "" {
			t.Errorf("client status %+v: another key's 429 must not pause the profile's requests", st)
		}
	})

	t.Run("local-only headers stay local", func(t *testing.T) {
		ts.send(t, request{path: "/api/v1/cfeemitido/" + itoa(id), headers: map[string]string{
			"X-CFE-Token": lanToken, "Cookie": "sesion=1", "Origin": ts.srv.BaseURL()}})
		seen := p.lastSeen()
		for _, h := range []string{"X-Cfe-Token", "Cookie", "Origin", "X-Forwarded-For"} {
			if seen.Get(h) != "" {
				t.Errorf("%s reached the service", h)
			}
		}
	})
}

func TestProxy_LANTokenNotForwarded(t *testing.T) {
	p := startHosted(t)
	id := p.emit(t, "venta-lan")
	ts, _ := startProxy(t, p, hosted.Config{APIKey: keyCaja}, func(c *localapi.ServerConfig) {
		c.LAN = localapi.LANConfig{Enabled: true, Tokens: []string{lanToken}}
	})
	resp, _ := ts.send(t, request{path: "/api/v1/cfeemitido/" + itoa(id), headers: map[string]string{"Authorization": "Bearer " + lanToken}})
	seen := p.lastSeen()
	if resp.StatusCode != http.StatusOK || seen.Get("Authorization") != "" || seen.Get("X-API-Key") != keyCaja {
		t.Errorf("HTTP %d; the service saw Authorization %q and X-API-Key %q: want the profile's key and no LAN token",
			resp.StatusCode, seen.Get("Authorization"), seen.Get("X-API-Key"))
	}
}

// TestProxy_KeyManagementWithJWT: a caller manages company keys through the
// proxy with its own JWT, which the proxy forwards as it came; the profile
// (a JWT profile too) never logs in for it.
func TestProxy_KeyManagementWithJWT(t *testing.T) {
	p := startHosted(t)
	ts, _ := startProxy(t, p, hosted.Config{Username: proxyUser, Secret: proxyPass})
	jwt := p.login(t, proxyUser, proxyPass)
	bearer := map[string]string{"Content-Type": "application/json", "Authorization": "Bearer " + jwt}

	resp, b := ts.send(t, request{method: http.MethodPost, path: "/api/v1/apikeys", headers: bearer,
		body: jsonBody(`{"nombre":"caja 2","descripcion":"mostrador"}`)})
	var created struct {
		ID     int64
		ApiKey string
	}
	if resp.StatusCode != http.StatusCreated || json.Unmarshal(b, &created) != nil || !strings.HasPrefix(created.ApiKey, "xx_test_") {
		t.Fatalf("create: HTTP %d %s", resp.StatusCode, b)
	}
	if got := p.lastSeen().Get("Authorization"); got != "Bearer "+jwt {
		t.Errorf("the service saw Authorization %q, want the caller's own JWT", got)
	}
	resp, b = ts.send(t, request{path: "/api/v1/apikeys", headers: map[string]string{"Authorization": "Bearer " + jwt}})
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"caja 2"`) || strings.Contains(string(b), created.ApiKey) {
		t.Errorf("list: HTTP %d %s: want the new key listed, never its value", resp.StatusCode, b)
	}
	resp, b = ts.send(t, request{method: http.MethodPost, path: "/api/v1/apikeys/" + itoa(created.ID) + "/revocar",
		headers: bearer, body: jsonBody(`{}`)})
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"revocada"`) {
		t.Errorf("revoke: HTTP %d %s", resp.StatusCode, b)
	}
	if status, _, _ := p.direct(t, http.MethodGet, "/api/v1/usuario/empresas", nil, "X-API-Key", created.ApiKey); status != http.StatusUnauthorized {
		t.Errorf("the revoked key still works: HTTP %d", status)
	}
	if n := p.logins.Load(); n != 1 {
		t.Errorf("%d logins, want only the caller's own: the profile must not log in for key management", n)
	}
}

// login logs in straight at the service and returns the JWT.
func (p *hostedPeer) login(t *testing.T, user, secret string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"username": user, "secret": secret})
	status, _, b := p.direct(t, http.MethodPost, "/api/auth/login", bytes.NewReader(body), "Content-Type", "application/json")
	var r struct{ Token string }
	if status != http.StatusOK || json.Unmarshal(b, &r) != nil || r.Token == "" {
		t.Fatalf("login: HTTP %d %s", status, b)
	}
	return r.Token
}

// TestProxy_RateLimit: the service's 429 reaches the caller as it is, with
// Retry-After and the X-RateLimit-* headers.
func TestProxy_RateLimit(t *testing.T) {
	p := startHosted(t)
	ts, cl := startProxy(t, p, hosted.Config{APIKey: keyLimitada})
	for i := range 3 {
		if resp, _ := ts.send(t, request{path: "/api/v1/usuario/empresas"}); resp.StatusCode != http.StatusOK {
			t.Fatalf("request %d: HTTP %d", i+1, resp.StatusCode)
		}
	}
	resp, b := ts.send(t, request{path: "/api/v1/usuario/empresas"})
	var body struct{ Code string }
	// The clock is at 15:04:05: the minute window ends in 55 s.
	switch {
	case resp.StatusCode != http.StatusTooManyRequests:
		t.Fatalf("HTTP %d, want 429", resp.StatusCode)
	case json.Unmarshal(b, &body) != nil || body.Code != "api_key_rate_limit_exceeded":
		t.Errorf("body %s", b)
	case resp.Header.Get("Retry-After") != "55":
		t.Errorf("Retry-After %q, want 55", resp.Header.Get("Retry-After"))
	case resp.Header.Get(hosted.HeaderLimitMinute) != "3" || resp.Header.Get(hosted.HeaderRemainingMinute) != "0" ||
		resp.Header.Get(hosted.HeaderLimitHour) != "100" || resp.Header.Get(hosted.HeaderRemainingHour) != "97":
		t.Errorf("rate-limit headers %v", resp.Header)
	}
	st := cl.Status()
	if st.RateLimit == nil || st.RateLimit.RemainingMinute != 0 || st.WaitUntil.IsZero() {
		t.Errorf("client status %+v: the proxied answers must feed the profile key's headroom", st)
	}
}

// TestProxy_Refusals: the module's security rules apply before anything is
// forwarded, and the proxy's own failures are JSON in Spanish.
func TestProxy_Refusals(t *testing.T) {
	p := startHosted(t)
	ts, _ := startProxy(t, p, hosted.Config{APIKey: keyCaja})

	before := p.requests()
	for _, r := range []request{
		{path: "/api/v1/usuario/empresas", headers: map[string]string{"Origin": "https://malicioso.example"}},
		{path: "/api/v1/usuario/empresas", host: "malicioso.example"},
		{method: http.MethodPost, path: "/api/v1/apikeys", headers: map[string]string{"Content-Type": "text/plain"}, body: jsonBody(`{}`)},
		{method: http.MethodPost, path: "/api/v1/apikeys", headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, body: jsonBody(`a=1`)},
	} {
		if resp, _ := ts.send(t, r); resp.StatusCode < 400 {
			t.Errorf("%+v: HTTP %d, want a refusal", r, resp.StatusCode)
		}
	}
	if p.requests() != before {
		t.Errorf("%d refused requests reached the service", p.requests()-before)
	}

	t.Run("unreachable", func(t *testing.T) {
		ln, _ := net.Listen("tcp", "127.0.0.1:0")
		dead := &hostedPeer{url: "http://" + ln.Addr().String()}
		ln.Close()
		ts, cl := startProxy(t, dead, hosted.Config{APIKey: keyCaja})
		resp, b := ts.send(t, request{path: "/api/v1/usuario/empresas"})
		var e localapi.ProxyError
		if resp.StatusCode != http.StatusBadGateway || json.Unmarshal(b, &e) != nil || e.OK ||
			e.Error != "no se pudo contactar el servicio en la nube" || e.Code != cfe.EUNAVAILABLE {
			t.Errorf("HTTP %d %s", resp.StatusCode, b)
		}
		if cl.Status().Reachable {
			t.Error("the client still reports the service reachable")
		}
	})
	t.Run("not configured", func(t *testing.T) {
		ts := startServer(t, nil)
		resp, b := ts.send(t, request{path: "/api/v1/usuario/empresas"})
		if resp.StatusCode != http.StatusServiceUnavailable || !bytes.Contains(b, []byte("no está configurado")) {
			t.Errorf("HTTP %d %s", resp.StatusCode, b)
		}
	})
	t.Run("refused profile login", func(t *testing.T) {
		ts, _ := startProxy(t, p, hosted.Config{Username: proxyUser, Secret: "equivocada"})
		for range 3 {
			resp, b := ts.send(t, request{path: "/api/v1/usuario/empresas"})
			if resp.StatusCode != http.StatusUnauthorized || !bytes.Contains(b, []byte("rechazó")) {
				t.Errorf("HTTP %d %s", resp.StatusCode, b)
			}
		}
		if n := p.logins.Load(); n != 1 {
			t.Errorf("%d logins, want 1", n)
		}
	})
}

// TestState_Hosted: /state reports the hosted service's headroom and errors
// and the rejected CFEs, and degrades the status when CFEs cannot leave.
func TestState_Hosted(t *testing.T) {
	limit := &apitype.RateLimit{LimitMinute: 30, RemainingMinute: 0, LimitHour: 1000, RemainingHour: 900, ObservedAt: now.Add(-time.Minute)}
	tests := []struct {
		name     string
		outbox   cfe.Outbox
		hosted   health.Hosted
		warnings []string
	}{
		{"working, key used up for 20 s", cfe.Outbox{Pending: 3, OldestPending: now.Add(-10 * time.Minute)},
			health.Hosted{Reachable: true, RateLimit: limit, WaitUntil: now.Add(20 * time.Second)}, nil},
		{"unreachable, two refused", cfe.Outbox{Pending: 3, OldestPending: now.Add(-10 * time.Minute), Rejected: 2},
			health.Hosted{LastError: "no se pudo contactar el servicio en la nube"}, []string{
				"el servicio en la nube rechazó 2 comprobantes firmados: revíselos (no se reenvían solos)",
				"el servicio en la nube (https://servicio.ejemplo.com) no responde: los comprobantes firmados esperan en la cola"}},
		{"credential refused", cfe.Outbox{Pending: 1, OldestPending: now.Add(-time.Minute)},
			health.Hosted{Reachable: true, LastError: "API key revocada"}, []string{
				"el servicio en la nube (https://servicio.ejemplo.com): API key revocada; los comprobantes firmados esperan en la cola"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			st := healthyState()
			st.Outbox = tt.outbox
			h := tt.hosted
			h.BaseURL, h.Auth, h.CheckedAt = "https://servicio.ejemplo.com", "api_key", now.Add(-5*time.Second)
			st.Hosted = &h
			ts := startServer(t, func(c *localapi.ServerConfig) { c.State = fixedState{st: st} })
			rep, err := ts.client.State(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			hr := rep.Hosted
			switch {
			case hr == nil || hr.Reachable == nil || hr.CheckedAt == nil:
				t.Fatalf("hosted %+v", hr)
			case hr.BaseURL != h.BaseURL || hr.Auth != "api_key" || *hr.Reachable != h.Reachable || hr.LastError != h.LastError:
				t.Errorf("hosted %+v", hr)
			case h.RateLimit != nil && (hr.RateLimit == nil || hr.RateLimit.RemainingMinute != 0 || hr.RateLimit.RemainingHour != 900 || hr.WaitS != 20):
				t.Errorf("rate limit %+v, wait %d s", hr.RateLimit, hr.WaitS)
			}
			if rep.Outbox.Pending != tt.outbox.Pending || rep.Outbox.Rejected != tt.outbox.Rejected {
				t.Errorf("outbox %+v", rep.Outbox)
			}
			wantStatus := apitype.HealthOK
			if len(tt.warnings) > 0 {
				wantStatus = apitype.HealthDegraded
			}
			if rep.Status != wantStatus || !slices.Equal(rep.Warnings, append([]string{}, tt.warnings...)) {
				t.Errorf("status %s, warnings %q; want %s, %q", rep.Status, rep.Warnings, wantStatus, tt.warnings)
			}
		})
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// sameJSON compares two JSON documents by value, but for the request id of
// an error body (each request gets its own).
func sameJSON(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return bytes.Equal(a, b)
	}
	for _, v := range []any{x, y} {
		if m, ok := v.(map[string]any); ok {
			delete(m, "request_id")
		}
	}
	xb, _ := json.Marshal(x)
	yb, _ := json.Marshal(y)
	return bytes.Equal(xb, yb)
}
