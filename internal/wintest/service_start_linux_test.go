package wintest

import (
	"context"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/internal/testtool/wine"
)

// TestWine_ServiceStartWhileTrayRuns: with an agent (the cashier's tray, here
// `serve`) holding the data directory, "service install" and "service start"
// on that same directory (the installing user's) refuse, telling to close
// the tray agent, instead of starting a service that stops at once.
func TestWine_ServiceStartWhileTrayRuns(t *testing.T) {
	t.Parallel()
	wine.Available(t)
	exe := shippedAgent(t) // agent_linux_test.go
	prefix := wine.New(t)
	dataDir := t.TempDir()
	winData := prefix.WindowsPath(dataDir)
	montevideo := "TZ=America/Montevideo"
	serve := func() *agent {
		cmd := prefix.Command(context.Background(), exe, "--data-dir", winData, "serve", "--listen", "127.0.0.1:0")
		cmd.Env = prefix.Env(montevideo)
		return start(t, cmd) // holds the data directory's Global mutex until it ends
	}

	service := serviceCommand(t, prefix, exe, winData) // agent_linux_test.go
	refused := func(what string, out string, err error) {
		t.Helper()
		if err == nil {
			t.Fatalf("service %s succeeded while another agent holds %s:\n%s", what, winData, out)
		}
		if !strings.Contains(out, "cierre el agente de la bandeja") || !strings.Contains(out, winData) {
			t.Errorf("service %s's refusal does not tell to close the tray agent of %s:\n%s", what, winData, out)
		}
	}
	_, _ = service("uninstall") // one an interrupted run left in the cached prefix
	t.Cleanup(func() { _, _ = service("uninstall") })

	tray := serve()
	out, err := service("install")
	refused("install", out, err)
	if out, err := service("status"); err != nil || !strings.Contains(out, "no instalado") {
		t.Errorf("after the refused install: %v\n%s", err, out)
	}
	_ = tray.cmd.Process.Kill()
	if !tray.exited(commandTime) {
		t.Fatalf("the tray agent did not end within %s of its kill", commandTime)
	}

	// Installed (and stopped) while the directory is free; then the tray
	// agent starts again.
	if out, err := service("install"); err != nil {
		t.Fatalf("service install: %v\n%s", err, out)
	}
	// Stop takes effect once the start has ended (a pending start accepts
	// no stop): start waits for it, and may fail (port 18787 taken here).
	_, _ = service("start")
	if out, err := service("stop"); err != nil {
		t.Fatalf("service stop: %v\n%s", err, out)
	}
	serve()
	out, err = service("start")
	refused("start", out, err)
}
