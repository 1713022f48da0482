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
// on PATH: postinst makes the unit's system user only when it is missing,
// and prerm stops the service only when the package goes away.
func TestDeb_maintainerScripts(t *testing.T) {
	testtool.Require(t, "dpkg-deb")
	sh := testtool.Require(t, "sh")
	dir := distDir(t)
	deb := one(t, dir, "*.deb")
	control := t.TempDir()
	run(t, "dpkg-deb", "-e", deb, control)
	user := readUnit(t, filepath.Join("linux", "cfe-agent.service"))["User"]
	_, statErr := os.Stat("/run/systemd/system")
	systemd := statErr == nil

	tests := []struct {
		name       string
		script     string
		arg        string
		userExists bool
		want       []string // the commands run, in order
	}{
		{"postinst configure, no user yet", "postinst", "configure", false, []string{
			"getent passwd " + user,
			"adduser --system --group --home /var/lib/cfe-agent --no-create-home --gecos Agente CFE " + user,
			"getent group lp", "adduser " + user + " lp"}},
		{"postinst configure, the user exists", "postinst", "configure", true, []string{
			"getent passwd " + user, "getent group lp", "adduser " + user + " lp"}},
		{"postinst abort-upgrade", "postinst", "abort-upgrade", false, nil},
		{"prerm remove", "prerm", "remove", false, nil},
		{"prerm upgrade", "prerm", "upgrade", false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bin := t.TempDir()
			log := filepath.Join(bin, "log")
			// Each recorder appends its command line; getent finds the user
			// only when it exists, and always the lp group.
			recorder := "#!" + sh + "\necho \"${0##*/} $*\" >> " + log + "\n"
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
			cmd := exec.Command(sh, filepath.Join(control, tt.script), tt.arg)
			cmd.Env = []string{"PATH=" + bin}
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s %s: %v\n%s", tt.script, tt.arg, err, out)
			}
			want := tt.want
			if systemd {
				switch {
				case tt.script == "postinst" && tt.arg == "configure":
					want = append(want, "systemctl --system daemon-reload")
				case tt.script == "prerm" && tt.arg == "remove":
					want = append(want, "deb-systemd-invoke stop cfe-agent.service")
				}
			}
			b, err := os.ReadFile(log)
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			got := strings.Split(strings.TrimSpace(string(b)), "\n")
			if len(b) == 0 {
				got = nil
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("%s %s ran\n%s\nwant\n%s", tt.script, tt.arg, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}
