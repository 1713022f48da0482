//go:build linux

package localapi_test

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/localapi"
)

// TestSecurity_LANThrottle sends wrong LAN tokens over real HTTP from a
// non-loopback address until it is throttled, and checks that another
// address, with the right token, is not. The two callers are this side of a
// veth pair and a client in a network namespace of the test's own (as
// TestSecurity_CallerFromAnotherAddress); it needs root and ip(8).
func TestSecurity_LANThrottle(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("creating a network namespace needs root")
	}
	ipTool := testtool.Require(t, "ip")
	ns, hostIP, peerIP := setupNetns(t, ipTool)
	const token = "terminal-token-0123456789"
	ts := startServer(t, func(c *localapi.ServerConfig) {
		c.Listen = hostIP + ":0"
		c.LAN = localapi.LANConfig{Enabled: true, Tokens: []string{token}, MaxFailures: 3}
	})
	// A is this side of the veth pair: the server listens on hostIP, so a
	// call from this process comes from hostIP, not from loopback.
	get := func(tok string) (response, string) {
		t.Helper()
		auth := "" // send leaves out an empty header: no token at all
		if tok != "" {
			auth = "Bearer " + tok
		}
		resp, body := ts.send(t, request{path: "/state", headers: map[string]string{"Authorization": auth}})
		return resp, string(body)
	}

	steps := []struct {
		name       string
		token      string
		wantStatus int
	}{
		{"A, right token, before any failure", token, http.StatusOK},
		{"A, wrong token 1", "terminal-token-0123456780", http.StatusUnauthorized},
		{"A, no token (counts as a failure) 2", "", http.StatusUnauthorized},
		{"A, wrong token 3", "guess", http.StatusUnauthorized},
		{"A, wrong token 4: throttled", "guess-again", http.StatusTooManyRequests},
		{"A, right token while throttled", token, http.StatusTooManyRequests},
	}
	for _, st := range steps {
		resp, body := get(st.token)
		if resp.StatusCode != st.wantStatus {
			t.Fatalf("%s: status %d, want %d\n%s", st.name, resp.StatusCode, st.wantStatus, body)
		}
		if st.wantStatus != http.StatusTooManyRequests {
			continue
		}
		// 3 failures per minute: one more try every 20 s (the clock is fixed).
		if got := resp.Header.Get("Retry-After"); got != "20" {
			t.Errorf("%s: Retry-After %q, want \"20\"", st.name, got)
		}
		if !strings.Contains(body, "demasiados intentos") || !strings.Contains(body, "20 segundos") {
			t.Errorf("%s: body does not explain the wait in Spanish: %s", st.name, body)
		}
		if strings.Contains(body, token) {
			t.Errorf("%s: the body shows the token", st.name)
		}
	}
	// The namespace's address, B, is not blocked by A's failures, and its own
	// failure counts for B alone.
	calls := []string{ts.srv.BaseURL() + " " + token, ts.srv.BaseURL() + " guess", ts.srv.BaseURL() + " " + token}
	if got := runInNetns(t, ipTool, ns, calls); strings.Join(got, ",") != "200,401,200" {
		t.Fatalf("from %s (another address): statuses %v, want 200, 401, 200", peerIP, got)
	}
	if strings.Contains(ts.logs.String(), token) {
		t.Error("a LAN token reached the log")
	}
	if !strings.Contains(ts.logs.String(), "LAN caller throttled") {
		t.Error("the throttling is not logged")
	}
}
