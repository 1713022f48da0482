package localapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/hosted"
	"github.com/cfe-agent/cfe-agent/localapi"
)

// callerOnlyRequests are requests the proxy must never forward with the
// profile's credentials: credential management, rate limits, a delivery in
// the company's name, routes it does not know, and disguises of them. Paths
// that are not made of clean segments (a trailing slash, "..;", an escaped
// slash) are not forwarded at all: TestProxy_UncleanPaths.
var callerOnlyRequests = []struct {
	name, method, path, body string
}{
	{"create a company key", http.MethodPost, "/api/v1/apikeys", `{"nombre":"x"}`},
	{"list company keys", http.MethodGet, "/api/v1/apikeys", ""},
	{"revoke a company key", http.MethodPost, "/api/v1/apikeys/1/revocar", `{}`},
	{"change a key's limits", http.MethodPost, "/api/v1/apikeys/1/rate-limit", `{"LimitePorMinuto":100000}`},
	{"create a user key", http.MethodPost, "/api/v1/usuario/1/apikey", `{}`},
	{"create another user's key", http.MethodPost, "/api/v1/usuario/2/apikey", `{}`},
	{"revoke a JWT", http.MethodPost, "/api/auth/revoke", `{}`},
	{"deliver a signed CFE", http.MethodPost, "/api/v1/comprobante/recibirFirmado", `{}`},
	{"unknown route", http.MethodGet, "/api/v1/no-existe", ""},
	{"unknown auth route", http.MethodPost, "/api/auth/otra", `{}`},
	{"allowed path, other method", http.MethodGet, "/api/v1/comprobante/emitir", ""},
	{"other case", http.MethodPost, "/api/v1/ApiKeys", `{"nombre":"x"}`},
	{"escaped letter", http.MethodPost, "/api/v1/comprobante/%65mitir", `{}`},
	{"non-numeric CFE id", http.MethodGet, "/api/v1/cfeemitido/apikeys", ""},
}

// TestProxy_CallerOnlyRoutes: without credentials of its own, a caller
// cannot reach credential management (or anything else outside the
// allow-list) through the proxy: refused here with 401 and a Spanish body, the
// service never sees the request and the profile never logs in for it. With
// its own credentials the request goes through as it came.
func TestProxy_CallerOnlyRoutes(t *testing.T) {
	p := startHosted(t)
	for _, profile := range []struct {
		name string
		cfg  hosted.Config
	}{
		{"JWT profile", hosted.Config{Username: proxyUser, Secret: proxyPass}},
		{"API key profile", hosted.Config{APIKey: keyCaja}},
	} {
		t.Run(profile.name, func(t *testing.T) {
			ts, _ := startProxy(t, p, profile.cfg)
			for _, rq := range callerOnlyRequests {
				t.Run(rq.name, func(t *testing.T) {
					before, logins := p.requests(), p.logins.Load()
					r := request{method: rq.method, path: rq.path}
					if rq.body != "" {
						r.headers = map[string]string{"Content-Type": "application/json"}
						r.body = jsonBody(rq.body)
					}
					resp, b := ts.send(t, r)
					var e localapi.ProxyError
					if resp.StatusCode != http.StatusUnauthorized || json.Unmarshal(b, &e) != nil || e.OK ||
						e.Code != cfe.EUNAUTHORIZED || !strings.Contains(e.Error, "credenciales del perfil") ||
						e.RequestID != resp.Header.Get("X-Request-Id") {
						t.Errorf("HTTP %d %s: want 401 with the module's Spanish error", resp.StatusCode, b)
					}
					if calls := p.callsSince(before); len(calls) != 0 {
						t.Errorf("the service saw %q", calls)
					}
					if p.logins.Load() != logins {
						t.Error("the profile logged in for a caller-only request")
					}
				})
			}
		})
	}

	t.Run("the refusal is logged without secrets", func(t *testing.T) {
		ts, _ := startProxy(t, p, hosted.Config{Username: proxyUser, Secret: proxyPass})
		ts.send(t, request{method: http.MethodPost, path: "/api/v1/apikeys",
			headers: map[string]string{"Content-Type": "application/json"}, body: jsonBody(`{"nombre":"x"}`)})
		logs := ts.logs.String()
		if !strings.Contains(logs, "needs the caller's own hosted credentials") || !strings.Contains(logs, `"path":"/api/v1/apikeys"`) {
			t.Errorf("no warning names the refused route:\n%s", logs)
		}
		if strings.Contains(logs, proxyPass) {
			t.Error("the profile's secret reached the log")
		}
	})

	t.Run("with the caller's own credentials", func(t *testing.T) {
		ts, _ := startProxy(t, p, hosted.Config{APIKey: keyCaja})
		jwt := p.login(t, proxyUser, proxyPass)
		for _, tc := range []struct {
			name, method, path, body string
			headers                  map[string]string
			wantStatus               int
			wantHeader, wantValue    string
		}{
			{"user key with the caller's JWT", http.MethodPost, "/api/v1/usuario/2/apikey", `{}`,
				map[string]string{"Authorization": "Bearer " + jwt}, 0, "Authorization", "Bearer " + jwt},
			{"company keys with the caller's own key", http.MethodGet, "/api/v1/apikeys", "",
				map[string]string{"X-API-Key": keyOtra}, http.StatusForbidden, "X-API-Key", keyOtra},
			{"unknown route with the caller's own key", http.MethodGet, "/api/v1/no-existe", "",
				map[string]string{"X-API-Key": keyOtra}, http.StatusNotFound, "X-API-Key", keyOtra},
			{"revoke the caller's JWT", http.MethodPost, "/api/auth/revoke", `{}`,
				map[string]string{"Authorization": "Bearer " + jwt}, http.StatusOK, "Authorization", "Bearer " + jwt},
		} {
			t.Run(tc.name, func(t *testing.T) {
				before := p.requests()
				r := request{method: tc.method, path: tc.path, headers: tc.headers}
				if tc.body != "" {
					r.headers["Content-Type"] = "application/json"
					r.body = jsonBody(tc.body)
				}
				resp, b := ts.send(t, r)
				if calls := p.callsSince(before); len(calls) != 1 || calls[0] != tc.method+" "+tc.path {
					t.Fatalf("HTTP %d %s; the service saw %q, want the request itself", resp.StatusCode, b, calls)
				}
				seen := p.lastSeen()
				if seen.Get(tc.wantHeader) != tc.wantValue {
					t.Errorf("the service saw %s %q, want the caller's own", tc.wantHeader, seen.Get(tc.wantHeader))
				}
				if tc.wantHeader == "Authorization" && seen.Get("X-API-Key") != "" {
					t.Error("the profile's key was added to a request with the caller's JWT")
				}
				if tc.wantStatus != 0 && resp.StatusCode != tc.wantStatus {
					t.Errorf("HTTP %d %s, want the service's %d", resp.StatusCode, b, tc.wantStatus)
				}
			})
		}
		// The user key endpoint answered for the caller's own user id only;
		// find it with the caller's JWT and check a key comes back.
		var minted string
		jwt = p.login(t, proxyUser, proxyPass) // the table revoked the first one
		for id := range 4 {
			resp, b := ts.send(t, request{method: http.MethodPost, path: "/api/v1/usuario/" + itoa(int64(id+1)) + "/apikey",
				headers: map[string]string{"Content-Type": "application/json", "Authorization": "Bearer " + jwt},
				body:    jsonBody(`{}`)})
			var k struct{ ApiKey string }
			if resp.StatusCode == http.StatusCreated && json.Unmarshal(b, &k) == nil {
				minted = k.ApiKey
			}
		}
		if minted == "" {
			t.Fatal("no user key was created with the caller's own JWT")
		}
		if jwt := p.login(t, proxyUser, minted); jwt == "" {
			t.Error("the user key does not log in")
		}
	})
}

