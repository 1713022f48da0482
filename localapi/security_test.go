package localapi_test

import (
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/hosted"
	"github.com/cfe-agent/cfe-agent/localapi"
)

const allowedOrigin = "https://pos.example.com"

func TestSecurity_Host(t *testing.T) {
	ts := startServer(t, func(c *localapi.ServerConfig) { c.LAN.AllowedHosts = []string{"Caja1.local"} })
	port := portOf(t, ts.srv)
	tests := []struct {
		host string
		want int
	}{
		{fmt.Sprintf("127.0.0.1:%d", port), http.StatusOK},
		{fmt.Sprintf("localhost:%d", port), http.StatusOK},
		{"LOCALHOST.", http.StatusOK},
		{fmt.Sprintf("[::1]:%d", port), http.StatusOK},
		{fmt.Sprintf("caja1.local:%d", port), http.StatusOK}, // declared, compared without case
		// DNS rebinding: the attacker's name resolves to 127.0.0.1.
		{fmt.Sprintf("attacker.example:%d", port), http.StatusForbidden},
		{"localhost.attacker.example", http.StatusForbidden},
		{fmt.Sprintf("127.0.0.2:%d", port), http.StatusForbidden}, // loopback, but not this listener
		{fmt.Sprintf("0.0.0.0:%d", port), http.StatusForbidden},   // not the configured IP here
	}
	for _, tc := range tests {
		t.Run(tc.host, func(t *testing.T) {
			resp, body := ts.send(t, request{path: "/health", host: tc.host})
			if resp.StatusCode != tc.want {
				t.Fatalf("Host %q: status %d, want %d: %s", tc.host, resp.StatusCode, tc.want, body)
			}
			if tc.want == http.StatusForbidden {
				m := decodeObject(t, body)
				if m["ok"] != false || !strings.Contains(m["error"].(string), "Host") || len(m) != 2 {
					t.Fatalf("refusal body %s, want {ok:false, error} naming Host", body)
				}
			}
		})
	}

	t.Run("sign-cfe refusals keep its shape", func(t *testing.T) {
		resp, body := ts.send(t, request{method: http.MethodPost, path: "/sign-cfe", host: "attacker.example",
			headers: map[string]string{"Content-Type": "application/json"}, body: jsonBody(`{}`)})
		m := decodeObject(t, body)
		if resp.StatusCode != http.StatusForbidden || m["codigo_respuesta"] != "01" || m["mensaje_respuesta"] == "" {
			t.Fatalf("status %d body %s, want 403 in the sign-cfe shape", resp.StatusCode, body)
		}
		errs, _ := m["errores"].([]any)
		if len(errs) != 1 || errs[0].(map[string]any)["campo"] != "Host" {
			t.Fatalf("errores %v, want one about Host", m["errores"])
		}
	})
}

