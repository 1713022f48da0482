package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/cfe-agent/cfe-agent/sandbox"
)

// raceSandboxKey is the hosted key of the sandbox these tests start.
const raceSandboxKey = "xx_test_agente-race-00000000000000001"

// startRaceSandbox runs the hosted-service emulator on a free loopback port
// with a key for the default profile's company.
func startRaceSandbox(t *testing.T) *sandbox.Server {
	t.Helper()
	sb, err := sandbox.New(sandbox.Config{Environment: sandbox.EnvSandbox, DataDir: t.TempDir(), Listen: "127.0.0.1:0",
		DemoPassword: "demo-password", PasswordCost: bcrypt.MinCost,
		Seed: &sandbox.Seed{APIKeys: []sandbox.SeedKey{{Empresa: "219999830019", Nombre: "caja race", Key: raceSandboxKey}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := sb.Open(); err != nil {
		sb.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { sb.Close() })
	return sb
}

// probeEachStep is a log handler that keeps nothing: while the agent opens,
// each record the opening logs sends one GET /state to the agent's address
// from a new goroutine and then holds the opening goroutine for a while, so
// that the request is answered at that step of the opening.
//
// The race detector reports only accesses that no synchronisation orders, so
// the hold is by time, not by a signal: any signal (a channel, a mutex, the
// response read from the socket, a pooled buffer) would order the request's
// reads before the opening's next writes and hide what the test must find. A
// handler that locks (slog's text handler) would hide it the same way, and so
// would a step that formats text between the probe and the write: the test
// probes at every step so that one of them falls right before it.
type probeEachStep struct {
	opening *atomic.Bool
	addr    string
	probes  *sync.WaitGroup
	results chan<- error
}

func (h probeEachStep) Enabled(context.Context, slog.Level) bool { return true }
func (h probeEachStep) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h probeEachStep) WithGroup(string) slog.Handler            { return h }

func (h probeEachStep) Handle(_ context.Context, r slog.Record) error {
	if !h.opening.Load() || r.Message == "http request" || hasAttr(r, "request_id") {
		return nil // not a step of the opening: a request's own record
	}
	h.probes.Go(func() { h.results <- getState("http://" + h.addr) })
	time.Sleep(200 * time.Millisecond)
	return nil
}

func hasAttr(r slog.Record, key string) bool {
	found := false
	r.Attrs(func(a slog.Attr) bool {
		found = a.Key == key
		return !found
	})
	return found
}

// getState asks /state and checks it names the hosted service. A module
// not listening yet refuses the connection: errNotListening.
func getState(base string) error {
	resp, err := http.Get(base + "/state")
	if errors.Is(err, errConnRefused) {
		return errNotListening
	}
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var st struct {
		Hosted *struct {
			URL string `json:"base_url"`
		} `json:"hosted"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK || st.Hosted == nil || st.Hosted.URL == "" {
		return fmt.Errorf("GET /state: HTTP %d, hosted %+v", resp.StatusCode, st.Hosted)
	}
	return nil
}

var errNotListening = errors.New("not listening yet")

// freeLoopbackAddr returns a loopback address whose port was free a moment
// ago.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// TestRunner_open checks that a session is built before its listener
// serves: requests answered at every step of the opening read the agent
// (its deliverer) while nothing writes it any more. Under -race, a deliverer
// set after the server opened is reported as a data race. The agent opens
// five times (a first start, then restarts on the same data) because
// the race detector may miss one occurrence (it forgets old accesses).
func TestRunner_open(t *testing.T) {
	sb := startRaceSandbox(t)
	clearAgentEnv(t)
	t.Setenv("CFE_AGENT_HOSTED_URL", sb.URL())
	t.Setenv("CFE_AGENT_HOSTED_API_KEY", raceSandboxKey)
	dataDir := t.TempDir()
	for i := range 5 {
		addr := freeLoopbackAddr(t)
		var opening atomic.Bool
		var probes sync.WaitGroup
		results := make(chan error, 100)
		log := slog.New(probeEachStep{opening: &opening, addr: addr, probes: &probes, results: results})
		r := NewRunner(RunnerConfig{Options: Options{DataDir: dataDir, Listen: addr}, DataDir: dataDir, Log: log,
			Module: testModule(log)})
		opening.Store(true)
		err := r.Open(context.Background())
		opening.Store(false)
		probes.Wait()
		close(results)
		if err != nil {
			t.Fatalf("opening %d: %v", i+1, err)
		}
		answered := 0
		for err := range results {
			switch {
			case err == nil:
				answered++
			case !errors.Is(err, errNotListening):
				t.Errorf("opening %d: a request during the opening: %v", i+1, err)
			}
		}
		if answered == 0 {
			t.Errorf("opening %d: no request sent during the opening was answered", i+1)
		}
		if r.cur.a.Deliverer == nil {
			t.Errorf("opening %d: a profile with a hosted service has no deliverer", i+1)
		}
		r.Close()
	}
}

// TestRunner_UseProfile switches the profile from four goroutines at once:
// each switch reopens the agent, and the runner's options are read and
// written only under its lock (-race reports otherwise).
func TestRunner_UseProfile(t *testing.T) {
	r := openTestRunner(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 4 {
		wg.Go(func() {
			for range 2 {
				errs <- r.UseProfile("sandbox")
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("UseProfile: %v", err)
		}
	}
	s, err := r.current()
	if err != nil {
		t.Fatal(err)
	}
	if s.a.Name != "sandbox" || r.opts.Profile != "sandbox" {
		t.Errorf("after the switches: profile %q, option %q", s.a.Name, r.opts.Profile)
	}
}

// openTestRunner opens a runner on the default profile in a temporary data
// directory, listening on a free loopback port, with no agent variables
// from the environment; the test's clean-up closes it under its lock.
func openTestRunner(t *testing.T) *Runner {
	t.Helper()
	clearAgentEnv(t)
	dataDir := t.TempDir()
	log := slog.New(slog.DiscardHandler)
	r := NewRunner(RunnerConfig{Options: Options{DataDir: dataDir, Listen: "127.0.0.1:0"}, DataDir: dataDir, Log: log,
		Module: testModule(log)})
	if err := r.Open(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}
