package service

import (
	"strings"
	"testing"
)

var shop = Config{
	Name: "cfe-agent", DisplayName: "Agente CFE", Description: "comprobantes fiscales electrónicos al 100%",
	Exe: "/opt/cfe agent/cfe-agent", DataDir: "/home/caja/datos $CFE", User: "caja",
	WitnessDir: "/home/caja/.local/state/cfe-agent/witness",
}

func TestSystemdUnit(t *testing.T) {
	t.Parallel()
	b, err := SystemdUnit(shop)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	// Worked out from systemd.service(5) and systemd.syntax(7): quoted words
	// with blanks, % and $ doubled.
	for _, line := range []string{
		"[Unit]", "Description=Agente CFE — comprobantes fiscales electrónicos al 100%%",
		"Wants=network-online.target", "After=network-online.target cups.service",
		"StartLimitIntervalSec=120", "StartLimitBurst=5", "Type=notify", "NotifyAccess=main",
		"[Service]", "User=caja", "Environment=TZ=America/Montevideo",
		`ExecStart="/opt/cfe agent/cfe-agent" --data-dir "/home/caja/datos $$CFE" serve`,
		"Restart=on-failure", "NoNewPrivileges=yes", "ProtectSystem=strict",
		`ReadWritePaths="/home/caja/datos $$CFE"`, "ReadWritePaths=-/home/caja/.local/state/cfe-agent/witness", "PrivateTmp=yes",
		"[Install]", "WantedBy=multi-user.target",
	} {
		if !strings.Contains(got, "\n"+line+"\n") {
			t.Errorf("the unit lacks the line %q:\n%s", line, got)
		}
	}
	for _, banned := range []string{"PrivateDevices", "ProtectHome", "DynamicUser"} {
		if strings.Contains(got, banned) {
			t.Errorf("the unit has %s, which breaks printers or the data directory", banned)
		}
	}
}

// TestSystemdUnit_stateDirectory: the .deb's unit (StateDirectory) lets
// systemd create /var/lib/cfe-agent instead of naming it ReadWritePaths.
func TestSystemdUnit_stateDirectory(t *testing.T) {
	t.Parallel()
	c := Config{Name: "cfe-agent", DisplayName: "Agente CFE", Description: "prueba", Exe: "/usr/bin/cfe-agent",
		DataDir: "/var/lib/cfe-agent", User: "cfe-agent", StateDirectory: "cfe-agent", WitnessDir: "/var/lib/cfe-agent-witness"}
	b, err := SystemdUnit(c)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	for _, line := range []string{"ExecStart=/usr/bin/cfe-agent --data-dir /var/lib/cfe-agent serve",
		"StateDirectory=cfe-agent cfe-agent-witness", "StateDirectoryMode=0700", "ProtectSystem=strict",
		"Environment=TZ=America/Montevideo", "#   sudo systemctl enable --now cfe-agent"} {
		if !strings.Contains(got, "\n"+line+"\n") {
			t.Errorf("the unit lacks the line %q:\n%s", line, got)
		}
	}
	for _, banned := range []string{"ReadWritePaths", "service install"} {
		if strings.Contains(got, banned) {
			t.Errorf("the packaged unit has %q:\n%s", banned, got)
		}
	}
	// The witness's folder is a state directory of its own, beside the
	// data directory, never the data directory itself.
	for _, w := range []string{"/srv/testigo", "/var/lib/cfe-agent", "/var/lib/cfe-agent/witness"} {
		c := c
		c.WitnessDir = w
		if b, err := SystemdUnit(c); err == nil {
			t.Errorf("the witness folder %s was accepted:\n%s", w, b)
		}
	}
	c.DataDir = "/srv/cfe"
	if b, err := SystemdUnit(c); err == nil {
		t.Errorf("a state directory that is not the data directory was accepted:\n%s", b)
	}
}

func TestSystemdUnit_refuses(t *testing.T) {
	t.Parallel()
	cases := map[string]func(c *Config){
		"relative exe":       func(c *Config) { c.Exe = "cfe-agent" },
		"relative data dir":  func(c *Config) { c.DataDir = "datos" },
		"no user":            func(c *Config) { c.User = "" },
		"bad name":           func(c *Config) { c.Name = "../x" },
		"line break":         func(c *Config) { c.Description = "a\n[Service]\nExecStartPre=/bin/evil" },
		"relative witness":   func(c *Config) { c.WitnessDir = "testigo" },
		"witness line break": func(c *Config) { c.WitnessDir = "/w\nExecStartPre=/bin/evil" },
	}
	for name, change := range cases {
		t.Run(name, func(t *testing.T) {
			c := shop
			change(&c)
			if b, err := SystemdUnit(c); err == nil {
				t.Errorf("accepted:\n%s", b)
			}
		})
	}
}

func TestSystemdQuote(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"/usr/bin/cfe-agent": "/usr/bin/cfe-agent",
		`/a b/c`:             `"/a b/c"`,
		`a"b\c`:              `"a\"b\\c"`,
		"100%":               "100%%",
		"":                   `""`,
	} {
		if got := systemdQuote(in); got != want {
			t.Errorf("systemdQuote(%q) = %s, want %s", in, got, want)
		}
	}
}
