package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"
)

// numberingServer answers /sign-cfe like the agent, numbering e-Tickets of
// serie A from 1 but skipping the numbers in skip, and records what it was
// sent. It refuses (400) a request without the LAN token "lan-token".
type numberingServer struct {
	skip map[int64]bool

	mu     sync.Mutex
	next   int64
	uuids  map[string]int
	badReq []string // what was wrong with requests, if anything
}

func (s *numberingServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r.URL.Path == "/health" {
		fmt.Fprint(w, `{"ok":true}`)
		return
	}
	var req struct {
		UUID string          `json:"uuid"`
		CFE  json.RawMessage `json:"cfe"`
	}
	b, _ := io.ReadAll(r.Body)
	var problem string
	switch {
	case r.Method != http.MethodPost || r.URL.Path != "/sign-cfe":
		problem = r.Method + " " + r.URL.Path
	case r.Header.Get("Content-Type") != "application/json":
		problem = "Content-Type " + r.Header.Get("Content-Type")
	case r.Header.Get("Authorization") != "Bearer lan-token":
		problem = "Authorization " + r.Header.Get("Authorization")
	case json.Unmarshal(b, &req) != nil || req.UUID == "" || len(req.CFE) == 0:
		problem = "body " + string(b)
	}
	if problem != "" {
		s.badReq = append(s.badReq, problem)
		http.Error(w, problem, http.StatusBadRequest)
		return
	}
	s.uuids[req.UUID]++
	s.next++
	for s.skip[s.next] {
		s.next++
	}
	fmt.Fprintf(w, `{"codigo_respuesta":"00","tipo_cfe":101,"serie":"A","numero":%d}`, s.next)
}

func TestRunLoad(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		skip    map[int64]bool
		wantNum seriesCheck
	}{
		{"gap-free", nil, seriesCheck{series: series{101, "A"}, count: 50, lowest: 1, highest: 50}},
		// 50 answers numbered 1..52 without 7 and 30.
		{"a gap", map[int64]bool{7: true, 30: true}, seriesCheck{series: series{101, "A"}, count: 50, lowest: 1,
			highest: 52, missing: 2, firstMissing: []int64{7, 30}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := &numberingServer{skip: tt.skip, uuids: map[string]int{}}
			ts := httptest.NewServer(srv)
			defer ts.Close()
			tmpl, err := newBodyTemplate(defaultBody)
			if err != nil {
				t.Fatal(err)
			}
			cfg := loadConfig{baseURL: ts.URL, conns: 4, duration: time.Minute, total: 50, timeout: 5 * time.Second,
				token: "lan-token", body: tmpl}
			s, err := runLoad(t.Context(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			if s.requests != 50 || s.signed != 50 || len(s.errors) != 0 {
				t.Errorf("requests %d, signed %d, errors %v; want exactly -n 50 signed", s.requests, s.signed, s.errors)
			}
			if len(srv.badReq) > 0 {
				t.Errorf("malformed requests: %q", srv.badReq)
			}
			if len(srv.uuids) != 50 {
				t.Errorf("%d distinct uuids in 50 requests", len(srv.uuids))
			}
			if !reflect.DeepEqual(s.numbers, []seriesCheck{tt.wantNum}) {
				t.Errorf("numbers = %+v, want [%+v]", s.numbers, tt.wantNum)
			}
			if s.ok() != tt.wantNum.ok() {
				t.Errorf("ok() = %v", s.ok())
			}
		})
	}

	t.Run("the duration bounds the run", func(t *testing.T) {
		ts := httptest.NewServer(&numberingServer{uuids: map[string]int{}})
		defer ts.Close()
		start := time.Now()
		s, err := runLoad(t.Context(), loadConfig{baseURL: ts.URL, conns: 2, duration: 200 * time.Millisecond,
			timeout: time.Second, token: "lan-token", body: bodyTemplate{rest: []byte(`{"cfe":{}}`)}})
		if err != nil {
			t.Fatal(err)
		}
		if took := time.Since(start); took > 5*time.Second || s.requests == 0 {
			t.Errorf("%d requests in %s with -d 200ms", s.requests, took)
		}
	})

	t.Run("an agent that is not healthy is not loaded", func(t *testing.T) {
		ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/health" {
				t.Errorf("%s %s sent to an unhealthy agent", r.Method, r.URL.Path)
			}
			w.WriteHeader(http.StatusServiceUnavailable)
		}))
		defer ts.Close()
		if _, err := runLoad(t.Context(), loadConfig{baseURL: ts.URL, conns: 1, duration: time.Second,
			timeout: time.Second, body: bodyTemplate{rest: []byte(`{}`)}}); err == nil {
			t.Error("runLoad started on an agent whose /health answered 503")
		}
	})
}

