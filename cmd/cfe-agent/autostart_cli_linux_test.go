package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCLI_Autostart: "autostart enable" writes the per-user entry with the
// agent's resolved path and the data directory given by the environment;
// with the installer's machine-wide entry, an entry with its own data
// directory is kept, the installer's command is not duplicated, and disable
// hides the installer's entry for this user.
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
	if want := "Exec=" + exe + " --autostart --data-dir " + dataDir + "\n"; err != nil || !strings.Contains(string(b), want) {
		t.Fatalf("the entry lacks %q (%v):\n%s", want, err, b)
	}

	machine := filepath.Join(sys, "autostart", "cfe-agent.desktop")
	if err := os.MkdirAll(filepath.Dir(machine), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(machine, []byte("[Desktop Entry]\nType=Application\nName=Agente CFE\nExec=/usr/bin/cfe-agent\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// The entry with its own data directory stays: the installer's would
	// open the default folder at the next login.
	out, code := runCLI(t, env, "autostart", "status")
	if code != 0 || !strings.Contains(out, "activado para este usuario ("+user+"), en lugar de la entrada del instalador ("+machine+")") {
		t.Fatalf("status: exit %d\n%s", code, out)
	}
	if out, code := runCLI(t, env, "autostart", "enable"); code != 0 || !strings.Contains(out, "activado para este usuario ("+user+")") {
		t.Fatalf("enable with the machine-wide entry and a data directory: exit %d\n%s", code, out)
	}
	if b, err := os.ReadFile(user); err != nil || !strings.Contains(string(b), " --data-dir "+dataDir+"\n") {
		t.Fatalf("the per-user entry with its data directory is gone: %v\n%s", err, b)
	}

	// Without a data directory the installer's entry does the same: no
	// duplicate; disable hides it for this user.
	plain := agentEnv("HOME="+home, "XDG_CONFIG_HOME=", "XDG_CONFIG_DIRS="+sys)
	if out, code := runCLI(t, plain, "autostart", "enable"); code != 0 || !strings.Contains(out, "activado para todos los usuarios por el instalador ("+machine+")\n") {
		t.Fatalf("enable with the machine-wide entry: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(user); !os.IsNotExist(err) {
		t.Fatalf("the per-user duplicate is still there: %v", err)
	}
	out, code = runCLI(t, plain, "autostart", "disable")
	if code != 0 || !strings.Contains(out, "desactivado para este usuario ("+user+" oculta la entrada del instalador, "+machine+")") {
		t.Fatalf("disable with the machine-wide entry: exit %d\n%s", code, out)
	}
	if b, err := os.ReadFile(user); err != nil || !strings.Contains(string(b), "\nHidden=true\n") {
		t.Fatalf("no Hidden entry: %v\n%s", err, b)
	}
	if b, err := os.ReadFile(machine); err != nil || !strings.Contains(string(b), "Exec=/usr/bin/cfe-agent\n") {
		t.Fatalf("the installer's entry was touched: %v\n%s", err, b)
	}
}