func TestSecurity_Origin(t *testing.T) {
	ts := startServer(t, func(c *localapi.ServerConfig) { c.AllowedOrigins = []string{allowedOrigin} })

	t.Run("foreign origin is refused", func(t *testing.T) {
		for _, origin := range []string{"https://evil.example", "null", "https://pos.example.com.evil.example"} {
			resp, body := ts.send(t, request{path: "/state", headers: map[string]string{"Origin": origin}})
			if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Access-Control-Allow-Origin") != "" {
				t.Fatalf("Origin %q: status %d, ACAO %q: %s", origin, resp.StatusCode,
					resp.Header.Get("Access-Control-Allow-Origin"), body)
			}
		}
	})

	t.Run("foreign preflight is refused", func(t *testing.T) {
		resp, _ := ts.send(t, request{method: http.MethodOptions, path: "/sign-cfe", headers: map[string]string{
			"Origin": "https://evil.example", "Access-Control-Request-Method": "POST",
			"Access-Control-Request-Private-Network": "true"}})
		if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Access-Control-Allow-Origin") != "" ||
			resp.Header.Get("Access-Control-Allow-Private-Network") != "" {
			t.Fatalf("status %d headers %v, want 403 without CORS headers", resp.StatusCode, resp.Header)
		}
	})

	t.Run("allowed preflight", func(t *testing.T) {
		resp, body := ts.send(t, request{method: http.MethodOptions, path: "/sign-cfe", headers: map[string]string{
			"Origin": allowedOrigin, "Access-Control-Request-Method": "POST",
			"Access-Control-Request-Headers":         "content-type,x-cfe-token",
			"Access-Control-Request-Private-Network": "true"}})
		h := resp.Header
		if resp.StatusCode != http.StatusNoContent || len(body) != 0 {
			t.Fatalf("preflight status %d body %q, want 204 empty", resp.StatusCode, body)
		}
		if h.Get("Access-Control-Allow-Origin") != allowedOrigin {
			t.Fatalf("ACAO = %q, want the origin itself", h.Get("Access-Control-Allow-Origin"))
		}
		if !hasToken(h.Get("Access-Control-Allow-Methods"), "POST") {
			t.Fatalf("Allow-Methods %q lacks POST", h.Get("Access-Control-Allow-Methods"))
		}
		for _, want := range []string{"Content-Type", "X-CFE-Token", "Authorization"} {
			if !hasToken(h.Get("Access-Control-Allow-Headers"), want) {
				t.Fatalf("Allow-Headers %q lacks %s", h.Get("Access-Control-Allow-Headers"), want)
			}
		}
		if h.Get("Access-Control-Allow-Private-Network") != "true" {
			t.Fatal("private network access not granted to an allowed origin that asked")
		}
		if !hasToken(strings.Join(h.Values("Vary"), ","), "Origin") {
			t.Fatalf("Vary %v lacks Origin", h.Values("Vary"))
		}
		for k, vs := range h {
			for _, v := range vs {
				if strings.HasPrefix(k, "Access-Control-") && v == "*" {
					t.Fatalf("%s: * given", k)
				}
			}
		}
	})

	t.Run("private network only when asked", func(t *testing.T) {
		resp, _ := ts.send(t, request{method: http.MethodOptions, path: "/sign-cfe", headers: map[string]string{
			"Origin": allowedOrigin, "Access-Control-Request-Method": "POST"}})
		if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Private-Network") != "" {
			t.Fatalf("status %d, ACAPN %q: want 204 without private network access", resp.StatusCode,
				resp.Header.Get("Access-Control-Allow-Private-Network"))
		}
	})

	t.Run("allowed origin gets CORS on the real request", func(t *testing.T) {
		resp, _ := ts.send(t, request{path: "/health", headers: map[string]string{"Origin": allowedOrigin}})
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Access-Control-Allow-Origin") != allowedOrigin ||
			!hasToken(resp.Header.Get("Access-Control-Expose-Headers"), "X-Request-Id") {
			t.Fatalf("status %d headers %v", resp.StatusCode, resp.Header)
		}
	})

	t.Run("no origin and same origin pass without CORS", func(t *testing.T) {
		for _, origin := range []string{"", ts.srv.BaseURL()} {
			resp, _ := ts.send(t, request{path: "/health", headers: map[string]string{"Origin": origin}})
			if resp.StatusCode != http.StatusOK || resp.Header.Get("Access-Control-Allow-Origin") != "" {
				t.Fatalf("Origin %q: status %d, ACAO %q", origin, resp.StatusCode, resp.Header.Get("Access-Control-Allow-Origin"))
			}
		}
	})
}

// hasToken reports whether a comma-separated header value lists tok (any case).
func hasToken(list, tok string) bool {
	for _, v := range strings.Split(list, ",") {
		if strings.EqualFold(strings.TrimSpace(v), tok) {
			return true
		}
	}
	return false
}

