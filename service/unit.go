package service

import (
	"bytes"
	"fmt"
	"path"
	"strings"
)

// SystemdUnit returns the systemd system unit that runs the agent as
// c.User: started after the network and CUPS, restarted on failure, and
// sandboxed so that it writes only to its data directory, the numbering
// witness's folder (c.WitnessDir) and a private /tmp. c.Exe and c.DataDir are absolute Linux paths.
//
// What the sandbox keeps working: the local module (any listen address),
// the hosted service and CUPS over the network or its socket, raw printers
// on /dev (no PrivateDevices), and the data directory. A "directory" printer
// whose folder lies outside the data directory needs its own
// ReadWritePaths= line (systemctl edit).
//
// The agent signs only at DGI's time zone: the unit sets
// TZ=America/Montevideo, whatever the machine's zone. With c.StateDirectory
// it is the .deb's unit (scripts/dist.sh writes it with "go run ./packaging
// unit"): systemd creates the data directory /var/lib/<StateDirectory>.
func SystemdUnit(c Config) ([]byte, error) {
	if err := c.check(path.IsAbs); err != nil {
		return nil, err
	}
	if c.User == "" {
		return nil, fmt.Errorf("service: no user for the unit")
	}
	if c.StateDirectory != "" && (!validName(c.StateDirectory) || c.DataDir != "/var/lib/"+c.StateDirectory) {
		return nil, fmt.Errorf("service: the state directory %q is not the data directory %s", c.StateDirectory, c.DataDir)
	}
	witnessState := strings.TrimPrefix(c.WitnessDir, "/var/lib/")
	if c.StateDirectory != "" && c.WitnessDir != "" && (!validName(witnessState) || witnessState == c.StateDirectory) {
		return nil, fmt.Errorf("service: the witness folder %s is not a state directory of its own under /var/lib", c.WitnessDir)
	}
	args := append([]string{c.Exe}, c.Args()...)
	for i, a := range args {
		args[i] = systemdQuote(a)
	}
	var b bytes.Buffer
	line := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	if c.StateDirectory != "" {
		line("# The agent as a system service, for a machine without a logged-in cashier")
		line("# (a till server in LAN mode). Installed disabled; enable it with")
		line("#   sudo systemctl enable --now %s", c.Name)
		line("# The tray application and this service use the same port: run one or the other.")
		line("# Generated from cfe-agent's service.SystemdUnit (go run ./packaging unit).")
	} else {
		line("# Written by \"cfe-agent service install\"; \"cfe-agent service uninstall\" removes it.")
	}
	line("[Unit]")
	line("Description=%s", specifiers(c.DisplayName+" — "+c.Description))
	line("Documentation=man:cfe-agent(1) https://github.com/cfe-agent/cfe-agent")
	line("Wants=network-online.target")
	line("After=network-online.target cups.service")
	// A start that keeps failing (the port held by another program) stops
	// being retried after 5 attempts in 2 minutes.
	line("StartLimitIntervalSec=120")
	line("StartLimitBurst=5")
	line("")
	line("[Service]")
	// The agent sends READY=1 once it serves (SignalReady): "systemctl
	// start" returns then, and reports a start that fails.
	line("Type=notify")
	line("NotifyAccess=main")
	line("User=%s", specifiers(c.User))
	line("# DGI's time zone: the agent signs only at America/Montevideo (-03:00).")
	line("Environment=TZ=America/Montevideo")
	line("ExecStart=%s", strings.Join(args, " "))
	line("Restart=on-failure")
	line("RestartSec=5s")
	line("TimeoutStopSec=30s")
	line("UMask=0077")
	line("NoNewPrivileges=yes")
	line("ProtectSystem=strict")
	// The numbering witness lives outside the data directory (a copy of the
	// data directory must not carry it: docs/numbering.md), and must be
	// writable too.
	if c.StateDirectory != "" {
		// Writable under ProtectSystem=strict, as every StateDirectory=.
		if c.WitnessDir != "" {
			line("StateDirectory=%s %s", c.StateDirectory, witnessState)
		} else {
			line("StateDirectory=%s", c.StateDirectory)
		}
		line("StateDirectoryMode=0700")
	} else {
		line("ReadWritePaths=%s", systemdQuote(c.DataDir))
		if c.WitnessDir != "" {
			// "-": a folder removed since the install does not stop the
			// service (the agent then signs without a witness, and says so).
			line("ReadWritePaths=%s", systemdQuote("-"+c.WitnessDir))
		}
	}
	line("PrivateTmp=yes")
	line("ProtectKernelTunables=yes")
	line("ProtectKernelModules=yes")
	line("ProtectKernelLogs=yes")
	line("ProtectControlGroups=yes")
	line("RestrictSUIDSGID=yes")
	line("RestrictRealtime=yes")
	line("LockPersonality=yes")
	line("")
	line("[Install]")
	line("WantedBy=multi-user.target")
	return b.Bytes(), nil
}

// systemdQuote writes one word of a command line or path list as systemd
// reads it: double-quoted when it holds blanks, quotes or backslashes (with
// " and \ backslash-escaped), and with % and $ doubled so that neither
// specifiers nor variables are expanded.
func systemdQuote(s string) string {
	s = strings.NewReplacer("%", "%%", "$", "$$").Replace(s)
	if s != "" && !strings.ContainsAny(s, " \t\"'\\;") {
		return s
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// specifiers escapes % in a value where systemd expands specifiers.
func specifiers(s string) string { return strings.ReplaceAll(s, "%", "%%") }
