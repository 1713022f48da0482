//go:build !windows && !darwin

package autostart

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestEnable_xdg(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "") // falls back to ~/.config
	t.Setenv("XDG_CONFIG_DIRS", t.TempDir())
	path := filepath.Join(home, ".config", "autostart", "cfe-agent.desktop")

	if on, err := Enabled("cfe-agent"); err != nil || on {
		t.Fatalf("Enabled before Enable = %v, %v", on, err)
	}
	if err := Enable(agent); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(DesktopEntry(agent)) {
		t.Errorf("file holds\n%s", got)
	}
	if on, err := Enabled("cfe-agent"); err != nil || !on {
		t.Fatalf("Enabled after Enable = %v, %v", on, err)
	}
	if err := Disable("cfe-agent"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("entry still there: %v", err)
	}
	if err := Disable("cfe-agent"); err != nil {
		t.Fatalf("disabling twice: %v", err)
	}

	xdg := filepath.Join(t.TempDir(), "cfg")
	t.Setenv("XDG_CONFIG_HOME", xdg)
	if err := Enable(agent); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(xdg, "autostart", "cfe-agent.desktop")); err != nil {
		t.Fatalf("XDG_CONFIG_HOME not honoured: %v", err)
	}
	if err := Enable(Entry{Name: "../evil", Command: []string{"/x"}}); err == nil {
		t.Fatal("a name with a path was accepted")
	}
}

// TestQuery_xdgMachineWide: the system-wide autostart file an installer puts
// in $XDG_CONFIG_DIRS/autostart is seen, not duplicated, and not removable.
func TestQuery_xdgMachineWide(t *testing.T) {
	home, sys1, sys2 := t.TempDir(), t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("XDG_CONFIG_DIRS", sys1+":"+sys2)
	st, err := Query("cfe-agent")
	if err != nil || st.Enabled() || st.MachinePath != filepath.Join(sys1, "autostart", "cfe-agent.desktop") {
		t.Fatalf("before: %+v, %v", st, err)
	}
	machine := filepath.Join(sys2, "autostart", "cfe-agent.desktop")
	if err := os.MkdirAll(filepath.Dir(machine), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(machine, DesktopEntry(agent), 0o644); err != nil {
		t.Fatal(err)
	}
	if st, err = Query("cfe-agent"); err != nil || !st.Machine || st.User || st.MachinePath != machine {
		t.Fatalf("with the installer's file: %+v, %v", st, err)
	}
	if err := Enable(agent); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(home, ".config", "autostart", "cfe-agent.desktop")); !os.IsNotExist(err) {
		t.Fatalf("a per-user entry was written beside the machine-wide one: %v", err)
	}
	if err := Disable("cfe-agent"); !errors.Is(err, ErrMachineWide) {
		t.Fatalf("Disable = %v, want ErrMachineWide", err)
	}
	if _, err := os.Stat(machine); err != nil {
		t.Fatalf("the installer's file was touched: %v", err)
	}
}