func TestSecurity_Body(t *testing.T) {
	const limit = 1024
	ts := startServer(t, func(c *localapi.ServerConfig) { c.BodyLimit = limit })

	t.Run("content types", func(t *testing.T) {
		tests := []struct {
			ct   string
			want int // 415, or anything else when accepted
		}{
			{"text/plain", http.StatusUnsupportedMediaType},
			{"text/plain;charset=UTF-8", http.StatusUnsupportedMediaType},
			{"application/x-www-form-urlencoded", http.StatusUnsupportedMediaType},
			{"multipart/form-data; boundary=x", http.StatusUnsupportedMediaType},
			{"application/json; charset=latin1", http.StatusUnsupportedMediaType},
			{"", http.StatusUnsupportedMediaType},
			{"application/json", http.StatusOK},
			{"Application/JSON; charset=UTF-8", http.StatusOK},
		}
		for _, tc := range tests {
			resp, body := ts.send(t, request{method: http.MethodPost, path: "/sign-cfe",
				headers: map[string]string{"Content-Type": tc.ct}, body: jsonBody(`{"uuid":"u-1","cfe":{}}`)})
			if (tc.want == http.StatusUnsupportedMediaType) != (resp.StatusCode == http.StatusUnsupportedMediaType) {
				t.Fatalf("Content-Type %q: status %d: %s", tc.ct, resp.StatusCode, body)
			}
			m := decodeObject(t, body)
			if tc.want == http.StatusUnsupportedMediaType && (m["codigo_respuesta"] != "01" || m["mensaje_respuesta"] == "") {
				t.Fatalf("415 body %s, want the sign-cfe shape", body)
			}
		}
	})

	t.Run("oversize with Content-Length", func(t *testing.T) {
		big := `{"adenda":"` + strings.Repeat("x", 2*limit) + `","cfe":{}}`
		resp, body := ts.send(t, request{method: http.MethodPost, path: "/sign-cfe",
			headers: map[string]string{"Content-Type": "application/json"}, body: jsonBody(big)})
		m := decodeObject(t, body)
		if resp.StatusCode != http.StatusRequestEntityTooLarge || m["codigo_respuesta"] != "01" {
			t.Fatalf("status %d body %s, want 413 in the sign-cfe shape", resp.StatusCode, body)
		}
	})

	t.Run("oversize chunked", func(t *testing.T) {
		big := `{"adenda":"` + strings.Repeat("x", 2*limit) + `","cfe":{}}`
		// An io.Reader of unknown length makes the client send chunks.
		resp, body := ts.send(t, request{method: http.MethodPost, path: "/sign-cfe",
			headers: map[string]string{"Content-Type": "application/json"},
			body:    io.MultiReader(strings.NewReader(big))})
		m := decodeObject(t, body)
		if resp.StatusCode != http.StatusRequestEntityTooLarge || m["codigo_respuesta"] != "01" ||
			!strings.Contains(m["mensaje_respuesta"].(string), "1024 bytes") {
			t.Fatalf("status %d body %s, want 413 naming the limit", resp.StatusCode, body)
		}
	})
}

func TestSecurity_Headers(t *testing.T) {
	ts := startServer(t, func(c *localapi.ServerConfig) { c.AllowedOrigins = []string{allowedOrigin} })
	for _, r := range []request{
		{path: "/health"},
		{path: "/state"},
		{path: "/no-such-route"},
		{path: "/health", host: "attacker.example"},
		{path: "/health", headers: map[string]string{"Origin": "https://evil.example"}},
		{method: http.MethodPost, path: "/sign-cfe", headers: map[string]string{"Content-Type": "text/plain"}, body: jsonBody("{}")},
		{method: http.MethodGet, path: "/sign-cfe"},
	} {
		resp, _ := ts.send(t, r)
		if resp.Header.Get("X-Content-Type-Options") != "nosniff" || resp.Header.Get("Cache-Control") != "no-store" {
			t.Fatalf("%s %s (status %d): headers %v lack nosniff/no-store", r.method, r.path, resp.StatusCode, resp.Header)
		}
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
			t.Fatalf("%s %s: Content-Type %q", r.method, r.path, resp.Header.Get("Content-Type"))
		}
	}

	t.Run("unknown route", func(t *testing.T) {
		resp, body := ts.send(t, request{path: "/no-such-route"})
		m := decodeObject(t, body)
		if resp.StatusCode != http.StatusNotFound || m["ok"] != false || m["error"] == "" {
			t.Fatalf("status %d body %s, want 404 {ok:false,error}", resp.StatusCode, body)
		}
	})

	t.Run("wrong method", func(t *testing.T) {
		resp, body := ts.send(t, request{path: "/sign-cfe"})
		m := decodeObject(t, body)
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" || m["codigo_respuesta"] != "01" {
			t.Fatalf("status %d Allow %q body %s, want 405, Allow: POST, sign-cfe shape",
				resp.StatusCode, resp.Header.Get("Allow"), body)
		}
		resp, _ = ts.send(t, request{method: http.MethodPost, path: "/state",
			headers: map[string]string{"Content-Type": "application/json"}, body: jsonBody("{}")})
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "GET" {
			t.Fatalf("POST /state: status %d Allow %q", resp.StatusCode, resp.Header.Get("Allow"))
		}
	})
}