// TestProxy_AuthForwardedAsItCame: login and password recovery carry the
// caller's credential in their body (or need none): they are forwarded as
// they came and never with the profile's credentials.
func TestProxy_AuthForwardedAsItCame(t *testing.T) {
	p := startHosted(t)
	ts, _ := startProxy(t, p, hosted.Config{Username: proxyUser, Secret: proxyPass})
	login := func(secret string) (response, []byte) {
		body, _ := json.Marshal(map[string]string{"username": proxyUser, "secret": secret})
		return ts.send(t, request{method: http.MethodPost, path: "/api/auth/login",
			headers: map[string]string{"Content-Type": "application/json"}, body: bytes.NewReader(body)})
	}
	for _, tc := range []struct {
		name       string
		secret     string
		wantStatus int
	}{
		{"the caller's own password", proxyPass, http.StatusOK},
		{"a wrong password", "no-es-la-clave", http.StatusUnauthorized},
		{"no password", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := p.requests()
			resp, b := login(tc.secret)
			if calls := p.callsSince(before); len(calls) != 1 || calls[0] != "POST /api/auth/login" {
				t.Fatalf("the service saw %q", calls)
			}
			if seen := p.lastSeen(); seen.Get("Authorization") != "" || seen.Get("X-API-Key") != "" {
				t.Errorf("a login reached the service with credentials: %v", seen)
			}
			gotToken := strings.Contains(string(b), `"token"`)
			switch {
			case tc.wantStatus != 0 && resp.StatusCode != tc.wantStatus:
				t.Errorf("HTTP %d %s, want %d", resp.StatusCode, b, tc.wantStatus)
			case resp.StatusCode != http.StatusOK && gotToken, resp.StatusCode == http.StatusOK && tc.secret != proxyPass:
				t.Errorf("HTTP %d %s: a token without the caller's own password", resp.StatusCode, b)
			case tc.secret == proxyPass && !gotToken:
				t.Errorf("HTTP %d %s: no token for the right password", resp.StatusCode, b)
			}
		})
	}
	if n := p.logins.Load(); n != 3 {
		t.Errorf("%d logins reached the service, want the caller's 3: the profile never logs in for them", n)
	}
}

// TestProxy_OverrideHeadersDropped: a request forwarded with the profile's
// credentials loses the headers that some frameworks read to route it to
// another method or path.
func TestProxy_OverrideHeadersDropped(t *testing.T) {
	p := startHosted(t)
	ts, _ := startProxy(t, p, hosted.Config{APIKey: keyCaja})
	headers := map[string]string{"X-Original-URL": "/api/v1/apikeys", "X-Rewrite-URL": "/api/v1/apikeys",
		"X-HTTP-Method-Override": "DELETE", "X-HTTP-Method": "DELETE", "X-Method-Override": "DELETE",
		"X-Original-Method": "DELETE"}
	resp, b := ts.send(t, request{path: "/api/v1/usuario/empresas", headers: headers})
	seen := p.lastSeen()
	if resp.StatusCode != http.StatusOK || seen.Get("X-API-Key") != keyCaja {
		t.Fatalf("HTTP %d %s: want the allowed query answered with the profile's key", resp.StatusCode, b)
	}
	for h := range headers {
		if seen.Get(h) != "" {
			t.Errorf("%s reached the service with the profile's key", h)
		}
	}
}
