package main_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// TestAgent_SingleInstance runs real processes on one data directory: while
// an agent runs, a second start of the tray agent opens the running agent's
// status page (through xdg-open and $BROWSER) and exits 0 (started with
// --autostart, it exits 0 opening nothing), a second "serve"
// refuses with a Spanish error, and once the first one stops the lock is
// free again.
func TestAgent_SingleInstance(t *testing.T) {
	t.Parallel()
	testtool.Require(t, "xdg-open")
	dataDir := t.TempDir()
	opened := filepath.Join(t.TempDir(), "opened")
	browser := filepath.Join(t.TempDir(), "browser.sh")
	// Each start is told apart by the variable below, which the agent,
	// xdg-open and the browser inherit: one line per page opened.
	const openedBy = "CFE_TEST_OPENED_BY"
	if err := os.WriteFile(browser, []byte("#!/bin/sh\nprintf '%s %s\\n' \"$"+openedBy+"\" \"$1\" >> "+opened+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// No desktop: xdg-open falls back to $BROWSER.
	var env []string
	for _, kv := range agentEnv("CFE_AGENT_DATA_DIR="+dataDir, "BROWSER="+browser) {
		switch strings.SplitN(kv, "=", 2)[0] {
		case "DISPLAY", "WAYLAND_DISPLAY", "XDG_CURRENT_DESKTOP", "DESKTOP_SESSION", "KDE_FULL_SESSION", "GNOME_DESKTOP_SESSION_ID", "DBUS_SESSION_BUS_ADDRESS":
			continue
		}
		env = append(env, kv)
	}

	first := startAgent(t, env, "--listen", "127.0.0.1:0")

	// Started by an autostart entry (at each login, the service holding the
	// directory): exit 0, say so, open nothing.
	out, code := runCLI(t, slices.Concat(env, []string{openedBy + "=autostart"}), "--autostart", "--listen", "127.0.0.1:0")
	if code != 0 || !strings.Contains(out, "ya está funcionando con estos datos (carpeta "+dataDir+"): el inicio con la sesión termina sin abrir nada") {
		t.Fatalf("autostart start: exit %d\n%s", code, out)
	}
	// That it opened nothing is checked at the end: by then the tray
	// agent's start below, begun after this one ended, has had its page
	// opened, and the rest of the test has run.
	openedFor := func(by string) []string {
		b, _ := os.ReadFile(opened)
		var urls []string
		for l := range strings.Lines(string(b)) {
			if u, ok := strings.CutPrefix(strings.TrimSuffix(l, "\n"), by+" "); ok {
				urls = append(urls, u)
			}
		}
		return urls
	}

	out, code = runCLI(t, slices.Concat(env, []string{openedBy + "=tray"}), "--listen", "127.0.0.1:0") // the tray agent, started by hand
	if code != 0 || !strings.Contains(out, "ya está funcionando") || !strings.Contains(out, first.baseURL+"/") {
		t.Fatalf("second tray start: exit %d\n%s", code, out)
	}
	var got []string
	testtool.WaitUntil(t, 10*time.Second, func() bool { got = openedFor("tray"); return len(got) > 0 })
	if len(got) != 1 || got[0] != first.baseURL+"/" {
		t.Errorf("the browser was asked for %q, want the status page %s/ once", got, first.baseURL)
	}

	out, code = runCLI(t, env, "serve", "--listen", "127.0.0.1:0")
	if code != 1 || !strings.Contains(out, "ya hay un agente ejecutándose con estos datos (carpeta "+dataDir) {
		t.Fatalf("second serve: exit %d\n%s", code, out)
	}

	// One-shot commands are not affected.
	if out, code := runCLI(t, env, "version"); code != 0 {
		t.Fatalf("version while the agent runs: exit %d\n%s", code, out)
	}

	first.stop(t)
	again := startAgent(t, env, "--listen", "127.0.0.1:0")
	again.stop(t)

	if got := openedFor("autostart"); len(got) > 0 {
		t.Errorf("the autostart start opened %q", got)
	}
}
