package localapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// TestSecurity_LANThrottlePipeline drives the whole pipeline with the remote
// addresses LAN callers would have, so that the throttle is checked even
// where the machine has no two addresses for TestSecurity_LANThrottle.
func TestSecurity_LANThrottlePipeline(t *testing.T) {
	const token = "terminal-token-0123456789"
	clock := time.Date(2026, 5, 14, 15, 4, 5, 0, time.UTC)
	s := NewServer(ServerConfig{Listen: "127.0.0.1:0", Issuer: noIssuer{}, State: emptyState{},
		Now: func() time.Time { return clock },
		LAN: LANConfig{Enabled: true, Tokens: []string{token}, MaxFailures: 2, FailureWindow: time.Minute}})
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	send := func(path, remote, tok string) *httptest.ResponseRecorder {
		method := http.MethodGet
		if path == "/sign-cfe" {
			method = http.MethodPost
		}
		req := httptest.NewRequest(method, "http://127.0.0.1"+path, strings.NewReader(`{"cfe":{}}`))
		req.Header.Set("Content-Type", "application/json")
		req.RemoteAddr = remote
		if tok != "" {
			req.Header.Set("X-CFE-Token", tok)
		}
		rec := httptest.NewRecorder()
		s.handler.ServeHTTP(rec, req)
		return rec
	}

	steps := []struct {
		name         string
		path, remote string
		token        string
		want         int
	}{
		{"loopback never counts", "/state", "127.0.0.1:1", "wrong", http.StatusOK},
		{"v6 caller, wrong 1", "/state", "[2001:db8::7]:1", "wrong", http.StatusUnauthorized},
		{"v6 caller, wrong 2", "/sign-cfe", "[2001:db8::7]:2", "wrong", http.StatusUnauthorized},
		{"v6 caller throttled, right token", "/state", "[2001:db8::7]:3", token, http.StatusTooManyRequests},
		{"v6 neighbour in the same /64", "/state", "[2001:db8::8]:1", token, http.StatusOK},
		{"v4 caller, wrong 1", "/state", "192.0.2.10:1", "", http.StatusUnauthorized},
		{"v4 caller, wrong 2 (v4-mapped form)", "/state", "[::ffff:192.0.2.10]:1", "x", http.StatusUnauthorized},
		{"v4 caller throttled on /sign-cfe", "/sign-cfe", "192.0.2.10:2", token, http.StatusTooManyRequests},
		{"another v4 caller", "/sign-cfe", "192.0.2.11:1", token, http.StatusOK},
		{"loopback still passes", "/state", "127.0.0.1:2", "", http.StatusOK},
	}
	for _, st := range steps {
		rec := send(st.path, st.remote, st.token)
		if rec.Code != st.want {
			t.Fatalf("%s: status %d, want %d: %s", st.name, rec.Code, st.want, rec.Body)
		}
		if st.want != http.StatusTooManyRequests {
			continue
		}
		if got := rec.Header().Get("Retry-After"); got != "30" {
			t.Errorf("%s: Retry-After %q, want 30 (2 failures a minute)", st.name, got)
		}
		if st.path == "/sign-cfe" {
			var resp apitype.SignResponse
			if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || resp.CodigoRespuesta != "01" ||
				!strings.Contains(resp.MensajeRespuesta, "demasiados intentos") {
				t.Errorf("%s: body %s, want the sign-cfe shape with 01 and the Spanish reason", st.name, rec.Body)
			}
		}
	}

	// Thirty seconds later the v4 caller has one try: the right token passes.
	clock = clock.Add(30 * time.Second)
	if rec := send("/state", "192.0.2.10:3", token); rec.Code != http.StatusOK {
		t.Fatalf("after Retry-After: status %d, want 200", rec.Code)
	}
}

// TestSecurity_LANThrottleConcurrent sends a burst of wrong tokens from one
// address at once: however they interleave, no more of them are told
// "wrong token" (401) than the address has tries; the rest are told to wait.
func TestSecurity_LANThrottleConcurrent(t *testing.T) {
	const tries, burst = 5, 60
	clock := time.Date(2026, 5, 14, 15, 4, 5, 0, time.UTC)
	s := NewServer(ServerConfig{Listen: "127.0.0.1:0", Issuer: noIssuer{}, State: emptyState{},
		Now: func() time.Time { return clock },
		LAN: LANConfig{Enabled: true, Tokens: []string{"terminal-token-0123456789"}, MaxFailures: tries, FailureWindow: time.Hour}})
	if err := s.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	codes := make(chan int, burst)
	start := make(chan struct{})
	for i := range burst {
		go func() {
			<-start
			req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/state", nil)
			req.RemoteAddr = "192.0.2.20:" + strconv.Itoa(1000+i)
			req.Header.Set("X-CFE-Token", "guess-"+strconv.Itoa(i))
			rec := httptest.NewRecorder()
			s.handler.ServeHTTP(rec, req)
			codes <- rec.Code
		}()
	}
	close(start)
	count := map[int]int{}
	for range burst {
		count[<-codes]++
	}
	if count[http.StatusUnauthorized] != tries || count[http.StatusTooManyRequests] != burst-tries {
		t.Fatalf("answers %v: want %d × 401 and %d × 429", count, tries, burst-tries)
	}
}
