package localapi

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestCaja_LANPage: in LAN mode a browser on another machine gets the /caja
// page's HTML without the terminal's token (it holds no data), and nothing
// else: the page's own requests need the token like any LAN caller's, and
// without LAN mode the page is refused as everything is.
func TestCaja_LANPage(t *testing.T) {
	t.Parallel()
	const token = "terminal-token-0123456789"
	lanOn := NewServer(ServerConfig{Listen: "127.0.0.1:0", LAN: LANConfig{Enabled: true, Tokens: []string{token}},
		Issuer: noIssuer{}, State: emptyState{}})
	lanOff := NewServer(ServerConfig{Listen: "127.0.0.1:0", Issuer: noIssuer{}, State: emptyState{}})
	for _, s := range []*Server{lanOn, lanOff} {
		if err := s.Open(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
	}
	for _, tc := range []struct {
		name   string
		srv    *Server
		method string
		path   string
		token  string
		want   int
	}{
		{"the page, no token", lanOn, http.MethodGet, "/caja", "", http.StatusOK},
		{"the page, LAN off", lanOff, http.MethodGet, "/caja", "", http.StatusForbidden},
		{"a search, no token", lanOn, http.MethodGet, "/comprobantes", "", http.StatusUnauthorized},
		{"the close, no token", lanOn, http.MethodGet, "/cierre?fecha=2026-11-28", "", http.StatusUnauthorized},
		{"the page's info, no token", lanOn, http.MethodGet, "/caja/info", "", http.StatusUnauthorized},
		{"an XML, no token", lanOn, http.MethodGet, "/caja/xml?uuid=x", "", http.StatusUnauthorized},
		{"a sale, no token", lanOn, http.MethodPost, "/caja/venta", "", http.StatusUnauthorized},
		{"a path below the page, no token", lanOn, http.MethodGet, "/caja/", "", http.StatusUnauthorized},
		// With the token the chain lets it through: this module has no
		// application behind the routes, so they answer 503.
		{"a search with the token", lanOn, http.MethodGet, "/comprobantes", token, http.StatusServiceUnavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, "http://127.0.0.1"+tc.path, strings.NewReader(`{}`))
			req.Header.Set("Content-Type", "application/json")
			req.RemoteAddr = "192.0.2.10:50000"
			if tc.token != "" {
				req.Header.Set("X-CFE-Token", tc.token)
			}
			rec := httptest.NewRecorder()
			tc.srv.handler.ServeHTTP(rec, req)
			if rec.Code != tc.want {
				t.Fatalf("%s %s: %d, want %d: %s", tc.method, tc.path, rec.Code, tc.want, rec.Body)
			}
			if tc.want == http.StatusOK {
				csp := rec.Header().Get("Content-Security-Policy")
				if !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "script-src 'sha256-") ||
					strings.Contains(csp, "unsafe-inline") || rec.Header().Get("X-Frame-Options") != "DENY" {
					t.Fatalf("the page's headers: %v", rec.Header())
				}
				if !regexp.MustCompile(`data-pagina="\d+\.[A-Za-z0-9_-]{43}"`).MatchString(rec.Body.String()) {
					t.Fatal("the page carries no page token")
				}
			}
		})
	}
}

// TestCaja_PageToken: a page token sells for 12 hours from when its page was
// served, only under the key of the module that served it.
func TestCaja_PageToken(t *testing.T) {
	t.Parallel()
	a, b := &cajaRoutes{}, &cajaRoutes{}
	a.key[0], b.key[0] = 1, 2
	at := time.Date(2026, time.November, 28, 9, 0, 0, 0, time.UTC)
	tok := a.pageToken(at)
	for _, tc := range []struct {
		name string
		c    *cajaRoutes
		tok  string
		now  time.Time
		want bool
	}{
		{"at once", a, tok, at, true},
		{"11 h 59 min later", a, tok, at.Add(pageTokenTTL - time.Minute), true},
		{"12 h 1 min later", a, tok, at.Add(pageTokenTTL + time.Minute), false},
		{"before it was served", a, tok, at.Add(-2 * time.Minute), false},
		{"another module's", b, tok, at, false},
		{"its time changed", a, "1" + tok, at, false},
		{"empty", a, "", at, false},
		{"no MAC", a, strings.Split(tok, ".")[0], at, false},
	} {
		if got := tc.c.validPageToken(tc.tok, tc.now); got != tc.want {
			t.Errorf("%s: valid %v, want %v", tc.name, got, tc.want)
		}
	}
}
