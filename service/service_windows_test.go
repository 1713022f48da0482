package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// helperConfig tells this test binary, started by the service control
// manager as a throwaway service, where to serve /health and where to write
// that it stopped cleanly. It lives in the service's data directory.
type helperConfig struct {
	Listen  string `json:"listen"`
	Stopped string `json:"stopped"`
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
	err = Run("cfe-agent-test", func(ctx context.Context) error {
		ln, err := net.Listen("tcp", hc.Listen)
		if err != nil {
			return err
		}
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

// TestService_windows installs this test binary as a throwaway service,
// starts it, waits for its /health on a free loopback port, checks its
// state, stops it (the handler winds down cleanly) and uninstalls it.
func TestService_windows(t *testing.T) {
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
	addr := ln.Addr().String()
	ln.Close()
	hc := helperConfig{Listen: addr, Stopped: filepath.Join(dir, "stopped")}
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
		t.Skip("not an administrator: cannot install a service")
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := Install(cfg); err == nil {
		t.Error("a second install of the same name was accepted")
	}

	var body []byte
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		resp, err := http.Get("http://" + addr + "/health")
		if err == nil {
			body = make([]byte, 64)
			n, _ := resp.Body.Read(body)
			body = body[:n]
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			st, qerr := Query(name)
			t.Fatalf("no /health within 30 s: %v (state %+v, %v)", err, st, qerr)
		}
	}
	if string(body) != `{"ok":true}` {
		t.Errorf("/health = %q", body)
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
	if err := Start(name); !errors.Is(err, ErrNotInstalled) {
		t.Errorf("Start after Uninstall = %v, want ErrNotInstalled", err)
	}
}
