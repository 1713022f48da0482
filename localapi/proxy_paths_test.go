package localapi_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/hosted"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// uncleanPaths are request targets of the proxy's area whose path has a
// segment that is empty, dots only, has ";" or "\", or escapes ".", "/",
// "\", ";", "%" or a control character: a server behind the proxy (Tomcat
// and Spring read "..;" as "..") could resolve them to another route than
// the one the proxy's table matched. Each is written as it goes on the wire.
var uncleanPaths = []struct{ method, target string }{
	{http.MethodGet, "/api/v1/comprobante/previsualizar/..;"},
	{http.MethodGet, "/api/v1/comprobante/previsualizar/..;/..;/apikeys"},
	{http.MethodGet, "/api/v1/comprobante/previsualizar/abc;jsessionid=1"},
	{http.MethodGet, "/api/v1/comprobante/previsualizar/.;"},
	{http.MethodGet, "/api/v1/comprobante/previsualizar/."},
	{http.MethodGet, "/api/v1/comprobante/previsualizar/.."},
	{http.MethodGet, "/api/v1/comprobante/previsualizar/..."},
	{http.MethodGet, "/api/v1/comprobante/previsualizar/%2e%2e"},
	{http.MethodGet, "/api/v1/comprobante/previsualizar/%2E%2E"},
	{http.MethodGet, "/api/v1/comprobante/previsualizar/.%2e"},
	{http.MethodGet, "/api/v1/comprobante/previsualizar/abc%2eold"},
	{http.MethodGet, "/api/v1/comprobante/previsualizar/..%3b"},
	{http.MethodGet, "/api/v1/comprobante/previsualizar/..%3B"},
	{http.MethodGet, "/api/v1/cfeemitido/1%2F..%2F..%2Fapikeys"},
	{http.MethodGet, "/api/v1/cfeemitido/1%2f..%2fapikeys"},
	{http.MethodGet, "/api/v1/comprobante/previsualizar/a%5c..%5capikeys"},
	{http.MethodGet, "/api/v1/comprobante/previsualizar/a%5C..%5Capikeys"},
	{http.MethodGet, `/api/v1/comprobante/previsualizar/a\..\..\apikeys`},
	{http.MethodGet, "/api/v1/comprobante/previsualizar/%252e%252e"},
	{http.MethodGet, "/api/v1/comprobante/previsualizar/%c0%ae%c0%ae"},
	{http.MethodGet, "/api/v1/comprobante/previsualizar/abc%00"},
	{http.MethodGet, "/api/v1/comprobante/previsualizar/abc%0a"},
	{http.MethodGet, "/api/v1/cfeemitido/42/"},
	{http.MethodGet, "/api/v1/cfeemitido//42"},
	{http.MethodGet, "/api/v1//apikeys"},
	{http.MethodGet, "//api/v1/cfeemitido/42"},
	{http.MethodGet, "/api/v1/./cfeemitido/42"},
	{http.MethodGet, "/api/v1/cfeemitido/x/../42"},
	{http.MethodGet, "/api/v1/cfeemitido/../apikeys"},
	{http.MethodGet, "/api/v1/"},
	{http.MethodGet, "/api/v1/.."},
	{http.MethodGet, "/api/./v1/cfeemitido/42"},
	{http.MethodGet, "/api%2fv1/cfeemitido/42"},
	{http.MethodGet, "/health/../api/v1/cfeemitido/42"},
	{http.MethodPost, "/api/v1/comprobante/emitir/"},
	{http.MethodPost, "/api/v1/comprobante/emitir;"},
	{http.MethodPost, "/api/v1/comprobante/emitir%3b"},
	{http.MethodPost, "/api/v1/comprobante/emitir/."},
	{http.MethodPost, "/api/v1/comprobante/anular/..;/emitir"},
	{http.MethodPost, "/api/v1/apikeys/1/revocar/"},
	{http.MethodPost, "/api/auth/login/"},
	{http.MethodPost, "/api/auth/login;"},
	{http.MethodPost, "/auth/refresh/"},
	{http.MethodPost, "/auth/refresh;x"},
	{http.MethodPost, "/auth/./refresh"},
}

