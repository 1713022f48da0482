package main

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// TestDeb_maintainerScripts runs the .deb's postinst, prerm and postrm
// with getent, adduser, mkdir, chown, systemctl, deb-systemd-invoke and
// deb-systemd-helper replaced by recorders on PATH, a running systemd
// simulated (CFE_AGENT_RUN_SYSTEMD names an existing directory, or none) and
// the service's data directory in a temporary folder (CFE_AGENT_STATE_DIR):
// postinst makes the unit's system user, its data directory and the numbering
// witness's folder beside it (cfe-agent, 0700) only when missing (the
// witness's folder also on an upgrade from a version without it) and, on an upgrade with systemd running, restarts a
// running service on the new program; prerm stops the service only when the
// package goes away; postrm reloads systemd on remove and drops
// deb-systemd-helper's record on purge, and neither touches the data
// directory. systemd's tools failing fail no script; a user or data directory
// that cannot be made fails postinst. postinst then starts the tray agent in
// the installing desktop user's session (SUDO_USER, or PKEXEC_UID's user,
// with a session bus under CFE_AGENT_RUN_USER) with systemd-run --user
// --machine=USER@, says so, and says it when that fails without failing;
// without such a user (root, no session) it starts nothing.
func TestDeb_maintainerScripts(t *testing.T) {
	t.Parallel()
	testtool.Require(t, "dpkg-deb")
	sh := testtool.Require(t, "sh")
	dir := distDir(t)
	deb := one(t, dir, "*.deb")
	control := t.TempDir()
	run(t, "dpkg-deb", "-e", deb, control)
	user := packagedService.User
	addUser := "adduser --system --group --home /var/lib/cfe-agent --no-create-home --gecos Agente CFE " + user
	newUser := []string{"getent passwd " + user, addUser, "getent group lp", "adduser " + user + " lp"}
	oldUser := []string{"getent passwd " + user, "getent group lp", "adduser " + user + " lp"}
	// $STATE stands for the data directory's path.
	newWitness := []string{"mkdir -m 0700 $STATE-witness", "chown " + user + ": $STATE-witness"}
	newState := append([]string{"mkdir -m 0700 $STATE", "chown " + user + ": $STATE"}, newWitness...)
	with := func(a []string, b ...string) []string { return append(append([]string{}, a...), b...) }
	systemdTools := []string{"systemctl", "deb-systemd-invoke", "deb-systemd-helper"}

	tests := []struct {
		name       string
		script     string
		args       []string
		userExists bool
		stateDir   bool     // the data directory exists, and the witness's folder beside it
		noWitness  bool     // with stateDir: the witness's folder does not exist (a version before witnesses)
		systemd    bool     // systemd runs
		noHelper   bool     // deb-systemd-helper is not installed
		failing    []string // the recorders that exit 1
		wantFail   bool     // the script must exit non-zero
		want       []string // the commands run, in order
		env        []string // more of the script's environment (SUDO_USER, PKEXEC_UID)
		userBus    bool     // the installing user's session runs: /run/user/1000/bus is a socket
		wantOut    string   // what the script must print
	}{
		{name: "postinst configure, no user yet", script: "postinst", args: []string{"configure"},
			want: with(newUser, newState...)},
		{name: "postinst configure, systemd", script: "postinst", args: []string{"configure"}, systemd: true,
			want: with(newUser, append(newState, "systemctl --system daemon-reload")...)},
		{name: "postinst configure, the user exists", script: "postinst", args: []string{"configure"}, userExists: true,
			want: with(oldUser, newState...)},
		{name: "postinst configure, the user and data directory exist", script: "postinst", args: []string{"configure"},
			userExists: true, stateDir: true, want: oldUser},
		{name: "postinst configure 0.0.1 (upgrade), systemd", script: "postinst", args: []string{"configure", "0.0.1"},
			userExists: true, stateDir: true, systemd: true,
			want: with(oldUser, "systemctl --system daemon-reload", "deb-systemd-invoke try-restart cfe-agent.service")},
		{name: "postinst configure 0.0.1 (upgrade from a version without a witness), systemd", script: "postinst",
			args: []string{"configure", "0.0.1"}, userExists: true, stateDir: true, noWitness: true, systemd: true,
			want: with(oldUser, append(newWitness, "systemctl --system daemon-reload", "deb-systemd-invoke try-restart cfe-agent.service")...)},
		{name: "postinst configure 0.0.1 (upgrade), systemd tools fail", script: "postinst", args: []string{"configure", "0.0.1"},
			userExists: true, stateDir: true, systemd: true, failing: systemdTools,
			want: with(oldUser, "systemctl --system daemon-reload", "deb-systemd-invoke try-restart cfe-agent.service")},
		{name: "postinst configure 0.0.1 (upgrade), no systemd", script: "postinst", args: []string{"configure", "0.0.1"},
			userExists: true, stateDir: true, want: oldUser},
		{name: "postinst configure, adding to lp fails", script: "postinst", args: []string{"configure"},
			userExists: true, stateDir: true, failing: []string{"adduser"}, want: oldUser},
		{name: "postinst configure, the user cannot be made", script: "postinst", args: []string{"configure"},
			systemd: true, failing: []string{"adduser"}, wantFail: true, want: []string{"getent passwd " + user, addUser}},
		{name: "postinst configure, the data directory cannot be made", script: "postinst", args: []string{"configure"},
			userExists: true, systemd: true, failing: []string{"mkdir"}, wantFail: true, want: with(oldUser, newState[0])},
		// The tray agent starts for the desktop user who installs, in that
		// user's session (its systemd user manager).
		{name: "postinst configure by sudo from a desktop session, systemd", script: "postinst", args: []string{"configure"},
			systemd: true, env: []string{"SUDO_USER=ana"}, userBus: true,
			want:    with(with(newUser, newState...), "systemctl --system daemon-reload", "id -u ana", startTray("ana")),
			wantOut: "cfe-agent: el agente se inició en la sesión de ana (ícono en la bandeja)."},
		{name: "postinst configure through pkexec from a desktop session, systemd", script: "postinst", args: []string{"configure"},
			systemd: true, env: []string{"PKEXEC_UID=1000"}, userBus: true,
			want: with(with(newUser, newState...), "systemctl --system daemon-reload", "getent passwd 1000", "id -u ana", startTray("ana"))},
		{name: "postinst configure 0.0.1 (upgrade) by sudo, the agent cannot start", script: "postinst", args: []string{"configure", "0.0.1"},
			userExists: true, stateDir: true, systemd: true, env: []string{"SUDO_USER=ana"}, userBus: true, failing: []string{"systemd-run"},
			want:    with(oldUser, "systemctl --system daemon-reload", "deb-systemd-invoke try-restart cfe-agent.service", "id -u ana", startTray("ana")),
			wantOut: "cfe-agent: no se pudo iniciar el agente en la sesión de ana"},
		{name: "postinst configure by sudo without a desktop session", script: "postinst", args: []string{"configure"},
			systemd: true, env: []string{"SUDO_USER=ana"},
			want: with(with(newUser, newState...), "systemctl --system daemon-reload", "id -u ana")},
		{name: "postinst configure by root at a console", script: "postinst", args: []string{"configure"},
			systemd: true, env: []string{"SUDO_USER=root"}, userBus: true,
			want: with(with(newUser, newState...), "systemctl --system daemon-reload")},
		{name: "postinst abort-upgrade", script: "postinst", args: []string{"abort-upgrade", "0.0.1"}, systemd: true},
		{name: "prerm remove, systemd", script: "prerm", args: []string{"remove"}, systemd: true,
			want: []string{"deb-systemd-invoke stop cfe-agent.service"}},
		{name: "prerm remove, systemd tools fail", script: "prerm", args: []string{"remove"}, systemd: true,
			failing: systemdTools, want: []string{"deb-systemd-invoke stop cfe-agent.service"}},
		{name: "prerm remove, no systemd", script: "prerm", args: []string{"remove"}},
		{name: "prerm upgrade, systemd", script: "prerm", args: []string{"upgrade", "0.0.2"}, systemd: true},
		{name: "postrm remove, systemd", script: "postrm", args: []string{"remove"}, stateDir: true, systemd: true,
			want: []string{"systemctl --system daemon-reload"}},
		{name: "postrm remove, systemd tools fail", script: "postrm", args: []string{"remove"}, stateDir: true,
			systemd: true, failing: systemdTools, want: []string{"systemctl --system daemon-reload"}},
		{name: "postrm remove, no systemd", script: "postrm", args: []string{"remove"}, stateDir: true},
		{name: "postrm purge", script: "postrm", args: []string{"purge"}, stateDir: true, systemd: true,
			want: []string{"deb-systemd-helper purge cfe-agent.service"}},
		{name: "postrm purge, systemd tools fail", script: "postrm", args: []string{"purge"}, stateDir: true,
			systemd: true, failing: systemdTools, want: []string{"deb-systemd-helper purge cfe-agent.service"}},
		{name: "postrm purge, no deb-systemd-helper", script: "postrm", args: []string{"purge"}, stateDir: true,
			systemd: true, noHelper: true},
		{name: "postrm upgrade", script: "postrm", args: []string{"upgrade", "0.0.2"}, stateDir: true, systemd: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			bin := t.TempDir()
			log := filepath.Join(bin, "log")
			// Each recorder appends its command line, then exits 1 when it is
			// one of tt.failing; getent finds the user only when it exists,
			// and always the lp group.
			recorders := map[string]string{}
			for _, name := range []string{"getent", "adduser", "mkdir", "chown", "systemctl", "deb-systemd-invoke", "deb-systemd-helper",
				"id", "systemd-run"} {
				body := "#!" + sh + "\necho \"${0##*/} $*\" >> '" + log + "'\n"
				if slices.Contains(tt.failing, name) {
					body += "exit 1\n"
				}
				recorders[name] = body
			}
			recorders["getent"] += "[ \"$1\" = group ] && exit 0\n"
			recorders["getent"] += "[ \"$2\" = 1000 ] && echo 'ana:x:1000:1000:Ana:/home/ana:/bin/bash' && exit 0\n"
			recorders["id"] += "echo 1000\n"
			if tt.userExists {
				recorders["getent"] += "exit 0\n"
			} else {
				recorders["getent"] += "exit 2\n"
			}
			if tt.noHelper {
				delete(recorders, "deb-systemd-helper")
			}
			for name, body := range recorders {
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
			// The data directory, with a receipt in it when it exists.
			stateDir := filepath.Join(t.TempDir(), "var-lib-cfe-agent")
			receipt := filepath.Join(stateDir, "store", "cfe.db")
			if tt.stateDir {
				if err := os.MkdirAll(filepath.Dir(receipt), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(receipt, []byte("comprobantes"), 0o600); err != nil {
					t.Fatal(err)
				}
				if !tt.noWitness {
					if err := os.Mkdir(stateDir+"-witness", 0o700); err != nil {
						t.Fatal(err)
					}
				}
			}
			// The users' runtime directories, with ana's session bus (uid
			// 1000) when her session runs.
			runUser := filepath.Join(t.TempDir(), "run-user")
			if tt.userBus {
				if err := os.MkdirAll(filepath.Join(runUser, "1000"), 0o700); err != nil {
					t.Fatal(err)
				}
				l, err := net.Listen("unix", filepath.Join(runUser, "1000", "bus"))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { l.Close() })
			}
			cmd := exec.Command(sh, append([]string{filepath.Join(control, tt.script)}, tt.args...)...)
			cmd.Env = append([]string{"PATH=" + bin, "CFE_AGENT_RUN_SYSTEMD=" + runSystemd, "CFE_AGENT_STATE_DIR=" + stateDir,
				"CFE_AGENT_RUN_USER=" + runUser}, tt.env...)
			out, err := cmd.CombinedOutput()
			if !strings.Contains(string(out), tt.wantOut) {
				t.Errorf("%s %s printed %q, want %q", tt.script, tt.args, out, tt.wantOut)
			}
			switch {
			case tt.wantFail && err == nil:
				t.Errorf("%s %s exited 0, want a failure\n%s", tt.script, tt.args, out)
			case !tt.wantFail && err != nil:
				t.Errorf("%s %s: %v, want exit 0\n%s", tt.script, tt.args, err, out)
			}
			b, err := os.ReadFile(log)
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			got := strings.Split(strings.TrimSpace(string(b)), "\n")
			if len(b) == 0 {
				got = nil
			}
			want := strings.ReplaceAll(strings.Join(tt.want, "\n"), "$STATE", stateDir)
			if strings.Join(got, "\n") != want {
				t.Errorf("%s %s ran\n%s\nwant\n%s", tt.script, tt.args, strings.Join(got, "\n"), want)
			}
			if tt.stateDir {
				if b, err := os.ReadFile(receipt); err != nil || string(b) != "comprobantes" {
					t.Errorf("%s %s: the data directory's receipt is %q, %v; want it untouched", tt.script, tt.args, b, err)
				}
			}
		})
	}
}

// startTray is the command postinst starts the tray agent with in user's
// session.
func startTray(user string) string {
	return "systemd-run --user --machine=" + user + "@ --no-block --collect --quiet --unit=cfe-agent-tray /usr/bin/cfe-agent --autostart"
}
