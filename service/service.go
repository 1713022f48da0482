package service

import (
	"errors"
	"fmt"
	"strings"
)

// ErrNotAdmin is returned when the caller may not install or control
// services: not root on Linux, not an administrator on Windows.
var ErrNotAdmin = errors.New("service: administrator (root) rights are needed")

// ErrNotInstalled is returned when the service does not exist.
var ErrNotInstalled = errors.New("service: not installed")

// ErrPackaged is returned by Install and Uninstall on Linux when systemd
// loads the service's unit from outside /etc/systemd/system: the .deb's
// /usr/lib/systemd/system/cfe-agent.service. A second unit of the same name
// in /etc would override it with another data directory; the packaged one is
// enabled and disabled with systemctl, and removed with the package.
var ErrPackaged = errors.New("service: the unit belongs to an installed package")

// ErrStartFailed is Start's error when the service stopped before it ran
// (Windows: the reason is in the Event Log and the agent's log).
var ErrStartFailed = errors.New("service: the service stopped while starting")

// ErrUnsupported is returned on platforms without a service manager this
// package knows.
var ErrUnsupported = errors.New("service: not supported on this platform")

// Config describes the service to install.
type Config struct {
	// Name is the service's name (the unit's file name, the SCM's key):
	// letters, digits, '-', '_' and '.'.
	Name string
	// DisplayName and Description are shown by the service managers, in
	// Spanish.
	DisplayName string
	Description string
	// Exe is the agent's executable, an absolute path.
	Exe string
	// DataDir is the agent's data directory, an absolute path.
	DataDir string
	// User runs the service on Linux (the unit's User=); the Windows
	// service runs as LocalSystem.
	User string
	// StateDirectory, on Linux, makes the unit a package's: systemd creates
	// /var/lib/<StateDirectory> (owned by User, mode 0700), which must be
	// DataDir. Install never sets it (the .deb's unit, from SystemdUnit).
	StateDirectory string
	// WitnessDir, on Linux, is the folder of the agent's numbering witness
	// as the service's user sees it (profiles.ServiceWitnessDir): outside
	// DataDir, and writable by the service. The unit names it (a second
	// StateDirectory= with StateDirectory, which must then be
	// /var/lib/<name>; else ReadWritePaths=), and Install creates it,
	// owned by User. Empty: none (the agent then signs without a witness).
	WitnessDir string
}

// Args are the arguments the service passes to Exe: the headless agent on
// the pinned data directory.
func (c Config) Args() []string { return []string{"--data-dir", c.DataDir, "serve"} }

// check refuses a configuration that cannot be installed; abs is the
// platform's test of an absolute path.
func (c Config) check(abs func(string) bool) error {
	if !validName(c.Name) {
		return fmt.Errorf("service: invalid name %q", c.Name)
	}
	if c.Exe == "" || !abs(c.Exe) {
		return fmt.Errorf("service: the executable %q is not an absolute path", c.Exe)
	}
	if c.DataDir == "" || !abs(c.DataDir) {
		return fmt.Errorf("service: the data directory %q is not an absolute path", c.DataDir)
	}
	if c.WitnessDir != "" && !abs(c.WitnessDir) {
		return fmt.Errorf("service: the witness folder %q is not an absolute path", c.WitnessDir)
	}
	if strings.ContainsAny(c.Exe+c.DataDir+c.DisplayName+c.Description+c.User+c.WitnessDir, "\x00\n\r") {
		return errors.New("service: a line break or NUL in the configuration")
	}
	return nil
}

func validName(name string) bool {
	return name != "" && strings.IndexFunc(name, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.')
	}) < 0
}

// State is what a service manager says of the service.
type State struct {
	Installed bool
	Running   bool
	// Detail is the manager's own words (systemd's ActiveState/SubState,
	// the SCM's state), for the technician.
	Detail string
	// Enabled says the service starts with the machine.
	Enabled bool
	// Unit is, on Linux, the unit file systemd loaded (its FragmentPath).
	Unit string
	// Packaged says, on Linux, that the unit is not one Install wrote but
	// a package's (outside /etc/systemd/system).
	Packaged bool
}
