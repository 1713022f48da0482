package localapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/hosted"
)

// TestProxy_RefreshWithoutAPIPrefix: POST /auth/refresh, the path the
// vendor's PHP SDK refreshes at, reaches the service through the agent as it
// came (the caller's refresh token, never the profile's credentials), and
// the refresh token never reaches the agent's log.
func TestProxy_RefreshWithoutAPIPrefix(t *testing.T) {
	p := startHosted(t)
	ts, _ := startProxy(t, p, hosted.Config{Username: proxyUser, Secret: proxyPass})

	type tokens struct {
		Token        string `json:"token"`
		RefreshToken string `json:"refresh_token"`
		ExpiresAt    int64  `json:"expires_at"`
	}
	call := func(path string, body any) (int, tokens, []byte) {
		t.Helper()
		raw, _ := json.Marshal(body)
		resp, b := ts.send(t, request{method: http.MethodPost, path: path,
			headers: map[string]string{"Content-Type": "application/json"}, body: bytes.NewReader(raw)})
		var tk tokens
		_ = json.Unmarshal(b, &tk)
		return resp.StatusCode, tk, b
	}
	status, login, b := call("/api/auth/login", map[string]string{"username": proxyUser, "secret": proxyPass})
	if status != http.StatusOK || login.RefreshToken == "" {
		t.Fatalf("login through the agent: HTTP %d %s", status, b)
	}
	before := p.requests()
	status, fresh, b := call("/auth/refresh", map[string]string{"refresh_token": login.RefreshToken})
	switch {
	case status != http.StatusOK:
		t.Fatalf("refresh through the agent: HTTP %d %s", status, b)
	case fresh.Token == "" || fresh.Token == login.Token || fresh.RefreshToken == login.RefreshToken:
		t.Errorf("the tokens did not rotate: %s", b)
	case fresh.ExpiresAt <= 0:
		t.Errorf("expires_at %d, want a Unix time", fresh.ExpiresAt)
	}
	if calls := p.callsSince(before); len(calls) != 1 || calls[0] != "POST /auth/refresh" {
		t.Errorf("the service saw %v, want one POST /auth/refresh", calls)
	}
	if h := p.lastSeen(); h.Get("Authorization") != "" || h.Get("X-API-Key") != "" {
		t.Errorf("the refresh carried credentials %q / %q: it must go as it came", h.Get("Authorization"), h.Get("X-API-Key"))
	}
	if n := p.logins.Load(); n != 1 {
		t.Errorf("%d logins, want only the caller's: the profile must not log in for a caller's refresh", n)
	}
	// The exchanged token is spent: the service says so through the agent.
	if status, _, b := call("/auth/refresh", map[string]string{"refresh_token": login.RefreshToken}); status != http.StatusUnauthorized {
		t.Errorf("a spent refresh token: HTTP %d %s, want 401", status, b)
	}
	for _, secret := range []string{login.RefreshToken, fresh.RefreshToken, fresh.Token} {
		if strings.Contains(ts.logs.String(), secret) {
			t.Error("a token reached the agent's log")
		}
	}
}