// TestRunBench benchmarks the real agent binary, built here, with a short
// load: every request must sign, numbered 1..n on the fresh data directory.
func TestRunBench(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and starts the agent")
	}
	bin := buildAgent(t)
	tmpl, err := newBodyTemplate(defaultBody)
	if err != nil {
		t.Fatal(err)
	}
	const n = 40
	cfg := benchConfig{agent: bin, starts: 2, settle: 100 * time.Millisecond,
		load: loadConfig{conns: 4, duration: time.Minute, total: n, timeout: 30 * time.Second, body: tmpl}}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	r, err := runBench(ctx, cfg, log.New(io.Discard, "", 0))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.firstStarts) != 2 || len(r.restarts) != 2 {
		t.Errorf("%d first starts and %d restarts timed, want 2 each", len(r.firstStarts), len(r.restarts))
	}
	for _, d := range append(r.firstStarts, r.restarts...) {
		if d <= 0 || d > startTimeout {
			t.Errorf("start to healthy took %s", d)
		}
	}
	const mb = 1 << 20
	for _, m := range []memory{r.idle, r.settled, r.restarted} {
		// Linux counts RssShmem in VmRSS too; the agent maps no shared memory.
		if m.anon < mb || m.file < mb || m.rss != m.anon+m.file || m.hwm < m.rss {
			t.Errorf("memory %+v: want a few MB anon and file, rss their sum, hwm the largest", m)
		}
	}
	if r.settled.hwm < r.idle.rss {
		t.Errorf("peak %d below idle RSS %d", r.settled.hwm, r.idle.rss)
	}
	if r.dataBytes < n*1024 {
		t.Errorf("data directory of %d bytes after %d signed CFEs of about 5 KB each", r.dataBytes, n)
	}
	s := r.load
	if s.requests != n || s.signed != n || !s.ok() {
		t.Errorf("requests %d, signed %d, errors %v, ok %v; want %d signed", s.requests, s.signed, s.errors, s.ok(), n)
	}
	want := []seriesCheck{{series: series{101, "A"}, count: n, lowest: 1, highest: n}}
	if !reflect.DeepEqual(s.numbers, want) {
		t.Errorf("numbers = %+v, want %+v", s.numbers, want)
	}
}

func TestRun_ExitStatus(t *testing.T) {
	t.Parallel()
	clean := httptest.NewServer(&numberingServer{uuids: map[string]int{}})
	defer clean.Close()
	gap := httptest.NewServer(&numberingServer{skip: map[int64]bool{3: true}, uuids: map[string]int{}})
	defer gap.Close()
	gapOpen := httptest.NewServer(&numberingServer{skip: map[int64]bool{3: true}, uuids: map[string]int{}})
	defer gapOpen.Close()
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"all signed, gap-free", []string{"-url", clean.URL, "-token", "lan-token", "-n", "20", "-c", "2"}, 0},
		{"a gap", []string{"-url", gap.URL, "-token", "lan-token", "-n", "20", "-c", "2"}, 1},
		{"open loop, gap-free", []string{"-url", clean.URL, "-token", "lan-token", "-n", "20", "-c", "2", "-rate", "500"}, 0},
		{"open loop, a gap", []string{"-url", gapOpen.URL, "-token", "lan-token", "-n", "20", "-c", "2", "-rate", "500"}, 1},
		{"every request refused", []string{"-url", clean.URL, "-n", "5"}, 1}, // no token: not signed
		{"bad flags", []string{"-c", "0"}, 2},
		{"a body that is not an object", []string{"-url", clean.URL, "-body", writeFile(t, "[]")}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if got := run(t.Context(), tt.args, &stdout, &stderr); got != tt.want {
				t.Errorf("exit status %d, want %d\nstdout:\n%s\nstderr:\n%s", got, tt.want, &stdout, &stderr)
			}
		})
	}
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "body.json")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// The cfe-agent binary is built once per test binary (TestRunBench and
// TestRunLatency both run it) into agentDir, which TestMain removes.
var (
	agentOnce sync.Once
	agentDir  string
	agentBin  string
	agentErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if agentDir != "" {
		os.RemoveAll(agentDir)
	}
	os.Exit(code)
}

// buildAgent returns the cfe-agent binary, built by the first caller.
func buildAgent(t *testing.T) string {
	t.Helper()
	agentOnce.Do(func() {
		if agentDir, agentErr = os.MkdirTemp("", "cfe-load-test-agent-"); agentErr != nil {
			return
		}
		agentBin = filepath.Join(agentDir, "cfe-agent")
		build := exec.Command("go", "build", "-o", agentBin, "../cfe-agent")
		if out, err := build.CombinedOutput(); err != nil {
			agentErr = fmt.Errorf("go build: %w\n%s", err, out)
		}
	})
	if agentErr != nil {
		t.Fatal(agentErr)
	}
	return agentBin
}
