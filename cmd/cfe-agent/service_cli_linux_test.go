package main_test

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// TestCLI_ServiceUnit: "service unit" prints the unit for the given
// executable, user and data directory (and the user's numbering witness
// folder), without installing anything.
func TestCLI_ServiceUnit(t *testing.T) {
	dataDir := filepath.Join(t.TempDir(), "datos caja")
	env := agentEnv("CFE_AGENT_DATA_DIR="+dataDir, "SUDO_USER=")
	out, code := runCLI(t, env, "service", "unit", "--usuario", "root", "--ejecutable", "/usr/bin/cfe-agent")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	for _, line := range []string{
		"User=root", `ExecStart=/usr/bin/cfe-agent --data-dir "` + dataDir + `" serve`,
		`ReadWritePaths="` + dataDir + `"`, "Restart=on-failure", "WantedBy=multi-user.target",
		// The numbering witness, where the service (User=root, HOME=/root)
		// keeps it.
		"ReadWritePaths=-/root/.local/state/cfe-agent/witness",
	} {
		if !strings.Contains(out, "\n"+line+"\n") {
			t.Errorf("the unit lacks %q:\n%s", line, out)
		}
	}
	if _, err := os.Stat(dataDir); !os.IsNotExist(err) {
		t.Errorf("printing the unit created the data directory: %v", err)
	}
	if out, code := runCLI(t, env, "service", "unit", "--usuario", "no-such-user-cfe"); code != 1 || !strings.Contains(out, `el usuario "no-such-user-cfe" no existe`) {
		t.Errorf("unknown user: exit %d\n%s", code, out)
	}
}

// TestCLI_ServiceRefusals: installing and controlling the service needs
// root, and root must name the user; each refusal is Spanish and writes
// nothing.
func TestCLI_ServiceRefusals(t *testing.T) {
	const unit = "/etc/systemd/system/cfe-agent.service"
	before, beforeErr := os.ReadFile(unit)
	defer func() {
		after, afterErr := os.ReadFile(unit)
		if string(after) != string(before) || (beforeErr == nil) != (afterErr == nil) {
			t.Errorf("%s changed", unit)
		}
	}()
	dataDir := filepath.Join(t.TempDir(), "datos")
	env := agentEnv("CFE_AGENT_DATA_DIR="+dataDir, "SUDO_USER=")

	if os.Geteuid() == 0 {
		out, code := runCLI(t, env, "service", "install")
		if code != 1 || !strings.Contains(out, "el servicio no se ejecuta como root sin pedirlo: indique el usuario con --usuario") {
			t.Errorf("install as root without a user: exit %d\n%s", code, out)
		}
		if beforeErr != nil {
			out, code = runCLI(t, env, "service", "start")
			if code != 1 || !strings.Contains(out, "el servicio cfe-agent no está instalado") {
				t.Errorf("start when not installed: exit %d\n%s", code, out)
			}
		}
	}

	// As an unprivileged user (nobody, through setpriv when this runs as root).
	bin, runAs := agentBin, []string(nil)
	if os.Geteuid() == 0 {
		setpriv := testtool.Require(t, "setpriv")
		runAs = []string{setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"}
		bin = copyForNobody(t)
		if err := os.MkdirAll(dataDir, 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dataDir, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"install", "--usuario", "root"}, {"uninstall"}, {"start"}, {"stop"}} {
		argv := append(append(append([]string{}, runAs...), bin, "service"), args...)
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = env
		out, _ := cmd.CombinedOutput()
		if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 1 || !strings.Contains(string(out), "se necesitan permisos de administrador: ejecútelo con sudo") {
			t.Errorf("service %s as a user: %v\n%s", strings.Join(args, " "), cmd.ProcessState, out)
		}
	}
	if entries, _ := os.ReadDir(dataDir); len(entries) != 0 {
		t.Errorf("a refused command wrote into the data directory: %d entries", len(entries))
	}
}

// copyForNobody copies the agent into a directory any user can enter.
func copyForNobody(t *testing.T) string {
	dir, err := os.MkdirTemp("", "cfe-agent-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(agentBin)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	p := filepath.Join(dir, "cfe-agent")
	dst, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}
