package main_test

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAgent_SecurityRules checks the local module's browser-facing rules on the
// real binary (the full matrix, LAN tokens over a network namespace included,
// is in localapi's tests).
func TestAgent_SecurityRules(t *testing.T) {
	dataDir := t.TempDir()
	env := agentEnv("CFE_AGENT_DATA_DIR=" + dataDir)
	// The first run writes the default profile; allow one POS web page in it.
	if out, code := runCLI(t, env, "profile", "list"); code != 0 {
		t.Fatalf("profile list: %s", out)
	}
	cfgFile := filepath.Join(dataDir, "config.yaml")
	cfg, err := os.ReadFile(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	cfg = bytes.Replace(cfg, []byte(`# allowed_origins: ["http://localhost:3000"]`), []byte(`allowed_origins: ["http://pos.local:3000"]`), 1)
	if err := os.WriteFile(cfgFile, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	a := startAgent(t, env, "--listen", "127.0.0.1:0")
	body := example(t, "e-ticket.json")
	// do sends one request and returns its status and headers.
	do := func(method, path, contentType string, body []byte, hdr map[string]string) answer {
		t.Helper()
		req, err := http.NewRequest(method, a.baseURL+path, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		for k, v := range hdr {
			if k == "Host" {
				req.Host = v
			} else {
				req.Header.Set(k, v)
			}
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return answer{resp.StatusCode, resp.Header}
	}
	tests := []struct {
		name   string
		resp   func() answer
		status int
	}{
		{"DNS rebinding: foreign Host", func() answer {
			return do("GET", "/state", "", nil, map[string]string{"Host": "attacker.example:80"})
		}, http.StatusForbidden},
		{"foreign Origin", func() answer {
			return do("POST", "/sign-cfe", "application/json", body, map[string]string{"Origin": "https://evil.example"})
		}, http.StatusForbidden},
		{"form CSRF: text/plain body", func() answer {
			return do("POST", "/sign-cfe", "text/plain", body, nil)
		}, http.StatusUnsupportedMediaType},
		{"oversize body", func() answer {
			return do("POST", "/sign-cfe", "application/json", bytes.Repeat([]byte(" "), 2<<20), nil)
		}, http.StatusRequestEntityTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp := tc.resp()
			if resp.status != tc.status {
				t.Fatalf("HTTP %d, want %d", resp.status, tc.status)
			}
			if resp.header.Get("X-Content-Type-Options") != "nosniff" || resp.header.Get("Cache-Control") != "no-store" {
				t.Errorf("missing nosniff/no-store on a refusal: %v", resp.header)
			}
		})
	}
	t.Run("allowed Origin preflight", func(t *testing.T) {
		resp := do("OPTIONS", "/sign-cfe", "", nil, map[string]string{"Origin": "http://pos.local:3000",
			"Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type"})
		if resp.status/100 != 2 || resp.header.Get("Access-Control-Allow-Origin") != "http://pos.local:3000" ||
			!strings.Contains(strings.ToLower(resp.header.Get("Access-Control-Allow-Headers")), "content-type") {
			t.Fatalf("preflight: HTTP %d %v", resp.status, resp.header)
		}
	})
	// None of the refused requests signed anything.
	_, st := getJSON(t, a.baseURL+"/state")
	if st["outbox"].(map[string]any)["pending"] != float64(0) {
		t.Fatalf("a refused request was signed: %v", st["outbox"])
	}
	a.stop(t)
}

type answer struct {
	status int
	header http.Header
}
