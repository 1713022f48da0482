package profiles

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestWitnessDir: the numbering witness's folder is per user and machine,
// outside the data directory: $CFE_AGENT_WITNESS_DIR, else XDG's state
// folder, else beside a data directory that holds the home (the .deb's
// system user).
func TestWitnessDir(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the Windows default is %LOCALAPPDATA% (checked under Wine)")
	}
	home := t.TempDir()
	data := filepath.Join(t.TempDir(), "datos")
	for _, tt := range []struct {
		name, env, xdg, home, data string
		want                       string
		wantErr                    string
	}{
		{name: "the variable", env: filepath.Join(home, "testigo"), home: home, data: data, want: filepath.Join(home, "testigo")},
		{name: "the variable, relative", env: "testigo", home: home, data: data, want: mustAbs(t, "testigo")},
		{name: "the variable inside the data directory", env: filepath.Join(data, "testigo"), home: home, data: data, wantErr: "inside the data directory"},
		{name: "XDG_STATE_HOME", xdg: filepath.Join(home, "estado"), home: home, data: data, want: filepath.Join(home, "estado", "cfe-agent", "witness")},
		{name: "a relative XDG_STATE_HOME is ignored", xdg: "estado", home: home, data: data, want: filepath.Join(home, ".local", "state", "cfe-agent", "witness")},
		{name: "HOME", home: home, data: data, want: filepath.Join(home, ".local", "state", "cfe-agent", "witness")},
		{name: "the home is the data directory", home: data, data: data, want: data + "-witness"},
		{name: "the data directory holds the home", home: filepath.Join(data, "casa"), data: data, want: data + "-witness"},
		{name: "a data directory inside the home", home: home, data: filepath.Join(home, ".config", "cfe-agent"),
			want: filepath.Join(home, ".local", "state", "cfe-agent", "witness")},
		{name: "no home", data: data, wantErr: "no home folder"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(EnvWitnessDir, tt.env)
			t.Setenv("XDG_STATE_HOME", tt.xdg)
			t.Setenv("HOME", tt.home)
			got, err := WitnessDir(tt.data)
			switch {
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("WitnessDir = %q, %v; want an error with %q", got, err, tt.wantErr)
			case tt.wantErr == "" && (err != nil || got != tt.want):
				t.Fatalf("WitnessDir = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// TestServiceWitnessDir: the folder a Linux service's agent uses, from its
// user's home (systemd sets HOME, no XDG_STATE_HOME).
func TestServiceWitnessDir(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("a Linux service's folder (systemd): the Windows service uses LocalSystem's %LOCALAPPDATA%")
	}
	for _, tt := range []struct{ data, home, want string }{
		{"/home/caja/.config/cfe-agent", "/home/caja", "/home/caja/.local/state/cfe-agent/witness"},
		{"/srv/cfe", "/home/caja", "/home/caja/.local/state/cfe-agent/witness"},
		{"/var/lib/cfe-agent", "/var/lib/cfe-agent", "/var/lib/cfe-agent-witness"},
		{"/home/caja", "/home/caja", "/home/caja-witness"},
	} {
		if got := ServiceWitnessDir(tt.data, tt.home); got != filepath.FromSlash(tt.want) {
			t.Errorf("ServiceWitnessDir(%s, %s) = %s, want %s", tt.data, tt.home, got, tt.want)
		}
	}
}
