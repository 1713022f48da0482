package app

import (
	"strings"
	"testing"
)

// TestUnitOfCgroup: the systemd service that runs a process, read from its
// /proc/PID/cgroup as systemd writes it (cgroup v2, and the v1 hierarchy
// named systemd), the user's manager told from the system's; a process of
// the desktop session or a terminal runs in no service.
func TestUnitOfCgroup(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, content string
		unit          string
		user          bool
	}{
		{"system service (v2)", "0::/system.slice/cfe-agent.service\n", "cfe-agent.service", false},
		{"user service (v2)", "0::/user.slice/user-1000.slice/user@1000.service/app.slice/cfe-agent.service\n", "cfe-agent.service", true},
		{"system service (v1)", "12:pids:/system.slice/cfe-agent.service\n1:name=systemd:/system.slice/caja.service\n", "caja.service", false},
		{"desktop autostart scope", "0::/user.slice/user-1000.slice/user@1000.service/app.slice/app-gnome-cfe\\x2dagent-4242.scope\n", "", false},
		{"a terminal's session", "0::/user.slice/user-1000.slice/session-3.scope\n", "", false},
		{"no systemd", "0::/\n", "", false},
	}
	for _, tt := range tests {
		unit, user := unitOfCgroup(tt.content)
		if unit != tt.unit || user != tt.user {
			t.Errorf("%s: unit %q user %v, want %q %v", tt.name, unit, user, tt.unit, tt.user)
		}
	}
}

// TestStopHint: the exact step for each way the agent runs.
func TestStopHint(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		run  agentRun
		want string
	}{
		{"user unit", agentRun{unit: "cfe-agent.service", userUnit: true, known: true}, "«systemctl --user stop cfe-agent.service»"},
		{"system unit", agentRun{unit: "cfe-agent.service", known: true}, "«sudo systemctl stop cfe-agent.service»"},
		{"Windows service", agentRun{windowsService: true, known: true}, "«cfe-agent service stop»"},
		{"serve in a console", agentRun{headless: true, known: true}, "Ctrl+C en la consola donde se ejecuta, o con «kill 4242»"},
		{"tray", agentRun{known: true}, "ícono de la bandeja: menú → «Salir»"},
		{"unknown", agentRun{}, "«Salir»"},
	}
	for _, tt := range tests {
		if got := stopHint(4242, tt.run); !strings.Contains(got, tt.want) {
			t.Errorf("%s: %q, want it to say %q", tt.name, got, tt.want)
		}
	}
	if !headlessArgs([]string{"/usr/bin/cfe-agent", "--data-dir", "/x", "serve"}) || headlessArgs([]string{"/usr/bin/cfe-agent"}) ||
		!headlessArgs([]string{"cfe-agent", "--headless"}) {
		t.Error("headlessArgs misreads a command line")
	}
}
