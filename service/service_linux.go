package service

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
)

// The seams of the Linux implementation, replaced by tests: where units are
// written, who the caller is, and how systemctl runs.
var (
	unitDir   = "/etc/systemd/system"
	geteuid   = os.Geteuid
	systemctl = func(args ...string) ([]byte, error) {
		out, err := exec.Command("systemctl", args...).CombinedOutput()
		if err != nil {
			return out, fmt.Errorf("systemctl %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
		}
		return out, nil
	}
)

// UnitPath returns where Install writes the unit of the service called name.
func UnitPath(name string) string { return filepath.Join(unitDir, name+".service") }

// Install writes c's unit, creates the data directory (owned by c.User) when
// it does not exist, reloads systemd and enables and starts the service.
// Everything is checked before anything is written.
func Install(c Config) error {
	if geteuid() != 0 {
		return ErrNotAdmin
	}
	unit, err := SystemdUnit(c)
	if err != nil {
		return err
	}
	u, err := user.Lookup(c.User)
	if err != nil {
		return fmt.Errorf("service: user %q: %w", c.User, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if fi, err := os.Stat(c.Exe); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return fmt.Errorf("service: %s is not an executable file", c.Exe)
	}
	if _, err := os.Stat(c.DataDir); errors.Is(err, fs.ErrNotExist) {
		// ReadWritePaths= needs it to exist when the service starts.
		if err := os.MkdirAll(c.DataDir, 0o700); err != nil {
			return err
		}
		if err := os.Chown(c.DataDir, uid, gid); err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	if err := writeUnit(UnitPath(c.Name), unit); err != nil {
		return err
	}
	if _, err := systemctl("daemon-reload"); err != nil {
		return err
	}
	_, err = systemctl("enable", "--now", c.Name+".service")
	return err
}

// writeUnit writes a unit file through a temporary file renamed into place.
func writeUnit(p string, data []byte) error {
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// Uninstall stops and disables the service and removes its unit. The data
// directory stays.
func Uninstall(name string) error {
	if err := controllable(name); err != nil {
		return err
	}
	if _, err := systemctl("disable", "--now", name+".service"); err != nil {
		return err
	}
	if err := os.Remove(UnitPath(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	_, err := systemctl("daemon-reload")
	return err
}

// Start starts the installed service.
func Start(name string) error {
	if err := controllable(name); err != nil {
		return err
	}
	_, err := systemctl("start", name+".service")
	return err
}

// Stop stops the installed service.
func Stop(name string) error {
	if err := controllable(name); err != nil {
		return err
	}
	_, err := systemctl("stop", name+".service")
	return err
}

// controllable refuses before any systemctl call: not root, an invalid
// name, no unit written by Install.
func controllable(name string) error {
	if !validName(name) {
		return fmt.Errorf("service: invalid name %q", name)
	}
	if geteuid() != 0 {
		return ErrNotAdmin
	}
	if _, err := os.Stat(UnitPath(name)); errors.Is(err, fs.ErrNotExist) {
		return ErrNotInstalled
	} else if err != nil {
		return err
	}
	return nil
}

// Query reports the service's state; any user may ask.
func Query(name string) (State, error) {
	if !validName(name) {
		return State{}, fmt.Errorf("service: invalid name %q", name)
	}
	if _, err := os.Stat(UnitPath(name)); errors.Is(err, fs.ErrNotExist) {
		return State{}, nil
	}
	out, err := systemctl("show", "--property=ActiveState,SubState,UnitFileState", name+".service")
	if err != nil {
		return State{Installed: true}, err
	}
	props := map[string]string{}
	for _, l := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(l), "="); ok {
			props[k] = v
		}
	}
	return State{
		Installed: true,
		Running:   props["ActiveState"] == "active",
		Enabled:   props["UnitFileState"] == "enabled",
		Detail:    props["ActiveState"] + " (" + props["SubState"] + ")",
	}, nil
}
