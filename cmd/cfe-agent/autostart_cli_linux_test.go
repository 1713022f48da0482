package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLI_Autostart: "autostart enable" writes the per-user entry with the
// agent's resolved path and the data directory given by the environment;
// with the installer's machine-wide entry, status says so, enable adds no
// second entry (and removes the old one), and disable refuses in Spanish.
func TestCLI_Autostart(t *testing.T) {
	home, sys, dataDir := t.TempDir(), t.TempDir(), t.TempDir()
	env := agentEnv("CFE_AGENT_DATA_DIR="+dataDir, "HOME="+home, "XDG_CONFIG_HOME=", "XDG_CONFIG_DIRS="+sys)
	user := filepath.Join(home, ".config", "autostart", "cfe-agent.desktop")

	if out, code := runCLI(t, env, "autostart", "enable"); code != 0 || !strings.Contains(out, "inicio con el sistema: activado ("+user+")") {
		t.Fatalf("enable: exit %d\n%s", code, out)
	}
	exe, err := filepath.EvalSymlinks(agentBin)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(user)
	if want := "Exec=" + exe + " --data-dir " + dataDir + "\n"; err != nil || !strings.Contains(string(b), want) {
		t.Fatalf("the entry lacks %q (%v):\n%s", want, err, b)
	}

	machine := filepath.Join(sys, "autostart", "cfe-agent.desktop")
	if err := os.MkdirAll(filepath.Dir(machine), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(machine, []byte("[Desktop Entry]\nType=Application\nName=Agente CFE\nExec=/usr/bin/cfe-agent\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, code := runCLI(t, env, "autostart", "status")
	if code != 0 || !strings.Contains(out, "activado para todos los usuarios por el instalador ("+machine+") y también para este usuario") {
		t.Fatalf("status: exit %d\n%s", code, out)
	}
	if out, code := runCLI(t, env, "autostart", "enable"); code != 0 || !strings.Contains(out, "activado para todos los usuarios por el instalador ("+machine+")\n") {
		t.Fatalf("enable with the machine-wide entry: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(user); !os.IsNotExist(err) {
		t.Fatalf("the per-user duplicate is still there: %v", err)
	}
	out, code = runCLI(t, env, "autostart", "disable")
	if code != 1 || !strings.Contains(out, "el instalador activó el inicio con el sistema para todos los usuarios") {
		t.Fatalf("disable with the machine-wide entry: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(machine); err != nil {
		t.Fatalf("the installer's entry was touched: %v", err)
	}
}
