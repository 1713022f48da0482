package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/registry"
	"golang.org/x/sys/windows/svc"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// helperConfig tells this test binary, started by the service control
// manager as a throwaway service, where to serve /health and where to write
// that it stopped cleanly. It lives in the service's data directory.
type helperConfig struct {
	Listen  string `json:"listen"`
	Stopped string `json:"stopped"`
	// OpenDelay is how long the helper takes to "open" before it listens
	// and calls ready: a Running reported before ready would be seen with
	// no /health yet.
	OpenDelay time.Duration `json:"open_delay"`
	// FailOpen makes the helper's open fail (before ready).
	FailOpen bool `json:"fail_open"`
	// ProgressEvery, when set, replaces startProgressEvery in the helper.
	ProgressEvery time.Duration `json:"progress_every"`
}

// TestMain runs the service helper when the service control manager started
// this binary (with the service's arguments: --data-dir DIR serve), else the
// tests.
func TestMain(m *testing.M) {
	if IsService() {
		os.Exit(serviceHelper())
	}
	os.Exit(m.Run())
}

func serviceHelper() int {
	var dir string
	for i, a := range os.Args {
		if a == "--data-dir" && i+1 < len(os.Args) {
			dir = os.Args[i+1]
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "helper.json"))
	if err != nil {
		return 2
	}
	var hc helperConfig
	if json.Unmarshal(b, &hc) != nil {
		return 2
	}
	if hc.ProgressEvery > 0 {
		startProgressEvery = hc.ProgressEvery
	}
	err = Run("cfe-agent-test", func(ctx context.Context, ready func()) error {
		// The slow open the test asks for, which a stop ends as it would
		// end the agent's.
		select {
		case <-time.After(hc.OpenDelay):
		case <-ctx.Done():
			return ctx.Err()
		}
		if hc.FailOpen {
			return errors.New("the helper's open failed")
		}
		ln, err := net.Listen("tcp", hc.Listen)
		if err != nil {
			return err
		}
		ready()
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprint(w, `{"ok":true}`)
		}), ReadHeaderTimeout: 5 * time.Second}
		go srv.Serve(ln) //nolint:errcheck // ends with Shutdown
		<-ctx.Done()
		if err := srv.Shutdown(context.Background()); err != nil {
			return err
		}
		return os.WriteFile(hc.Stopped, []byte("stopped"), 0o644)
	})
	if err != nil {
		return 1
	}
	return 0
}

// helperClient asks the helper for /health; a helper that does not answer
// fails the test after a minute instead of hanging it.
var helperClient = &http.Client{Timeout: time.Minute}

