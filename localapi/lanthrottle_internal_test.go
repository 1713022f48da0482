package localapi

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
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

// lanPipeline is a LAN-mode server driven through its pipeline with the
// remote addresses LAN callers would have, an injected clock and its log.
type lanPipeline struct {
	s    *Server
	logs *testtool.SyncBuffer

	mu    sync.Mutex
	clock time.Time
}

func newLANPipeline(t *testing.T, lan LANConfig) *lanPipeline {
	t.Helper()
	p := &lanPipeline{clock: time.Date(2026, 5, 14, 15, 4, 5, 0, time.UTC), logs: &testtool.SyncBuffer{}}
	p.s = NewServer(ServerConfig{Listen: "127.0.0.1:0", Issuer: noIssuer{}, State: emptyState{},
		Logger: slog.New(slog.NewJSONHandler(p.logs, nil)),
		Now: func() time.Time {
			p.mu.Lock()
			defer p.mu.Unlock()
			return p.clock
		}, LAN: lan})
	if err := p.s.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.s.Close() })
	return p
}

// advance moves the server's clock on by d.
func (p *lanPipeline) advance(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clock = p.clock.Add(d)
}

// get sends GET /state from remote with tok (none when "").
func (p *lanPipeline) get(remote, tok string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/state", nil)
	req.RemoteAddr = remote
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	rec := httptest.NewRecorder()
	p.s.handler.ServeHTTP(rec, req)
	return rec
}

// TestSecurity_LANPrefixAndCeiling: wrong tokens are counted per /64 and in
// total; once a tier is out, the callers it holds wait whatever they present
// (the right token included: no oracle), while a terminal that presented its
// token before, and the other addresses of its /24, keep working.
func TestSecurity_LANPrefixAndCeiling(t *testing.T) {
	t.Parallel()
	const token = "k7mq-4xdz-9wpe-h2nc-tr6b-5fja-3vgy"
	p := newLANPipeline(t, LANConfig{Enabled: true, Tokens: []string{token}, MaxFailures: 2, PrefixFailures: 3,
		TotalFailures: 5, FailureWindow: time.Minute})
	steps := []struct {
		name, remote, token string
		want                int
		retry               string // Retry-After of a 429
		says                string // in the body of a 429
	}{
		{"the terminal signs in", "192.0.2.50:1", token, http.StatusOK, "", ""},
		{"guess 1 from a /64", "[2001:db8:1::1]:1", "guess-1", http.StatusUnauthorized, "", ""},
		{"guess 2 from another address of the /64", "[2001:db8:1::2]:1", "guess-2", http.StatusUnauthorized, "", ""},
		{"guess 3 from a third address of the /64", "[2001:db8:1::3]:1", "guess-3", http.StatusUnauthorized, "", ""},
		{"a fourth address of the exhausted /64", "[2001:db8:1::4]:1", "guess-4", http.StatusTooManyRequests, "20",
			"desde esta red (2001:db8:1::/64)"},
		{"... with the right token, same answer", "[2001:db8:1::5]:1", token, http.StatusTooManyRequests, "20",
			"desde esta red (2001:db8:1::/64)"},
		{"guess 4 from another /64", "[2001:db8:2::1]:1", "guess-5", http.StatusUnauthorized, "", ""},
		{"guess 5 from an IPv4 /24: the ceiling", "198.51.100.1:1", "guess-6", http.StatusUnauthorized, "", ""},
		{"a stranger after the ceiling", "203.0.113.9:1", "guess-7", http.StatusTooManyRequests, "12", "en la red local"},
		{"a stranger with the right token, same answer", "203.0.113.10:1", token, http.StatusTooManyRequests, "12",
			"en la red local"},
		{"the trusted terminal still works", "192.0.2.50:2", token, http.StatusOK, "", ""},
		{"a new address of the terminal's /24 too", "192.0.2.51:1", token, http.StatusOK, "", ""},
		{"the terminal's own wrong token counts for it", "192.0.2.50:3", "typo", http.StatusUnauthorized, "", ""},
		{"loopback is never held", "127.0.0.1:1", "", http.StatusOK, "", ""},
	}
	for _, st := range steps {
		rec := p.get(st.remote, st.token)
		if rec.Code != st.want {
			t.Fatalf("%s: status %d, want %d: %s", st.name, rec.Code, st.want, rec.Body)
		}
		if st.want != http.StatusTooManyRequests {
			continue
		}
		if got := rec.Header().Get("Retry-After"); got != st.retry {
			t.Errorf("%s: Retry-After %q, want %q", st.name, got, st.retry)
		}
		if body := rec.Body.String(); !strings.Contains(body, "demasiados intentos") || !strings.Contains(body, st.says) {
			t.Errorf("%s: body %s, want the Spanish reason naming %q", st.name, body, st.says)
		}
	}
	// Twelve seconds later the ceiling has one try: a stranger's right token
	// gets in, and it is trusted from then on.
	p.advance(12 * time.Second)
	if rec := p.get("203.0.113.10:2", token); rec.Code != http.StatusOK {
		t.Fatalf("a stranger with the right token once the ceiling earned a try: %d", rec.Code)
	}
	// A success uses no try: the earned one is left for one guess.
	if rec := p.get("[2001:db8:9::1]:1", "guess-8"); rec.Code != http.StatusUnauthorized {
		t.Fatalf("a guess after the success: %d, want 401 (the earned try)", rec.Code)
	}
	if rec := p.get("[2001:db8:9::2]:1", "guess-9"); rec.Code != http.StatusTooManyRequests {
		t.Fatalf("the next guess: %d, want 429", rec.Code)
	}
	logs := p.logs.String()
	for _, want := range []string{"LAN network throttled after wrong tokens", `"prefix":"2001:db8:1::/64"`,
		"LAN failed-token ceiling reached"} {
		if !strings.Contains(logs, want) {
			t.Errorf("the log lacks %q", want)
		}
	}
	if strings.Contains(logs, token) {
		t.Error("the token reached the log")
	}
}

