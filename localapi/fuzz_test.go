package localapi

import (
	"mime"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"path"
	"strings"
	"testing"
)

// FuzzSecure sends requests with arbitrary Host, Origin, Content-Type,
// credentials and remote address through the whole pipeline, and checks that
// whatever gets a 2xx obeys every rule, stated here independently of the
// code: a Host from a short literal list, no Origin or an allowed one, a JSON
// body on POST, and a loopback peer or the exact token.
func FuzzSecure(f *testing.F) {
	const token = "terminal-token-0123456789"
	const origin = "https://pos.example.com"
	s := NewServer(ServerConfig{Listen: "127.0.0.1:0", AllowedOrigins: []string{origin},
		LAN:    LANConfig{Enabled: true, Tokens: []string{token}, AllowedHosts: []string{"caja1.local"}},
		Issuer: noIssuer{}, State: emptyState{}})
	if err := s.Open(); err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })

	f.Add("POST", "127.0.0.1:18787", "", "application/json", "", "127.0.0.1:5000")
	f.Add("GET", "localhost", origin, "", "", "127.0.0.1:5000")
	f.Add("GET", "[::1]:1", "", "", "Bearer "+token, "10.0.0.9:5000")
	f.Add("POST", "caja1.local.", origin, "application/json; charset=utf-8", "bearer "+token, "10.0.0.9:5000")
	f.Add("OPTIONS", "localhost", origin, "", "", "10.0.0.9:5000")
	f.Add("GET", "evil.example", "https://evil.example", "text/plain", "Bearer x", "[::1]:5000")
	f.Fuzz(func(t *testing.T, method, host, org, contentType, auth, remote string) {
		path := "/state"
		if method == http.MethodPost {
			path = "/sign-cfe"
		}
		req, err := http.NewRequest(method, "http://127.0.0.1"+path, strings.NewReader(`{"cfe":{}}`))
		if err != nil {
			return // not a request net/http would build
		}
		req.Host, req.RemoteAddr = host, remote
		for k, v := range map[string]string{"Origin": org, "Content-Type": contentType, "Authorization": auth} {
			if v != "" {
				req.Header.Set(k, v)
			}
		}
		rec := httptest.NewRecorder()
		s.handler.ServeHTTP(rec, req)

		h := rec.Header()
		if h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Cache-Control") != "no-store" || h.Get("X-Request-Id") == "" {
			t.Fatalf("status %d without the common headers: %v", rec.Code, h)
		}
		if acao := h.Get("Access-Control-Allow-Origin"); acao != "" && acao != org {
			t.Fatalf("Access-Control-Allow-Origin %q for Origin %q", acao, org)
		}
		if rec.Code >= 300 {
			return
		}
		if !loopbackOrDeclared(host) {
			t.Fatalf("Host %q let through with %d", host, rec.Code)
		}
		if org != "" && !strings.EqualFold(strings.TrimSuffix(org, "/"), origin) &&
			!strings.EqualFold(strings.TrimSuffix(org, "/"), "http://"+host) {
			t.Fatalf("Origin %q let through with %d", org, rec.Code)
		}
		if rec.Code == http.StatusNoContent {
			return // a preflight: no credentials and no route involved
		}
		peer, err := netip.ParseAddrPort(remote)
		authFields := strings.Fields(auth)
		tokenSent := len(authFields) == 2 && strings.EqualFold(authFields[0], "bearer") && authFields[1] == token
		if (err != nil || !peer.Addr().Unmap().IsLoopback()) && !tokenSent {
			t.Fatalf("peer %q with Authorization %q let through with %d", remote, auth, rec.Code)
		}
		if method == http.MethodPost {
			mt, _, err := mime.ParseMediaType(contentType)
			if err != nil || mt != "application/json" {
				t.Fatalf("POST with Content-Type %q let through", contentType)
			}
		}
	})
}

// loopbackOrDeclared reports whether a Host header names 127.0.0.1, ::1 (in
// any notation), localhost or caja1.local, with or without a port.
func loopbackOrDeclared(host string) bool {
	name := host
	if h, _, err := net.SplitHostPort(host); err == nil {
		name = h
	}
	name = strings.TrimSuffix(strings.TrimPrefix(name, "["), "]")
	if ip, err := netip.ParseAddr(name); err == nil {
		ip = ip.Unmap()
		return ip == netip.MustParseAddr("127.0.0.1") || ip == netip.IPv6Loopback()
	}
	switch strings.TrimSuffix(strings.ToLower(name), ".") {
	case "localhost", "caja1.local":
		return true
	}
	return false
}

// FuzzCleanProxyPath: whatever request target net/http accepts, a path the
// proxy passes as clean is one that no server behind it can read as another
// route, stated here independently of the code: decoded once or twice
// (a server that decodes again), it is already in path.Clean's form (no
// "." or ".." segment, no empty segment, no trailing slash), and it has no
// ";" path parameter and no backslash.
func FuzzCleanProxyPath(f *testing.F) {
	for _, s := range []string{
		"/api/v1/comprobante/previsualizar/..;", "/api/v1/cfeemitido/1%2F..%2F..%2Fapikeys", "/api/v1/a%5C..%5Cb",
		"/api/v1/%252e%252e", "/api/v1/%c0%ae", "/api/v1/cfeemitido/42/", "//api/v1/x", "/api/v1/./x",
		"/api/v1/comprobante/previsualizar/v1.2.pdf", "/api/v1/comprobante/previsualizar/a%20b", "/api/v1/%2525",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, target string) {
		u, err := url.ParseRequestURI(target)
		if err != nil || !cleanProxyPath(u.EscapedPath()) {
			return
		}
		once := u.Path
		twice, err := url.PathUnescape(once)
		if err != nil {
			twice = once // a second decoder would refuse it, or leave it as it is
		}
		for _, p := range []string{once, twice} {
			if p != path.Clean(p) || strings.ContainsAny(p, `;\`) {
				t.Fatalf("%q passed as clean, but decodes to %q", target, p)
			}
		}
	})
}
