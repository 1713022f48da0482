//go:build linux

package localapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/hosted"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// Environment of TestHelperUnprivilegedClient: the agent's address and a
// file only root can read, standing for the profile's config.yaml.
const (
	envUnprivURL    = "CFE_LOCALAPI_UNPRIV_URL"
	envUnprivSecret = "CFE_LOCALAPI_UNPRIV_SECRET_FILE"
)

// nobodyID is the uid and gid of nobody/nogroup on Linux.
const nobodyID = "65534"

// unprivCall is one call the unprivileged client made, as it reports it.
type unprivCall struct {
	Name   string `json:"name"`
	Method string `json:"method"`
	Path   string `json:"path"`
	Status int    `json:"status"`
	Body   []byte `json:"body"`
}

// credentialCalls are what a local user without credentials tries in order
// to get (or take away) hosted credentials through the agent.
var credentialCalls = []struct{ name, method, path, body string }{
	{"create a company key", http.MethodPost, "/api/v1/apikeys", `{"nombre":"x"}`},
	{"list company keys", http.MethodGet, "/api/v1/apikeys", ""},
	{"create a user key (user 1)", http.MethodPost, "/api/v1/usuario/1/apikey", `{}`},
	{"create a user key (user 2)", http.MethodPost, "/api/v1/usuario/2/apikey", `{}`},
	{"raise a key's limits", http.MethodPost, "/api/v1/apikeys/1/rate-limit", `{"LimitePorMinuto":100000}`},
	{"revoke a company key", http.MethodPost, "/api/v1/apikeys/1/revocar", `{}`},
	{"revoke the session", http.MethodPost, "/api/auth/revoke", `{}`},
	{"log in without a secret", http.MethodPost, "/api/auth/login", `{"username":"` + proxyUser + `"}`},
	{"log in with a guess", http.MethodPost, "/api/auth/login", `{"username":"` + proxyUser + `","secret":"1234"}`},
	{"refresh without a token", http.MethodPost, "/api/auth/refresh", `{}`},
}

