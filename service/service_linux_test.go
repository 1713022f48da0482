package service

import (
	"errors"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// fakeSystemd replaces the unit directory, the caller's uid and systemctl;
// it records the systemctl calls.
type fakeSystemd struct {
	calls []string
	show  string // what "systemctl show" prints
}

func useFakeSystemd(t *testing.T, euid int) *fakeSystemd {
	f := &fakeSystemd{}
	oldDir, oldUID, oldCtl := unitDir, geteuid, systemctl
	unitDir = t.TempDir()
	geteuid = func() int { return euid }
	systemctl = func(args ...string) ([]byte, error) {
		f.calls = append(f.calls, strings.Join(args, " "))
		if args[0] == "show" {
			return []byte(f.show), nil
		}
		return nil, nil
	}
	t.Cleanup(func() { unitDir, geteuid, systemctl = oldDir, oldUID, oldCtl })
	return f
}

func testConfig(t *testing.T) Config {
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return Config{Name: "cfe-agent-test", DisplayName: "Agente CFE", Description: "prueba", Exe: exe,
		DataDir: filepath.Join(t.TempDir(), "datos"), User: me.Username}
}

// TestInstall_refusals: each refusal comes before anything is written or
// systemctl is run.
func TestInstall_refusals(t *testing.T) {
	cases := []struct {
		name    string
		euid    int
		change  func(c *Config)
		wantErr error
	}{
		{"not root", 1000, func(*Config) {}, ErrNotAdmin},
		{"unknown user", 0, func(c *Config) { c.User = "no-such-user-cfe" }, nil},
		{"missing executable", 0, func(c *Config) { c.Exe = "/no/such/cfe-agent" }, nil},
		{"relative data dir", 0, func(c *Config) { c.DataDir = "datos" }, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := useFakeSystemd(t, c.euid)
			cfg := testConfig(t)
			c.change(&cfg)
			err := Install(cfg)
			if err == nil || (c.wantErr != nil && !errors.Is(err, c.wantErr)) {
				t.Fatalf("Install = %v, want a refusal (%v)", err, c.wantErr)
			}
			if entries, _ := os.ReadDir(unitDir); len(entries) != 0 || len(f.calls) != 0 {
				t.Errorf("a refused install left %d files and ran systemctl %q", len(entries), f.calls)
			}
			if _, err := os.Stat(cfg.DataDir); err == nil && filepath.IsAbs(cfg.DataDir) {
				t.Errorf("a refused install created the data directory")
			}
		})
	}
	for _, op := range []func(string) error{Uninstall, Start, Stop} {
		f := useFakeSystemd(t, 1000)
		if err := op("cfe-agent"); !errors.Is(err, ErrNotAdmin) || len(f.calls) != 0 {
			t.Errorf("not root: %v, systemctl %q", err, f.calls)
		}
		f = useFakeSystemd(t, 0)
		if err := op("cfe-agent"); !errors.Is(err, ErrNotInstalled) || len(f.calls) != 0 {
			t.Errorf("not installed: %v, systemctl %q", err, f.calls)
		}
	}
}

// TestInstall_lifecycle: install writes the unit and the data directory and
// enables the service; status reads systemctl; uninstall removes the unit
// and keeps the data.
func TestInstall_lifecycle(t *testing.T) {
	f := useFakeSystemd(t, 0)
	cfg := testConfig(t)
	if err := Install(cfg); err != nil {
		t.Fatal(err)
	}
	want, _ := SystemdUnit(cfg)
	if got, err := os.ReadFile(UnitPath(cfg.Name)); err != nil || string(got) != string(want) {
		t.Fatalf("unit file: %v\n%s", err, got)
	}
	if fi, err := os.Stat(cfg.DataDir); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("data directory: %v %v", fi, err)
	}
	if strings.Join(f.calls, "|") != "daemon-reload|enable --now cfe-agent-test.service" {
		t.Errorf("systemctl calls %q", f.calls)
	}

	f.show = "ActiveState=active\nSubState=running\nUnitFileState=enabled\n"
	st, err := Query(cfg.Name)
	if err != nil || st != (State{Installed: true, Running: true, Enabled: true, Detail: "active (running)"}) {
		t.Errorf("Query = %+v, %v", st, err)
	}
	if err := Stop(cfg.Name); err != nil {
		t.Fatal(err)
	}
	if err := Uninstall(cfg.Name); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(UnitPath(cfg.Name)); !os.IsNotExist(err) {
		t.Errorf("the unit is still there: %v", err)
	}
	if _, err := os.Stat(cfg.DataDir); err != nil {
		t.Errorf("uninstall removed the data directory: %v", err)
	}
	if got := strings.Join(f.calls[2:], "|"); got != "show --property=ActiveState,SubState,UnitFileState cfe-agent-test.service|stop cfe-agent-test.service|disable --now cfe-agent-test.service|daemon-reload" {
		t.Errorf("systemctl calls %q", got)
	}
	if st, err := Query(cfg.Name); err != nil || st.Installed {
		t.Errorf("Query after uninstall = %+v, %v", st, err)
	}
}

// TestSystemdUnit_verify: systemd itself accepts the unit.
func TestSystemdUnit_verify(t *testing.T) {
	analyze := testtool.Require(t, "systemd-analyze")
	cfg := testConfig(t)
	cfg.DataDir = filepath.Join(t.TempDir(), "datos con espacio")
	b, err := SystemdUnit(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "cfe-agent-test.service")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", "--man=no", p).CombinedOutput()
	if err != nil || strings.Contains(string(out), p) {
		t.Fatalf("systemd-analyze verify: %v\n%s\n%s", err, out, b)
	}
}
