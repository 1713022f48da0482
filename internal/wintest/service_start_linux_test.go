package wintest

import (
	"context"
	"strings"
	"testing"
	"time"

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
	// One Wine session throughout, begun by a program that lives as long as
	// the test: a new session would start the installed service by itself
	// (it starts automatically) beside the tray agent started after
	// "service stop".
	keepSession(t, prefix) // agent_linux_test.go
	dataDir := t.TempDir()
	winData := prefix.WindowsPath(dataDir)
	montevideo := "TZ=America/Montevideo"
	own := "CFE_AGENT_WITNESS_DIR=" + prefix.WindowsPath(t.TempDir())
	emptyDefaultWitness(t, prefix) // the service's (agent_linux_test.go)
	serve := func() *agent {
		cmd := prefix.Command(context.Background(), exe, "--data-dir", winData, "serve", "--listen", "127.0.0.1:0")
		cmd.Env = prefix.Env(montevideo, own)
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
	// agent starts again. The service listens on a free port, not the
	// profile's 18787, which may be taken: its start must not fail.
	listenOnFreePort(t, dataDir) // agent_linux_test.go
	if out, err := service("install"); err != nil {
		t.Fatalf("service install: %v\n%s", err, out)
	}
	// Stop takes effect once the start has ended (a pending start accepts
	// no stop): wait until the manager says the service runs. Asking for
	// the state, not "service start", which refuses while the pending
	// service itself holds the directory.
	running := time.After(commandTime)
	for {
		out, err := service("status")
		if err == nil && strings.Contains(out, "(en ejecución)") {
			break
		}
		select {
		case <-running:
			t.Fatalf("the service installed (and so started) did not run within %s: %v\n%s", commandTime, err, out)
		case <-time.After(500 * time.Millisecond):
		}
	}
	if out, err := service("stop"); err != nil {
		t.Fatalf("service stop: %v\n%s", err, out)
	}
	serve()
	out, err = service("start")
	refused("start", out, err)
}
