package localapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gorilla/mux"
)

// localRoutes walks s's router: every method and path of the module itself
// (not the proxy's routes, described in docs/hosted.md, nor the favicon).
func localRoutes(t *testing.T, s *Server) [][2]string {
	t.Helper()
	var out [][2]string
	err := s.router.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		path, err := route.GetPathTemplate()
		if err != nil || strings.HasPrefix(path, "/api/") || strings.HasPrefix(path, "/auth/") || path == "/favicon.ico" {
			return nil
		}
		methods, err := route.GetMethods()
		if err != nil {
			methods = []string{http.MethodGet}
		}
		for _, m := range methods {
			if m != http.MethodHead && m != http.MethodOptions {
				out = append(out, [2]string{m, path})
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestOpenAPI_4XXAnswers walks the router and provokes, on each route of a
// module in LAN mode, the client errors every request can meet — a Host
// that does not name the agent, a foreign Origin, a cross-site browser
// request, a caller from another machine without its token and, pressed on,
// throttled; on POST routes a body that is not JSON, one too large, one
// broken — and checks that openapi.json lists each status the module
// answered for that route, and that the LAN token is a declared security
// scheme the routes require.
func TestOpenAPI_4XXAnswers(t *testing.T) {
	t.Parallel()
	var doc struct {
		Security []map[string][]string `json:"security"`
		Paths    map[string]map[string]struct {
			Security  []map[string][]string      `json:"security"`
			Responses map[string]json.RawMessage `json:"responses"`
		} `json:"paths"`
		Components struct {
			SecuritySchemes map[string]struct {
				Type   string `json:"type"`
				Scheme string `json:"scheme"`
				In     string `json:"in"`
				Name   string `json:"name"`
			} `json:"securitySchemes"`
		} `json:"components"`
	}
	if err := json.Unmarshal(OpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	// Each route gets a module of its own: the LAN throttle's ceiling, once
	// one route's probes reach it, would answer the next route's first
	// request 429 instead of 401.
	const token = "vq3k-8hrt-2mxz-pw7c-ye4n-g6ad-f9bs"
	open := func() *Server {
		s := NewServer(ServerConfig{Listen: "127.0.0.1:0", LAN: LANConfig{Enabled: true, Tokens: []string{token}},
			Issuer: noIssuer{}, State: emptyState{}})
		if err := s.Open(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}

	// The schemes: the terminal token as a bearer token or in X-CFE-Token.
	schemes := map[string]bool{}
	for name, sc := range doc.Components.SecuritySchemes {
		switch {
		case sc.Type == "http" && strings.EqualFold(sc.Scheme, "bearer"):
			schemes[name] = true
		case sc.Type == "apiKey" && sc.In == "header" && sc.Name == "X-CFE-Token":
			schemes[name] = true
		}
	}
	if len(schemes) != 2 {
		t.Errorf("openapi.json declares %d of the terminal token's two schemes (Bearer, X-CFE-Token): %+v", len(schemes), doc.Components.SecuritySchemes)
	}
	var anonymous, bySchemes bool
	for _, req := range doc.Security {
		anonymous = anonymous || len(req) == 0
		for name := range req {
			bySchemes = bySchemes || schemes[name]
		}
	}
	if !anonymous || !bySchemes {
		t.Errorf("the description's security %v does not say: none on loopback, the terminal token in LAN mode", doc.Security)
	}

	var s *Server
	serve := func(method, path, remote string, headers map[string]string, body string) int {
		req := httptest.NewRequest(method, s.BaseURL()+path, strings.NewReader(body))
		req.RemoteAddr = remote
		for k, v := range headers {
			req.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		s.handler.ServeHTTP(rec, req)
		return rec.Code
	}
	routes := localRoutes(t, open())
	if len(routes) < 8 {
		t.Fatalf("walked only %d local routes: has the router's layout changed?", len(routes))
	}
	for i, r := range routes {
		method, path := r[0], r[1]
		s = open()
		op, ok := doc.Paths[path][strings.ToLower(method)]
		if !ok {
			t.Errorf("%s %s is not described", method, path)
			continue
		}
		got := map[int]string{}
		note := func(code int, why string) {
			if code >= 400 && code < 500 {
				got[code] = why
			}
		}
		jsonType := map[string]string{"Content-Type": "application/json"}
		with := func(extra map[string]string) map[string]string {
			h := map[string]string{"Content-Type": "application/json"}
			for k, v := range extra {
				h[k] = v
			}
			return h
		}
		note(serve(method, path, "127.0.0.1:40000", with(map[string]string{"Host": "evil.example:18787"}), "{}"), "a Host that is not the agent's")
		note(serve(method, path, "127.0.0.1:40000", with(map[string]string{"Origin": "https://evil.example"}), "{}"), "a foreign Origin")
		note(serve(method, path, "127.0.0.1:40000", with(map[string]string{"Sec-Fetch-Site": "cross-site"}), "{}"), "a cross-site request")
		const remote = "192.0.2.10:40000"
		note(serve(method, path, remote, jsonType, "{}"), "another machine without its token")
		for range 200 { // pressed on with wrong tokens: throttled
			code := serve(method, path, remote, with(map[string]string{"X-CFE-Token": "wrong-" + strconv.Itoa(i)}), "{}")
			if code == http.StatusTooManyRequests {
				note(code, "wrong tokens, pressed on")
				break
			}
		}
		if method == http.MethodPost {
			note(serve(method, path, "127.0.0.1:40000", map[string]string{"Content-Type": "text/plain"}, "{}"), "a body that is not JSON")
			note(serve(method, path, "127.0.0.1:40000", jsonType, `{"x":"`+strings.Repeat("a", int(DefaultBodyLimit)+10)+`"}`), "a body too large")
			note(serve(method, path, "127.0.0.1:40000", jsonType, `{`), "broken JSON")
		}
		wants := []int{http.StatusForbidden, http.StatusUnauthorized, http.StatusTooManyRequests}
		if openPage(httptest.NewRequest(method, path, nil)) {
			// The /caja page's HTML holds no data and is served without the
			// LAN token (the page then asks for it): no 401, hence no 429.
			wants = wants[:1]
		}
		for _, want := range wants {
			if _, ok := got[want]; !ok {
				t.Errorf("%s %s never answered %d: the probes no longer reach the security rules (%v)", method, path, want, got)
			}
		}
		var listed []string
		for code := range op.Responses {
			listed = append(listed, code)
		}
		for code, why := range got {
			if !slices.Contains(listed, strconv.Itoa(code)) && !slices.Contains(listed, "4XX") {
				t.Errorf("%s %s answers %d (%s), which openapi.json does not list (it lists %v)", method, path, code, why, listed)
			}
		}
		// In LAN mode every route but the admin's ones asks for the terminal
		// token: the description's security (or the route's own) says so.
		sec := doc.Security
		if op.Security != nil {
			sec = op.Security
		}
		if len(sec) == 0 {
			t.Errorf("%s %s: no security requirement", method, path)
		}
	}
}
