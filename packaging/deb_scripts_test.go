package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// TestDeb_maintainerScripts runs the .deb's postinst and prerm with
// getent, adduser, systemctl and deb-systemd-invoke replaced by recorders
// on PATH, and a running systemd simulated (CFE_AGENT_RUN_SYSTEMD names an
// existing directory, or none): postinst makes the unit's system user only
// when it is missing and, on an upgrade with systemd running, restarts a
// running service on the new program; prerm stops the service only when
// the package goes away.
func TestDeb_maintainerScripts(t *testing.T) {
	testtool.Require(t, "dpkg-deb")
	sh := testtool.Require(t, "sh")
	dir := distDir(t)
	deb := one(t, dir, "*.deb")
	control := t.TempDir()
	run(t, "dpkg-deb", "-e", deb, control)
	user := packagedService.User
	newUser := []string{"getent passwd " + user,
		"adduser --system --group --home /var/lib/cfe-agent --no-create-home --gecos Agente CFE " + user,
		"getent group lp", "adduser " + user + " lp"}
	oldUser := []string{"getent passwd " + user, "getent group lp", "adduser " + user + " lp"}
	with := func(a []string, b ...string) []string { return append(append([]string{}, a...), b...) }

	tests := []struct {
		name       string
		script     string
		args       []string
		userExists bool
		systemd    bool
		want       []string // the commands run, in order
	}{
		{"postinst configure, no user yet", "postinst", []string{"configure"}, false, false, newUser},
		{"postinst configure, systemd", "postinst", []string{"configure"}, false, true,
			with(newUser, "systemctl --system daemon-reload")},
		{"postinst configure, the user exists", "postinst", []string{"configure"}, true, false, oldUser},
		{"postinst configure 0.0.1 (upgrade), systemd", "postinst", []string{"configure", "0.0.1"}, true, true,
			with(oldUser, "systemctl --system daemon-reload", "deb-systemd-invoke try-restart cfe-agent.service")},
		{"postinst configure 0.0.1 (upgrade), no systemd", "postinst", []string{"configure", "0.0.1"}, true, false, oldUser},
		{"postinst abort-upgrade", "postinst", []string{"abort-upgrade", "0.0.1"}, false, true, nil},
		{"prerm remove, systemd", "prerm", []string{"remove"}, false, true, []string{"deb-systemd-invoke stop cfe-agent.service"}},
		{"prerm remove, no systemd", "prerm", []string{"remove"}, false, false, nil},
		{"prerm upgrade, systemd", "prerm", []string{"upgrade", "0.0.2"}, false, true, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bin := t.TempDir()
			log := filepath.Join(bin, "log")
			// Each recorder appends its command line; getent finds the user
			// only when it exists, and always the lp group.
			recorder := "#!" + sh + "\necho \"${0##*/} $*\" >> '" + log + "'\n"
			getent := recorder + "[ \"$1\" = group ] && exit 0\n"
			if tt.userExists {
				getent += "exit 0\n"
			} else {
				getent += "exit 2\n"
			}
			for name, body := range map[string]string{"getent": getent, "adduser": recorder, "systemctl": recorder,
				"deb-systemd-invoke": recorder} {
				if err := os.WriteFile(filepath.Join(bin, name), []byte(body), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			runSystemd := filepath.Join(t.TempDir(), "run-systemd-system")
			if tt.systemd {
				if err := os.Mkdir(runSystemd, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			cmd := exec.Command(sh, append([]string{filepath.Join(control, tt.script)}, tt.args...)...)
			cmd.Env = []string{"PATH=" + bin, "CFE_AGENT_RUN_SYSTEMD=" + runSystemd}
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s %s: %v\n%s", tt.script, tt.args, err, out)
			}
			b, err := os.ReadFile(log)
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			got := strings.Split(strings.TrimSpace(string(b)), "\n")
			if len(b) == 0 {
				got = nil
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("%s %s ran\n%s\nwant\n%s", tt.script, tt.args, strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}
