package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/app"
	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/logs"
	"github.com/cfe-agent/cfe-agent/profiles"
)

// clearAgentEnv empties, for the test's duration, every CFE_AGENT_ variable
// inherited from the developer's shell (an empty variable overrides
// nothing), as agentEnv does for a child agent.
func clearAgentEnv(t *testing.T) {
	t.Helper()
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, profiles.EnvPrefix) {
			t.Setenv(name, "")
		}
	}
	// The numbering witness lives outside the data directory (by default
	// in the user's ~/.local/state): each test gets its own, never the
	// developer's.
	t.Setenv(profiles.EnvWitnessDir, t.TempDir())
}

// inProcess is an agent running in the test's process through Main.
type inProcess struct {
	*Main
	logs *testtool.SyncBuffer // the log's second copy
}

// startInProcess opens the agent in this process through Main, headless,
// with opts (a temporary data directory when opts.DataDir is empty), so (a
// free loopback port when so.listen is empty) and, of the CFE_AGENT_
// variables, only env ("NAME=value"), and closes it when the test ends,
// checking that it closes cleanly. The agent runs in the test process's time
// zone; its log is shown when the test fails. The test must not be parallel
// (the environment is the process's).
func startInProcess(t *testing.T, opts app.Options, so serveOptions, env ...string) *inProcess {
	t.Helper()
	clearAgentEnv(t)
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		t.Setenv(name, value)
	}
	// Unset rather than empty: the flags must not reach these either.
	for _, name := range []string{profiles.EnvProfile, profiles.EnvPrefix + "LISTEN"} {
		if _, given := lookupPair(env, name); !given {
			t.Setenv(name, "")
			if err := os.Unsetenv(name); err != nil {
				t.Fatal(err)
			}
		}
	}
	if opts.DataDir == "" {
		opts.DataDir = t.TempDir()
	}
	if so.listen == "" {
		so.listen = "127.0.0.1:0"
	}
	so.headless = true
	a := &inProcess{Main: NewMain(opts, so), logs: &testtool.SyncBuffer{}}
	a.Stderr = a.logs
	if err := a.Open(context.Background()); err != nil {
		t.Fatalf("opening the agent: %v\n%s", err, a.logs)
	}
	t.Cleanup(func() {
		if err := a.Close(); err != nil {
			t.Errorf("closing the agent: %v", err)
		}
		if t.Failed() {
			t.Logf("the agent's log:\n%s", a.logs)
		}
	})
	return a
}

// lookupPair finds name's value among "NAME=value" pairs.
func lookupPair(env []string, name string) (string, bool) {
	for _, kv := range env {
		if n, v, _ := strings.Cut(kv, "="); n == name {
			return v, true
		}
	}
	return "", false
}

// getReport GETs url and decodes its JSON body into v; it returns the
// status.
func getReport(t *testing.T, url string, v any) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: HTTP %d, %v", url, resp.StatusCode, err)
	}
	return resp.StatusCode
}

// TestAgent_ListenAddresses checks base_url for each kind of listen address
// given by --listen. It ran a built binary per case; it runs the agent
// in-process through Main now (the flag's parsing is covered by every test
// that starts "cfe-agent serve --listen").
func TestAgent_ListenAddresses(t *testing.T) {
	t.Run("all interfaces", func(t *testing.T) {
		a := startInProcess(t, app.Options{}, serveOptions{listen: "0.0.0.0:0"},
			"CFE_AGENT_LAN_ENABLED=true", "CFE_AGENT_LAN_TOKENS=ncmm-egrz-x76k-x45j-srrf-f6n6-338h")
		base := a.BaseURL()
		if !strings.HasPrefix(base, "http://0.0.0.0:") {
			t.Fatalf("base_url %q, want http://0.0.0.0:<port>", base)
		}
		port := base[strings.LastIndex(base, ":"):]
		var st struct {
			BaseURL string   `json:"base_url"`
			URLs    []string `json:"urls"`
		}
		getReport(t, "http://127.0.0.1"+port+"/state", &st)
		if st.BaseURL != base || len(st.URLs) == 0 || st.URLs[0] != "http://127.0.0.1"+port {
			t.Fatalf("/state base_url %v urls %v", st.BaseURL, st.URLs)
		}
	})
	t.Run("specific IP", func(t *testing.T) {
		// 127.0.0.2 is a loopback address other than the default's.
		a := startInProcess(t, app.Options{}, serveOptions{listen: "127.0.0.2:0"})
		if !strings.HasPrefix(a.BaseURL(), "http://127.0.0.2:") {
			t.Fatalf("base_url %q", a.BaseURL())
		}
		var h struct {
			BaseURL string `json:"base_url"`
		}
		if getReport(t, a.BaseURL()+"/health", &h); h.BaseURL != a.BaseURL() {
			t.Fatalf("/health base_url %v", h.BaseURL)
		}
	})
	t.Run("LAN address without LAN mode is refused", func(t *testing.T) {
		clearAgentEnv(t)
		m := NewMain(app.Options{DataDir: t.TempDir()}, serveOptions{listen: "0.0.0.0:0", headless: true})
		m.Stderr = &testtool.SyncBuffer{}
		err := m.Open(context.Background())
		if err == nil {
			m.Close()
			t.Fatal("the agent opened on a LAN address without LAN mode")
		}
		if !strings.Contains(cfe.Describe(err), "lan") {
			t.Fatalf("error %q does not name the lan setting", cfe.Describe(err))
		}
	})
}

