package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/service"
)

// TestWriteUnit: "go run ./packaging unit DIR" writes the .deb's unit from
// service.SystemdUnit: DGI's time zone, the cfe-agent user on the state
// directory /var/lib/cfe-agent with the numbering witness's folder
// /var/lib/cfe-agent-witness beside it, and a unit systemd accepts.
func TestWriteUnit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := writeUnit(dir); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, "cfe-agent.service")
	got, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if want, _ := service.SystemdUnit(packagedService); !bytes.Equal(got, want) {
		t.Fatalf("the unit is not service.SystemdUnit's:\n%s", got)
	}
	unit := readUnit(t, p)
	for key, want := range map[string]string{"User": "cfe-agent", "StateDirectory": "cfe-agent cfe-agent-witness",
		"Environment": "TZ=America/Montevideo", "ProtectSystem": "strict",
		"ExecStart": "/usr/bin/cfe-agent --data-dir /var/lib/cfe-agent serve", "WantedBy": "multi-user.target"} {
		if unit[key] != want {
			t.Errorf("%s=%q, want %q", key, unit[key], want)
		}
	}
	analyze := testtool.Require(t, "systemd-analyze")
	out, _ := exec.Command(analyze, "verify", "--man=no", p).CombinedOutput()
	for line := range strings.Lines(string(out)) {
		// /usr/bin/cfe-agent is not installed on this machine.
		if !strings.Contains(line, "Command /usr/bin/cfe-agent is not executable") && strings.TrimSpace(line) != "" {
			t.Errorf("systemd-analyze verify: %s", line)
		}
	}
}