// installHelper installs this test binary as a throwaway service whose
// helper follows hc (Listen and Stopped are filled in), and uninstalls it when
// the test ends. It returns the service's name and the helper's settings.
func installHelper(t *testing.T, hc helperConfig) (string, helperConfig) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("cfe-agent-test-%d", time.Now().UnixNano()%1_000_000_000)
	// Not t.TempDir: Wine 8 cannot remove it (and SYSTEM may own files).
	dir := filepath.Join(os.TempDir(), name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hc.Listen = ln.Addr().String()
	ln.Close()
	hc.Stopped = filepath.Join(dir, "stopped")
	b, _ := json.Marshal(hc)
	if err := os.WriteFile(filepath.Join(dir, "helper.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}

	cfg := Config{Name: name, DisplayName: "Agente CFE (" + name + ")", Description: "servicio de prueba de cfe-agent", Exe: exe, DataDir: dir}
	t.Cleanup(func() {
		if err := Uninstall(name); err != nil && !errors.Is(err, ErrNotInstalled) && !errors.Is(err, ErrNotAdmin) {
			t.Errorf("cleanup: %v", err)
		}
	})
	err = Install(cfg)
	if errors.Is(err, ErrNotAdmin) {
		testtool.Unavailable(t, "not an administrator: cannot install a service")
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := Install(cfg); err == nil {
		t.Error("a second install of the same name was accepted")
	}
	return name, hc
}

// TestService_windows installs this test binary as a throwaway service that
// takes a while to open, waits until the manager says Running and finds its
// /health up at that moment, checks its state, stops it (the handler winds
// down cleanly) and uninstalls it.
// Serial: Wine's service control manager fails services started side by side
// ("Invalid handle"): serial tests run one at a time, before the parallel ones.
func TestService_windows(t *testing.T) {
	name, hc := installHelper(t, helperConfig{OpenDelay: 1500 * time.Millisecond})
	if err := Start(name); err != nil { // Install started it: Start waits for Running
		t.Fatal(err)
	}
	resp, err := helperClient.Get("http://" + hc.Listen + "/health")
	if err != nil {
		t.Fatalf("the manager says Running but /health is not up: %v", err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || string(body) != `{"ok":true}` {
		t.Errorf("/health = %q, %v", body, err)
	}
	if msgFile, err := eventSourceMessageFile(name); err != nil || !strings.HasSuffix(msgFile, `\EventCreate.exe`) {
		t.Errorf("the event source %s after Install: message file %q, %v", name, msgFile, err)
	}
	if dir, err := InstalledDataDir(name); err != nil || dir != filepath.Dir(hc.Stopped) {
		t.Errorf("InstalledDataDir = %q, %v, want %q", dir, err, filepath.Dir(hc.Stopped))
	}
	st, err := Query(name)
	if err != nil || !st.Installed || !st.Running || !st.Enabled {
		t.Errorf("Query while running = %+v, %v", st, err)
	}

	if err := Stop(name); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(hc.Stopped); err != nil || string(b) != "stopped" {
		t.Errorf("the service did not wind down through its handler: %v", err)
	}
	if st, err := Query(name); err != nil || st.Running || st.Detail != "detenido" {
		t.Errorf("Query after Stop = %+v, %v", st, err)
	}
	if err := Uninstall(name); err != nil {
		t.Fatal(err)
	}
	if st, err := Query(name); err != nil || st.Installed {
		t.Errorf("Query after Uninstall = %+v, %v", st, err)
	}
	if _, err := eventSourceMessageFile(name); !errors.Is(err, windows.ERROR_FILE_NOT_FOUND) {
		t.Errorf("the event source %s after Uninstall: %v, want it gone", name, err)
	}
	if err := Start(name); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("Start after Uninstall = %v, want ErrNotInstalled", err)
	}
}

// TestService_windowsFailedOpen: a service whose open fails is never
// Running: Start reports it stopped while starting, and the manager keeps
// the service-specific exit code ExitStartFailed.
// Serial: Wine's service control manager fails services started side by side
// ("Invalid handle"): serial tests run one at a time, before the parallel ones.
func TestService_windowsFailedOpen(t *testing.T) {
	name, _ := installHelper(t, helperConfig{FailOpen: true, OpenDelay: 500 * time.Millisecond})
	err := Start(name)
	if !errors.Is(err, ErrStartFailed) {
		t.Fatalf("Start of a service whose open fails = %v, want stopped while starting", err)
	}
	m, s, err := open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Disconnect() //nolint:errcheck // closing a handle
	defer s.Close()      //nolint:errcheck // closing a handle
	st, err := s.Query()
	if err != nil {
		t.Fatal(err)
	}
	if st.State != svc.Stopped || st.Win32ExitCode != uint32(windows.ERROR_SERVICE_SPECIFIC_ERROR) || st.ServiceSpecificExitCode != ExitStartFailed {
		t.Errorf("the failed service's status = %+v, want Stopped with service-specific exit code %d", st, ExitStartFailed)
	}
}

// TestService_windowsSlowStart: a service that takes longer to open than
// Start waits without progress still starts, because it advances its
// CheckPoint while StartPending (here every 200 ms, with Start's patience
// cut to 3 s, more than Wine takes to start the process, and an open of 8 s).
// Serial: Wine's service control manager fails services started side by side
// ("Invalid handle"): serial tests run one at a time, before the parallel ones.
func TestService_windowsSlowStart(t *testing.T) {
	name, hc := installHelper(t, helperConfig{OpenDelay: 8 * time.Second, ProgressEvery: 200 * time.Millisecond})
	if err := startWithin(name, 3*time.Second); err != nil {
		t.Fatalf("Start of a slow service that shows progress = %v", err)
	}
	resp, err := helperClient.Get("http://" + hc.Listen + "/health")
	if err != nil {
		t.Fatalf("the manager says Running but /health is not up: %v", err)
	}
	resp.Body.Close()
	if err := Stop(name); err != nil {
		t.Fatal(err)
	}
}

// eventSourceMessageFile reads the EventMessageFile of the Application
// log's event source name from the registry.
func eventSourceMessageFile(name string) (string, error) {
	k, err := registry.OpenKey(registry.LOCAL_MACHINE, `SYSTEM\CurrentControlSet\Services\EventLog\Application\`+name, registry.QUERY_VALUE)
	if err != nil {
		return "", err
	}
	defer k.Close()
	v, _, err := k.GetStringValue("EventMessageFile")
	return v, err
}

// TestReportEvent_unregisteredSource: writing an event for a source no
// install registered is accepted (the service writes its failure even when
// the install's registration is missing).
func TestReportEvent_unregisteredSource(t *testing.T) {
	t.Parallel()
	name := fmt.Sprintf("cfe-agent-test-unregistered-%d", time.Now().UnixNano()%1_000_000_000)
	if err := reportEvent(name, eventStartFailed, "prueba de cfe-agent: origen sin registrar"); err != nil {
		t.Fatalf("reportEvent with an unregistered source: %v", err)
	}
	if err := removeEventSource(name); err != nil {
		t.Errorf("removing a source that was never registered: %v", err)
	}
}