// TestSecurity_LANCeilingConcurrent: wrong tokens sent at once from many
// addresses of many prefixes are told "wrong" (401) exactly as many times as
// the ceiling allows, the rest "wait"; meanwhile a terminal that signed in
// before is answered every time.
func TestSecurity_LANCeilingConcurrent(t *testing.T) {
	t.Parallel()
	const token, ceiling, sources, each = "k7mq-4xdz-9wpe-h2nc-tr6b-5fja-3vgy", 40, 300, 4
	p := newLANPipeline(t, LANConfig{Enabled: true, Tokens: []string{token}, TotalFailures: ceiling, FailureWindow: time.Hour})
	if rec := p.get("192.0.2.50:1", token); rec.Code != http.StatusOK {
		t.Fatalf("the terminal: %d", rec.Code)
	}
	codes := make(chan int, sources*each)
	terminal := make(chan int, sources)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range sources {
		wg.Go(func() {
			<-start
			remote := fmt.Sprintf("[2001:db8:%x::%x]:1", i%16, i) // 16 /64s
			for j := range each {
				codes <- p.get(remote, fmt.Sprintf("guess-%d-%d", i, j)).Code
			}
			terminal <- p.get("192.0.2.50:2", token).Code
		})
	}
	close(start)
	wg.Wait()
	close(codes)
	close(terminal)
	count := map[int]int{}
	for c := range codes {
		count[c]++
	}
	if count[http.StatusUnauthorized] != ceiling || count[http.StatusTooManyRequests] != sources*each-ceiling {
		t.Fatalf("answers to wrong tokens %v: want %d × 401 and the rest 429", count, ceiling)
	}
	for c := range terminal {
		if c != http.StatusOK {
			t.Fatalf("the trusted terminal got %d during the attack", c)
		}
	}
}