func TestSecurity_AccessLog(t *testing.T) {
	const token = "very-secret-terminal-token"
	const bodyMarker = "adenda-that-must-not-be-logged"
	ts := startServer(t, func(c *localapi.ServerConfig) {
		c.LAN = localapi.LANConfig{Enabled: true, Tokens: []string{token}}
	})

	resp, _ := ts.send(t, request{method: http.MethodPost, path: "/sign-cfe", headers: map[string]string{
		"Content-Type": "application/json", "Authorization": "Bearer " + token, "X-CFE-Token": token,
		"X-Request-Id": "pos-42.a_b"}, body: jsonBody(`{"adenda":"` + bodyMarker + `","cfe":{}}`)})
	if got := resp.Header.Get("X-Request-Id"); got != "pos-42.a_b" {
		t.Fatalf("X-Request-Id = %q, want the caller's id echoed", got)
	}
	resp2, _ := ts.send(t, request{path: "/health", headers: map[string]string{"X-Request-Id": "bad id {with} spaces"}})
	generated := resp2.Header.Get("X-Request-Id")
	if !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(generated) {
		t.Fatalf("X-Request-Id = %q, want a generated id replacing a malformed one", generated)
	}
	ts.send(t, request{path: "/health", host: "attacker.example"})

	logs := ts.logs.String()
	for _, secret := range []string{token, bodyMarker, "Bearer"} {
		if strings.Contains(logs, secret) {
			t.Fatalf("the log contains %q:\n%s", secret, logs)
		}
	}
	var access, refused []map[string]any
	for _, l := range ts.logLines(t) {
		switch l["msg"] {
		case "http request":
			access = append(access, l)
		case "request refused":
			refused = append(refused, l)
		}
	}
	if len(access) != 3 {
		t.Fatalf("%d access log lines, want 3:\n%s", len(access), logs)
	}
	first := access[0]
	if first["request_id"] != "pos-42.a_b" || first["method"] != "POST" || first["path"] != "/sign-cfe" ||
		first["status"] != float64(200) || first["remote"] != "127.0.0.1" {
		t.Fatalf("access line %v lacks id, method, path, status or remote", first)
	}
	if access[1]["request_id"] != generated {
		t.Fatalf("access line %v does not carry the generated id %s", access[1], generated)
	}
	if len(refused) != 1 || refused[0]["reason"] != "host not allowed" || refused[0]["host"] != "attacker.example" {
		t.Fatalf("refusal lines %v, want one saying why", refused)
	}
}