// rawSend writes one HTTP/1.1 request to the module exactly as given (no
// client cleans or escapes its target) and reads the answer.
func rawSend(t *testing.T, base, method, target string, headers map[string]string) (int, []byte) {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.DialTimeout("tcp", u.Host, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	var req strings.Builder
	fmt.Fprintf(&req, "%s %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n", method, target, u.Host)
	for k, v := range headers {
		fmt.Fprintf(&req, "%s: %s\r\n", k, v)
	}
	if method == http.MethodPost {
		req.WriteString("Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}")
	} else {
		req.WriteString("\r\n")
	}
	if _, err := io.WriteString(conn, req.String()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// TestProxy_UncleanPaths: a path of the proxy's area that is not made of
// clean segments gets the module's answer to a route it does not have (404,
// {ok, error}), and nothing reaches the service (a real one on loopback that
// records every request): not with the profile's credentials, not with the
// caller's own, and the profile does not log in for it. The same routes
// written cleanly still go through, so the refusals are the paths'.
func TestProxy_UncleanPaths(t *testing.T) { // not parallel: startServer sets TZ
	p := startHosted(t)
	for _, profile := range []struct {
		name string
		cfg  hosted.Config
	}{
		{"API key profile", hosted.Config{APIKey: keyCaja}},
		{"JWT profile", hosted.Config{Username: proxyUser, Secret: proxyPass}},
	} {
		ts, _ := startProxy(t, p, profile.cfg)
		base := ts.srv.BaseURL()
		for _, own := range []map[string]string{nil, {"X-API-Key": keyOtra}} {
			for _, rq := range uncleanPaths {
				before, logins := p.requests(), p.logins.Load()
				status, b := rawSend(t, base, rq.method, rq.target, own)
				var e apitype.PlainError
				if status != http.StatusNotFound || json.Unmarshal(b, &e) != nil || e.OK ||
					!strings.Contains(e.Error, "no existe la ruta") || !strings.Contains(e.Error, "en el módulo local") {
					t.Errorf("%s, own credentials %v: %s %s: HTTP %d %s, want 404 unknown route",
						profile.name, own != nil, rq.method, rq.target, status, b)
				}
				if calls := p.callsSince(before); len(calls) != 0 {
					t.Errorf("%s, own credentials %v: %s %s reached the service as %q",
						profile.name, own != nil, rq.method, rq.target, calls)
				}
				if p.logins.Load() != logins {
					t.Errorf("%s: the profile logged in for %s %s", profile.name, rq.method, rq.target)
				}
			}
		}
		if logs := ts.logs.String(); !strings.Contains(logs, "not made of clean segments") ||
			!strings.Contains(logs, `"path":"/api/v1/comprobante/previsualizar/..;"`) {
			t.Errorf("%s: no warning names a refused path:\n%s", profile.name, logs)
		}

		// Clean forms of the same routes are forwarded, with the profile's
		// credentials where the table says so.
		for _, rq := range []struct{ method, target, reached string }{
			{http.MethodGet, "/api/v1/comprobante/previsualizar/abc", "GET /api/v1/comprobante/previsualizar/abc"},
			{http.MethodGet, "/api/v1/comprobante/previsualizar/v1.2.pdf", "GET /api/v1/comprobante/previsualizar/v1.2.pdf"},
			{http.MethodGet, "/api/v1/comprobante/previsualizar/a%20b", "GET /api/v1/comprobante/previsualizar/a b"},
			{http.MethodGet, "/api/v1/cfeemitido/42?x=../..;", "GET /api/v1/cfeemitido/42"},
			{http.MethodPost, "/auth/refresh", "POST /auth/refresh"},
		} {
			before := p.requests()
			status, b := rawSend(t, base, rq.method, rq.target, nil)
			var calls []string // but the JWT profile's own logins and refreshes
			for _, c := range p.callsSince(before) {
				if c != "POST /api/auth/login" && c != "POST /api/auth/refresh" {
					calls = append(calls, c)
				}
			}
			if len(calls) != 1 || calls[0] != rq.reached {
				t.Errorf("%s: %s %s: HTTP %d %s; the service saw %q, want %q", profile.name, rq.method, rq.target,
					status, b, calls, rq.reached)
			}
		}
	}
}
