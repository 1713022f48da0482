//go:build !windows && !darwin

package autostart

import (
	"os"
	"path/filepath"
	"testing"
)

func TestEnable_xdg(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "") // falls back to ~/.config
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
