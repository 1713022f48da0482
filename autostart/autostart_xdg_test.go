//go:build !windows && !darwin

package autostart

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Serial: it sets HOME and the XDG variables (t.Setenv), where the entries go.
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
// in $XDG_CONFIG_DIRS/autostart is seen and never touched: the installer's
// command is not duplicated, turning autostart off writes a Hidden=true file
// of the same name for this user, and an entry with its own data directory
// replaces the system's for this user.
// Serial: it sets HOME and the XDG variables (t.Setenv), where the entries go.
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
	if err := os.WriteFile(machine, DesktopEntry(installerCommand), 0o644); err != nil {
		t.Fatal(err)
	}
	if st, err = Query("cfe-agent"); err != nil || !st.Machine || st.User || st.MachinePath != machine {
		t.Fatalf("with the installer's file: %+v, %v", st, err)
	}
	user := filepath.Join(home, ".config", "autostart", "cfe-agent.desktop")
	if err := Enable(installerCommand); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(user); !os.IsNotExist(err) {
		t.Fatalf("a per-user entry was written beside the machine-wide one: %v", err)
	}

	if err := Disable("cfe-agent"); err != nil {
		t.Fatalf("Disable = %v", err)
	}
	if b, err := os.ReadFile(user); err != nil || !strings.Contains(string(b), "\nHidden=true\n") {
		t.Fatalf("the user's file: %v\n%s", err, b)
	}
	if st, err = Query("cfe-agent"); err != nil || st.Enabled() || !st.Hidden || st.User {
		t.Fatalf("after Disable: %+v, %v", st, err)
	}
	if err := Enable(installerCommand); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(user); !os.IsNotExist(err) {
		t.Fatalf("enabling again left the Hidden file: %v", err)
	}

	custom := agent
	custom.Custom = true
	if err := Enable(custom); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(user); err != nil || string(b) != string(DesktopEntry(custom)) {
		t.Fatalf("the user's entry with its data directory: %v\n%s", err, b)
	}
	if st, err = Query("cfe-agent"); err != nil || !st.Enabled() || !st.User || st.Hidden {
		t.Fatalf("with the user's own entry: %+v, %v", st, err)
	}
	if b, err := os.ReadFile(machine); err != nil || string(b) != string(DesktopEntry(installerCommand)) {
		t.Fatalf("the installer's file was touched: %v", err)
	}
}

func TestDesktopHidden(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]bool{
		string(HiddenDesktopEntry(agent)):                 true,
		string(DesktopEntry(agent)):                       false,
		"[Desktop Entry]\nHidden = true\n":                true,
		"[Desktop Entry]\nHidden=false\n":                 false,
		"[Desktop Action x]\nHidden=true\n":               false,
		"[Desktop Entry]\nName=x\n[Other]\nHidden=true\n": false,
	} {
		if got := desktopHidden([]byte(in)); got != want {
			t.Errorf("desktopHidden(%q) = %v", in, got)
		}
	}
}