// TestMain_Open checks the overrides of the command line: they reach the
// configuration without being written to the process environment, and a
// refused one leaves nothing open.
func TestMain_Open(t *testing.T) {
	t.Run("flags reach the profile, not the environment", func(t *testing.T) {
		a := startInProcess(t, app.Options{Profile: "SANDBOX"}, serveOptions{listen: "127.0.0.2:0"})
		if !strings.HasPrefix(a.BaseURL(), "http://127.0.0.2:") {
			t.Errorf("base_url %q, want the --listen address", a.BaseURL())
		}
		var st struct {
			Profile string `json:"profile"`
		}
		if getReport(t, a.BaseURL()+"/state", &st); st.Profile != "sandbox" {
			t.Errorf("/state profile %q, want the --profile one", st.Profile)
		}
		for _, name := range []string{profiles.EnvProfile, profiles.EnvPrefix + "LISTEN"} {
			if v, set := os.LookupEnv(name); set {
				t.Errorf("the agent set $%s=%q", name, v)
			}
		}
	})
	t.Run("an unknown profile opens nothing", func(t *testing.T) {
		clearAgentEnv(t)
		dataDir := t.TempDir()
		m := NewMain(app.Options{DataDir: dataDir, Profile: "caja9"}, serveOptions{listen: "127.0.0.1:0", headless: true})
		m.Stderr = &testtool.SyncBuffer{}
		err := m.Open(context.Background())
		if err == nil {
			m.Close()
			t.Fatal("the agent opened with a profile the configuration does not have")
		}
		if cfe.ErrorCode(err) != cfe.EINVALID || !strings.Contains(cfe.Describe(err), `"caja9"`) {
			t.Errorf("error %v (%s), want EINVALID naming the profile", cfe.ErrorCode(err), cfe.Describe(err))
		}
		if m.BaseURL() != "" {
			t.Errorf("a refused Main serves at %q", m.BaseURL())
		}
		if err := m.Close(); err != nil {
			t.Errorf("closing a Main that did not open: %v", err)
		}
		// The service and the autostarted tray have no console: the log
		// file keeps the reason, as the user would read it.
		files, err := filepath.Glob(filepath.Join(logs.Dir(dataDir), "*"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no log file in %s (%v)", logs.Dir(dataDir), err)
		}
		var logged []byte
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			logged = append(logged, b...)
		}
		if !bytes.Contains(logged, []byte(`msg="the agent could not start"`)) || !bytes.Contains(logged, []byte(`\"caja9\"`)) {
			t.Errorf("the log does not say why the agent could not start (naming caja9):\n%s", logged)
		}
	})
}

// TestMain_Run runs the agent headless as the serve command (and a Windows
// service) does: it serves until its context ends, then closes: the run file
// goes, the port closes, the log says so.
func TestMain_Run(t *testing.T) {
	clearAgentEnv(t)
	dataDir := t.TempDir()
	out := &testtool.SyncBuffer{}
	m := NewMain(app.Options{DataDir: dataDir}, serveOptions{listen: "127.0.0.1:0", headless: true})
	m.Stderr = out
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()

	// The run file is how other processes find a running agent.
	var info app.RunInfo
	found := testtool.WaitUntil(t, 20*time.Second, func() bool {
		var ok bool
		if info, ok = app.ReadRunFile(dataDir, "sandbox"); ok {
			return true
		}
		select {
		case err := <-done:
			t.Fatalf("Run returned before serving: %v\n%s", err, out)
		default:
		}
		return false
	})
	if !found {
		t.Fatalf("no run file:\n%s", out)
	}
	var h struct {
		BaseURL string `json:"base_url"`
	}
	if getReport(t, info.BaseURL+"/health", &h); h.BaseURL != info.BaseURL {
		t.Fatalf("/health base_url %q, run file %q", h.BaseURL, info.BaseURL)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("Run did not return after its context ended:\n%s", out)
	}
	if _, ok := app.ReadRunFile(dataDir, "sandbox"); ok {
		t.Error("the run file is still there after Run returned")
	}
	if resp, err := http.Get(info.BaseURL + "/health"); err == nil {
		resp.Body.Close()
		t.Error("the local module still answers after Run returned")
	}
	logFile, err := os.ReadFile(filepath.Join(logs.Dir(dataDir), logs.FileName))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`msg="running headless"`, `msg="shutting down"`} {
		if !strings.Contains(string(logFile), want) || !strings.Contains(out.String(), want) {
			t.Errorf("the log file and stderr should both have %s", want)
		}
	}
}