// TestSecurity_FetchSite sends every combination of Sec-Fetch-Site and Origin
// a browser or a native client can produce to each kind of route, with the
// proxy in front of the sandbox, and checks which ones are refused, in which
// shape, and that refused ones never reach the hosted service.
func TestSecurity_FetchSite(t *testing.T) {
	const sameSiteOrigin = "http://127.0.0.1:3000" // another port of the module's host: same-site, but allowed
	p := startHosted(t)
	ts, _ := startProxy(t, p, hosted.Config{APIKey: keyCaja}, func(c *localapi.ServerConfig) {
		c.AllowedOrigins = []string{allowedOrigin, sameSiteOrigin}
	})
	own := ts.srv.BaseURL()
	otherPort := "http://127.0.0.1:1" // same-site, not allowed

	routes := []struct {
		method, path, ct, body string
		sign                   bool // the /sign-cfe error shape
	}{
		{method: http.MethodGet, path: "/health"},
		{method: http.MethodGet, path: "/state"},
		{method: http.MethodGet, path: "/"},
		{method: http.MethodPost, path: "/sign-cfe", ct: "application/json", body: `{"uuid":"u-1","cfe":{}}`, sign: true},
		{method: http.MethodPost, path: "/pdf", ct: "application/json", body: `{"uuid":"u-1"}`},
		{method: http.MethodGet, path: "/api/v1/cfeemitido/buscar?tipoFiltro=101"},
		{method: http.MethodPost, path: "/api/v1/comprobante/emitir", ct: "application/json", body: `{}`},
		{method: http.MethodPost, path: "/api/v1/comprobante/anular", ct: "application/x-www-form-urlencoded", body: "idCfeReferencia=1"},
		{method: http.MethodGet, path: "/no-such-route"},
	}
	tests := []struct {
		name, site, origin string
		refusedBy          string // "" when the request passes, else the field the refusal names
	}{
		{"native client", "", "", ""},
		{"native client with an allowed origin", "", allowedOrigin, ""},
		{"navigation by the user", "none", "", ""},
		{"the module's own page", "same-origin", "", ""},
		{"the module's own page with Origin", "same-origin", own, ""},
		{"cross-site without Origin", "cross-site", "", "Sec-Fetch-Site"},
		{"cross-site in capitals", "CROSS-SITE", "", "Sec-Fetch-Site"},
		{"same-site without Origin", "same-site", "", "Sec-Fetch-Site"},
		{"cross-site from an allowed origin", "cross-site", allowedOrigin, ""},
		{"same-site from an allowed origin", "same-site", sameSiteOrigin, ""},
		{"same-site from another port", "same-site", otherPort, "Origin"},
		{"cross-site with Origin null", "cross-site", "null", "Origin"},
		{"cross-site claiming the module's origin", "cross-site", own, "Sec-Fetch-Site"},
		{"unknown value", "elsewhere", "", "Sec-Fetch-Site"},
		{"two values", "same-origin, cross-site", "", "Sec-Fetch-Site"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, rt := range routes {
				headers := map[string]string{"Sec-Fetch-Site": tc.site, "Origin": tc.origin, "Content-Type": rt.ct}
				var body io.Reader
				if rt.body != "" {
					body = strings.NewReader(rt.body)
				}
				before := p.requests()
				resp, b := ts.send(t, request{method: rt.method, path: rt.path, headers: headers, body: body})
				forwarded := p.requests() - before
				what := rt.method + " " + rt.path
				if tc.refusedBy == "" {
					if resp.StatusCode == http.StatusForbidden {
						t.Errorf("%s: refused: %s", what, b)
					}
					if strings.HasPrefix(rt.path, "/api/") && forwarded != 1 {
						t.Errorf("%s: %d requests reached the service, want 1", what, forwarded)
					}
					continue
				}
				if resp.StatusCode != http.StatusForbidden || forwarded != 0 {
					t.Errorf("%s: status %d, %d requests forwarded: want 403 and none: %s", what, resp.StatusCode, forwarded, b)
					continue
				}
				if resp.Header.Get("Access-Control-Allow-Origin") != "" {
					t.Errorf("%s: a refusal carries CORS headers", what)
				}
				m := decodeObject(t, b)
				if rt.sign {
					errs, _ := m["errores"].([]any)
					if m["codigo_respuesta"] != "01" || m["mensaje_respuesta"] == "" || len(errs) != 1 ||
						errs[0].(map[string]any)["campo"] != tc.refusedBy {
						t.Errorf("%s: body %s, want the sign-cfe shape naming %s", what, b, tc.refusedBy)
					}
					continue
				}
				want := map[string]string{"Sec-Fetch-Site": "desde otra página", "Origin": "origen"}[tc.refusedBy]
				msg, _ := m["error"].(string)
				if m["ok"] != false || len(m) != 2 || !strings.Contains(msg, want) {
					t.Errorf("%s: body %s, want {ok:false, error} saying %q", what, b, want)
				}
			}
		})
	}

	t.Run("refusals are logged with their reason", func(t *testing.T) {
		n := 0
		for _, l := range ts.logLines(t) {
			if l["msg"] == "request refused" && l["reason"] == "cross-site browser request" {
				n++
			}
		}
		if want := 6 * len(routes); n != want {
			t.Errorf("%d refusals logged as cross-site, want %d", n, want)
		}
	})
}