// TestProxy_UnprivilegedUser is the "done when": a local OS user
// that cannot read the profile (nobody, switched to with setpriv) obtains no
// credential through the agent, while CFE operations through the proxy still
// work for it. The client is this test binary, copied where nobody can run
// it, making real HTTP calls to the agent on 127.0.0.1; the hosted peer is
// the sandbox.
func TestProxy_UnprivilegedUser(t *testing.T) {
	if os.Geteuid() != 0 { // also under CFE_STRICT_TOOLS=1: no tool is missing
		t.Skip("running a client as nobody needs root (CI runs the tests as root)")
	}
	setpriv := testtool.Require(t, "setpriv")

	// A directory nobody can enter and execute from, outside the test's
	// 0700 temporary directories.
	dir, err := os.MkdirTemp("", "cfe-localapi-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "localapi.test")
	testtool.CopyFile(t, os.Args[0], bin)
	if err := os.Chmod(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	// The profile's secrets, readable by root only, as config.yaml is.
	secret := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(secret, []byte("hosted:\n  username: "+proxyUser+"\n  secret: "+proxyPass+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	for _, profile := range []struct {
		name string
		cfg  hosted.Config
	}{
		{"JWT profile", hosted.Config{Username: proxyUser, Secret: proxyPass}},
		{"API key profile", hosted.Config{APIKey: keyCaja}},
	} {
		t.Run(profile.name, func(t *testing.T) {
			p := startHosted(t)
			jwt := p.login(t, proxyUser, proxyPass)
			keysBefore := p.listKeys(t, jwt)
			ts, _ := startProxy(t, p, profile.cfg)
			before := p.requests()

			cmd := exec.Command(setpriv, "--reuid="+nobodyID, "--regid="+nobodyID, "--clear-groups", "--inh-caps=-all",
				bin, "-test.run=^TestHelperUnprivilegedClient$", "-test.count=1", "-test.v")
			cmd.Dir = dir
			cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "TMPDIR=" + dir,
				envUnprivURL + "=" + ts.srv.BaseURL(), envUnprivSecret + "=" + secret}
			out, err := cmd.CombinedOutput()
			if err != nil && !bytes.Contains(out, []byte("UID ")) {
				// setpriv itself failed: root without CAP_SETUID (a
				// restricted container) is not this package's failure
				// unless the CI asked for every tool to work.
				if os.Getenv("CFE_STRICT_TOOLS") == "1" {
					t.Fatalf("setpriv could not switch to nobody: %v\n%s", err, out)
				}
				t.Skipf("setpriv could not switch to nobody (set CFE_STRICT_TOOLS=1 to make this a failure): %v\n%s", err, out)
			}
			if err != nil {
				t.Fatalf("the client as nobody failed: %v\n%s", err, out)
			}
			calls := map[string]unprivCall{}
			var uid, secretRead string
			for _, line := range strings.Split(string(out), "\n") {
				switch {
				case strings.HasPrefix(line, "CALL "):
					var c unprivCall
					if err := json.Unmarshal([]byte(line[len("CALL "):]), &c); err != nil {
						t.Fatalf("%v: %s", err, line)
					}
					calls[c.Name] = c
				case strings.HasPrefix(line, "UID "):
					uid = strings.TrimPrefix(line, "UID ")
				case strings.HasPrefix(line, "SECRET "):
					secretRead = strings.TrimPrefix(line, "SECRET ")
				}
			}
			if uid != nobodyID {
				t.Fatalf("the client ran as uid %q, want nobody (%s)\n%s", uid, nobodyID, out)
			}
			if secretRead != "denied" {
				t.Fatalf("the client could read the profile's secrets (%q): not the situation under test", secretRead)
			}

			// CFE operations still work for it.
			emit := calls["emit"]
			var c hosted.Comprobante
			if emit.Status != http.StatusOK || json.Unmarshal(emit.Body, &c) != nil || c.ID == 0 || c.CodRespuesta != "00" {
				t.Fatalf("emitir as nobody: HTTP %d %s", emit.Status, emit.Body)
			}
			if q := calls["query"]; q.Status != http.StatusOK || !bytes.Contains(q.Body, []byte(itoa(c.ID))) {
				t.Errorf("query as nobody: HTTP %d %s", q.Status, q.Body)
			}
			if pdf := calls["pdf"]; pdf.Status != http.StatusOK || !bytes.HasPrefix(pdf.Body, []byte("%PDF-")) {
				t.Errorf("PDF as nobody: HTTP %d %.200q", pdf.Status, pdf.Body)
			}

			// No credential came back, and the service never saw a key
			// management call.
			for _, cc := range credentialCalls {
				got, ok := calls[cc.name]
				switch {
				case !ok:
					t.Errorf("%s: the client did not report it\n%s", cc.name, out)
				case got.Status < 400:
					t.Errorf("%s: HTTP %d %s, want a refusal", cc.name, got.Status, got.Body)
				case carriesCredential(got.Body):
					t.Errorf("%s: a credential came back: %s", cc.name, got.Body)
				case strings.Contains(cc.path, "/api/v1/") && got.Status != http.StatusUnauthorized:
					t.Errorf("%s: HTTP %d %s, want the proxy's 401", cc.name, got.Status, got.Body)
				}
			}
			for _, call := range p.callsSince(before) {
				if strings.Contains(call, "apikey") || strings.Contains(call, "/revoke") || strings.Contains(call, "rate-limit") {
					t.Errorf("the service saw %q from the unprivileged client", call)
				}
			}
			if after := p.listKeys(t, jwt); after != keysBefore {
				t.Errorf("the company's keys changed from %s to %s", keysBefore, after)
			}
			if status, _, b := p.direct(t, http.MethodGet, "/api/v1/usuario/empresas", nil, "Authorization", "Bearer "+jwt); status != http.StatusOK {
				t.Errorf("the owner's session no longer works: HTTP %d %s", status, b)
			}
		})
	}
}

// carriesCredential reports whether an answer holds a credential: a key of
// either kind (company "xx_test_"/"xx_live_", user "xx_usr_") or a login's
// token or refresh token.
func carriesCredential(body []byte) bool {
	for _, prefix := range []string{"xx_test_", "xx_live_", "xx_usr_"} {
		if bytes.Contains(body, []byte(prefix)) {
			return true
		}
	}
	var m map[string]any
	if json.Unmarshal(body, &m) != nil {
		return false
	}
	for _, k := range []string{"token", "refresh_token", "ApiKey"} {
		if v, ok := m[k].(string); ok && v != "" {
			return true
		}
	}
	return false
}

// listKeys returns the company's key list as the service reports it.
func (p *hostedPeer) listKeys(t *testing.T, jwt string) string {
	t.Helper()
	status, _, b := p.direct(t, http.MethodGet, "/api/v1/apikeys", nil, "Authorization", "Bearer "+jwt)
	if status != http.StatusOK {
		t.Fatalf("listing keys: HTTP %d %s", status, b)
	}
	return string(b)
}

// TestHelperUnprivilegedClient is the unprivileged local user: it only runs
// as nobody, started by TestProxy_UnprivilegedUser, and prints what each of
// its calls to the agent answered.
func TestHelperUnprivilegedClient(t *testing.T) {
	base := os.Getenv(envUnprivURL)
	if base == "" {
		t.Skip("helper process of TestProxy_UnprivilegedUser")
	}
	fmt.Printf("UID %d\n", os.Geteuid())
	if _, err := os.ReadFile(os.Getenv(envUnprivSecret)); os.IsPermission(err) {
		fmt.Println("SECRET denied")
	} else {
		fmt.Printf("SECRET readable (%v)\n", err)
	}
	call := func(name, method, path, body string) unprivCall {
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, err := http.NewRequest(method, base+path, rd)
		if err != nil {
			t.Fatal(err)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		c := unprivCall{Name: name, Method: method, Path: path, Status: resp.StatusCode, Body: b}
		line, _ := json.Marshal(c)
		fmt.Printf("CALL %s\n", line)
		return c
	}

	emit := call("emit", http.MethodPost, "/api/v1/comprobante/emitir", `{"uuid":"venta-nobody-1",
		"cfe":{"idDoc":{"tipoCfe":101,"formaPago":1,"montoBruto":1},
		"detalles":[{"indicadorFacturacion":3,"nombreItem":"Yerba","cantidad":2,"precioUnitario":61}]}}`)
	var c hosted.Comprobante
	if json.Unmarshal(emit.Body, &c) == nil && c.ID != 0 {
		call("query", http.MethodGet, "/api/v1/cfeemitido/"+itoa(c.ID), "")
	}
	call("pdf", http.MethodPost, "/api/v1/cfeemitido/pdf", `{"uuid":"venta-nobody-1"}`)
	for _, cc := range credentialCalls {
		call(cc.name, cc.method, cc.path, cc.body)
	}
}
