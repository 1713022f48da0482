package service

import (
	"strings"
	"testing"
)

var shop = Config{
	Name: "cfe-agent", DisplayName: "Agente CFE", Description: "comprobantes fiscales electrónicos al 100%",
	Exe: "/opt/cfe agent/cfe-agent", DataDir: "/home/caja/datos $CFE", User: "caja",
}

func TestSystemdUnit(t *testing.T) {
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
		"[Service]", "User=caja",
		`ExecStart="/opt/cfe agent/cfe-agent" --data-dir "/home/caja/datos $$CFE" serve`,
		"Restart=on-failure", "NoNewPrivileges=yes", "ProtectSystem=strict",
		`ReadWritePaths="/home/caja/datos $$CFE"`, "PrivateTmp=yes",
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

func TestSystemdUnit_refuses(t *testing.T) {
	cases := map[string]func(c *Config){
		"relative exe":      func(c *Config) { c.Exe = "cfe-agent" },
		"relative data dir": func(c *Config) { c.DataDir = "datos" },
		"no user":           func(c *Config) { c.User = "" },
		"bad name":          func(c *Config) { c.Name = "../x" },
		"line break":        func(c *Config) { c.Description = "a\n[Service]\nExecStartPre=/bin/evil" },
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
