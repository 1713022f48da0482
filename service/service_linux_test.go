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

// fakeSystemd is a systemd with its own unit directories, caller's uid and
// systemctl; it records the systemctl calls. Its "systemctl show" loads the
// unit from the fake /etc/systemd/system, else from the fake
// /usr/lib/systemd/system (the .deb's), as systemd does, unless show says
// otherwise; down makes every systemctl call fail (no systemd running).
type fakeSystemd struct {
	systemd
	calls  []string
	show   string // what "systemctl show" prints, when set
	active string // ActiveState of a found unit
	down   bool
	vendor string // the fake /usr/lib/systemd/system
}

func newFakeSystemd(t *testing.T, euid int) *fakeSystemd {
	f := &fakeSystemd{vendor: t.TempDir(), active: "inactive"}
	f.systemd = systemd{unitDir: t.TempDir(), vendorUnitDirs: []string{f.vendor}, geteuid: func() int { return euid }}
	f.systemctl = func(args ...string) ([]byte, error) {
		f.calls = append(f.calls, strings.Join(args, " "))
		if f.down {
			return nil, errors.New("System has not been booted with systemd as init system (PID 1). Can't operate.")
		}
		if args[0] != "show" {
			return nil, nil
		}
		if f.show != "" {
			return []byte(f.show), nil
		}
		unit := args[len(args)-1]
		for _, dir := range []string{f.unitDir, f.vendor} {
			p := filepath.Join(dir, unit)
			if _, err := os.Stat(p); err == nil {
				return []byte("LoadState=loaded\nFragmentPath=" + p + "\nActiveState=" + f.active +
					"\nSubState=dead\nUnitFileState=disabled\n"), nil
			}
		}
		return []byte("LoadState=not-found\nFragmentPath=\nActiveState=inactive\nSubState=dead\nUnitFileState=\n"), nil
	}
	return f
}

// packagedUnit writes the fake .deb unit, as the package installs it.
func (f *fakeSystemd) packagedUnit(t *testing.T, name string) string {
	p := filepath.Join(f.vendor, name+".service")
	if err := os.WriteFile(p, []byte("[Service]\nExecStart=/usr/bin/cfe-agent --data-dir /var/lib/cfe-agent serve\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// changing lists the systemctl calls that are not "show".
func (f *fakeSystemd) changing() []string {
	var out []string
	for _, c := range f.calls {
		if !strings.HasPrefix(c, "show ") {
			out = append(out, c)
		}
	}
	return out
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
	home := t.TempDir()
	return Config{Name: "cfe-agent-test", DisplayName: "Agente CFE", Description: "prueba", Exe: exe,
		DataDir: filepath.Join(t.TempDir(), "datos"), User: me.Username,
		WitnessDir: filepath.Join(home, ".local", "state", "cfe-agent", "witness")}
}

// TestInstall_refusals: each refusal comes before anything is written or
// systemctl is run.
func TestInstall_refusals(t *testing.T) {
	t.Parallel()
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
			f := newFakeSystemd(t, c.euid)
			cfg := testConfig(t)
			c.change(&cfg)
			err := f.install(cfg)
			if err == nil || (c.wantErr != nil && !errors.Is(err, c.wantErr)) {
				t.Fatalf("Install = %v, want a refusal (%v)", err, c.wantErr)
			}
			if entries, _ := os.ReadDir(f.unitDir); len(entries) != 0 || len(f.calls) != 0 {
				t.Errorf("a refused install left %d files and ran systemctl %q", len(entries), f.calls)
			}
			if _, err := os.Stat(cfg.DataDir); err == nil && filepath.IsAbs(cfg.DataDir) {
				t.Errorf("a refused install created the data directory")
			}
			if _, err := os.Stat(filepath.Dir(filepath.Dir(filepath.Dir(cfg.WitnessDir)))); err == nil {
				t.Errorf("a refused install created the witness's folder")
			}
		})
	}
	for _, op := range []func(systemd, string) error{systemd.uninstall, systemd.start, systemd.stop} {
		f := newFakeSystemd(t, 1000)
		if err := op(f.systemd, "cfe-agent"); !errors.Is(err, ErrNotAdmin) || len(f.calls) != 0 {
			t.Errorf("not root: %v, systemctl %q", err, f.calls)
		}
		f = newFakeSystemd(t, 0)
		if err := op(f.systemd, "cfe-agent"); !errors.Is(err, ErrNotInstalled) || len(f.changing()) != 0 {
			t.Errorf("not installed: %v, systemctl %q", err, f.calls)
		}
		f = newFakeSystemd(t, 0)
		f.down = true
		if err := op(f.systemd, "cfe-agent"); !errors.Is(err, ErrNotInstalled) || len(f.changing()) != 0 {
			t.Errorf("not installed, no systemd: %v, systemctl %q", err, f.calls)
		}
	}
}

