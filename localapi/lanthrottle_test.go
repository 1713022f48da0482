package localapi_test

import (
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/localapi"
)

// twoLocalAddrs returns two non-loopback addresses of this machine that a
// connection from the machine to itself can come from, or skips the test.
// A connection to one of them comes from that same address, so the server
// sees two distinct LAN callers without a second machine.
func twoLocalAddrs(t *testing.T) (netip.Addr, netip.Addr) {
	t.Helper()
	ifaddrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Skipf("cannot list the interface addresses: %v", err)
	}
	var out []netip.Addr
	for _, ia := range ifaddrs {
		n, ok := ia.(*net.IPNet)
		if !ok {
			continue
		}
		a, ok := netip.AddrFromSlice(n.IP)
		if !ok {
			continue
		}
		a = a.Unmap()
		if a.IsLoopback() || a.IsLinkLocalUnicast() || a.IsMulticast() || a.IsUnspecified() {
			continue
		}
		out = append(out, a)
	}
	if len(out) < 2 {
		t.Skipf("the machine needs two non-loopback addresses to play two LAN callers; it has %v", out)
	}
	return out[0], out[1]
}

// TestSecurity_LANThrottle sends wrong LAN tokens over real HTTP from one of
// the machine's addresses until it is throttled, and checks that the other
// address, with the right token, is not.
func TestSecurity_LANThrottle(t *testing.T) {
	a, b := twoLocalAddrs(t)
	const token = "terminal-token-0123456789"
	ts := startServer(t, func(c *localapi.ServerConfig) {
		c.Listen = "[::]:0" // both families; the Host rule accepts any local address
		c.LAN = localapi.LANConfig{Enabled: true, Tokens: []string{token}, MaxFailures: 3}
	})
	_, port, err := net.SplitHostPort(ts.srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	get := func(from netip.Addr, tok string) (*http.Response, string) {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, "http://"+net.JoinHostPort(from.String(), port)+"/state", nil)
		if err != nil {
			t.Fatal(err)
		}
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, string(body)
	}

	steps := []struct {
		name       string
		from       netip.Addr
		token      string
		wantStatus int
	}{
		{"A, right token, before any failure", a, token, http.StatusOK},
		{"A, wrong token 1", a, "terminal-token-0123456780", http.StatusUnauthorized},
		{"A, no token (counts as a failure) 2", a, "", http.StatusUnauthorized},
		{"A, wrong token 3", a, "guess", http.StatusUnauthorized},
		{"A, wrong token 4: throttled", a, "guess-again", http.StatusTooManyRequests},
		{"A, right token while throttled", a, token, http.StatusTooManyRequests},
		{"B, right token: another address is never blocked", b, token, http.StatusOK},
		{"B, wrong token counts for B alone", b, "guess", http.StatusUnauthorized},
		{"B, right token still passes", b, token, http.StatusOK},
	}
	for _, st := range steps {
		resp, body := get(st.from, st.token)
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
	if strings.Contains(ts.logs.String(), token) {
		t.Error("a LAN token reached the log")
	}
	if !strings.Contains(ts.logs.String(), "LAN caller throttled") {
		t.Error("the throttling is not logged")
	}
}