// TestInstall_lifecycle: install writes the unit and the data directory and
// enables the service; status reads systemctl; uninstall removes the unit
// and keeps the data.
func TestInstall_lifecycle(t *testing.T) {
	t.Parallel()
	f := newFakeSystemd(t, 0)
	cfg := testConfig(t)
	if err := f.install(cfg); err != nil {
		t.Fatal(err)
	}
	want, _ := SystemdUnit(cfg)
	if got, err := os.ReadFile(f.unitPath(cfg.Name)); err != nil || string(got) != string(want) {
		t.Fatalf("unit file: %v\n%s", err, got)
	}
	if fi, err := os.Stat(cfg.DataDir); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("data directory: %v %v", fi, err)
	}
	// The witness's folder and the folders above it in the home that did
	// not exist (~/.local, ~/.local/state, ...), made for the user.
	for d := cfg.WitnessDir; d != filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(cfg.WitnessDir)))); d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			t.Fatalf("witness folder %s: %v %v", d, fi, err)
		}
	}
	if !strings.Contains(string(want), "\nReadWritePaths=-"+cfg.WitnessDir+"\n") {
		t.Errorf("the unit does not make the witness's folder writable:\n%s", want)
	}
	if strings.Join(f.changing(), "|") != "daemon-reload|enable --now cfe-agent-test.service" {
		t.Errorf("systemctl calls %q", f.calls)
	}

	f.show = "LoadState=loaded\nFragmentPath=" + f.unitPath(cfg.Name) + "\nActiveState=active\nSubState=running\nUnitFileState=enabled\n"
	st, err := f.query(cfg.Name)
	if err != nil || st != (State{Installed: true, Running: true, Enabled: true, Detail: "active (running)", Unit: f.unitPath(cfg.Name)}) {
		t.Errorf("Query = %+v, %v", st, err)
	}
	f.show = ""
	f.calls = nil
	if err := f.stop(cfg.Name); err != nil {
		t.Fatal(err)
	}
	if err := f.uninstall(cfg.Name); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(f.unitPath(cfg.Name)); !os.IsNotExist(err) {
		t.Errorf("the unit is still there: %v", err)
	}
	if _, err := os.Stat(cfg.DataDir); err != nil {
		t.Errorf("uninstall removed the data directory: %v", err)
	}
	if _, err := os.Stat(cfg.WitnessDir); err != nil {
		t.Errorf("uninstall removed the witness's folder: %v", err)
	}
	if got := strings.Join(f.changing(), "|"); got != "stop cfe-agent-test.service|disable --now cfe-agent-test.service|daemon-reload" {
		t.Errorf("systemctl calls %q", got)
	}
	if st, err := f.query(cfg.Name); err != nil || st.Installed {
		t.Errorf("Query after uninstall = %+v, %v", st, err)
	}
}

// TestSystemdUnit_verify: systemd itself accepts the unit.
func TestSystemdUnit_verify(t *testing.T) {
	t.Parallel()
	analyze := testtool.Require(t, "systemd-analyze")
	cfg := testConfig(t)
	cfg.DataDir = filepath.Join(t.TempDir(), "datos con espacio")
	cfg.WitnessDir = filepath.Join(t.TempDir(), "testigo con espacio")
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

// TestQuery_packagedUnit: the .deb's unit (/usr/lib/systemd/system) is the
// service: status sees it, start and stop control it, and install and
// uninstall refuse (a second unit of the same name in /etc would override it
// with another data directory) without writing anything.
func TestQuery_packagedUnit(t *testing.T) {
	t.Parallel()
	t.Run("systemd running", func(t *testing.T) {
		f := newFakeSystemd(t, 0)
		unit := f.packagedUnit(t, "cfe-agent-test")
		f.active = "active"
		st, err := f.query("cfe-agent-test")
		if err != nil || !st.Installed || !st.Packaged || !st.Running || st.Unit != unit {
			t.Fatalf("Query = %+v, %v", st, err)
		}
		if err := f.stop("cfe-agent-test"); err != nil {
			t.Fatal(err)
		}
		if err := f.start("cfe-agent-test"); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(f.changing(), "|"); got != "stop cfe-agent-test.service|start cfe-agent-test.service" {
			t.Errorf("systemctl calls %q", got)
		}

		f.calls = nil
		cfg := testConfig(t)
		if err := f.install(cfg); !errors.Is(err, ErrPackaged) || !strings.Contains(err.Error(), unit) {
			t.Errorf("Install = %v, want ErrPackaged naming %s", err, unit)
		}
		if err := f.uninstall(cfg.Name); !errors.Is(err, ErrPackaged) {
			t.Errorf("Uninstall = %v, want ErrPackaged", err)
		}
		if entries, _ := os.ReadDir(f.unitDir); len(entries) != 0 || len(f.changing()) != 0 {
			t.Errorf("a refused install wrote %d units and ran systemctl %q", len(entries), f.changing())
		}
		if _, err := os.Stat(cfg.DataDir); !os.IsNotExist(err) {
			t.Errorf("a refused install created the data directory: %v", err)
		}
		if _, err := os.Stat(unit); err != nil {
			t.Errorf("the packaged unit is gone: %v", err)
		}
	})
	t.Run("an own unit in /etc is not the package's", func(t *testing.T) {
		f := newFakeSystemd(t, 0)
		f.packagedUnit(t, "cfe-agent-test")
		if err := os.WriteFile(f.unitPath("cfe-agent-test"), []byte("[Service]\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if st, err := f.query("cfe-agent-test"); err != nil || !st.Installed || st.Packaged || st.Unit != f.unitPath("cfe-agent-test") {
			t.Errorf("Query = %+v, %v", st, err)
		}
	})
	t.Run("no systemd running: the unit files say", func(t *testing.T) {
		f := newFakeSystemd(t, 0)
		unit := f.packagedUnit(t, "cfe-agent-test")
		f.down = true
		if st, _ := f.query("cfe-agent-test"); !st.Installed || !st.Packaged || st.Unit != unit {
			t.Errorf("Query = %+v", st)
		}
		if err := f.install(testConfig(t)); !errors.Is(err, ErrPackaged) {
			t.Errorf("Install = %v, want ErrPackaged", err)
		}
	})
}
