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

// systemd is the Linux implementation's seams: where units are written, who
// the caller is, and how systemctl runs. The exported functions act on host;
// tests build their own.
type systemd struct {
	unitDir string
	// vendorUnitDirs are where packages install units, read only when
	// systemctl cannot say which unit it loaded.
	vendorUnitDirs []string
	geteuid        func() int
	systemctl      func(args ...string) ([]byte, error)
}

// host is this machine's systemd.
var host = systemd{
	unitDir:        "/etc/systemd/system",
	vendorUnitDirs: []string{"/usr/lib/systemd/system", "/lib/systemd/system"},
	geteuid:        os.Geteuid,
	systemctl: func(args ...string) ([]byte, error) {
		out, err := exec.Command("systemctl", args...).CombinedOutput()
		if err != nil {
			return out, fmt.Errorf("systemctl %s: %w: %s", strings.Join(args, " "), err, bytes.TrimSpace(out))
		}
		return out, nil
	},
}

// UnitPath returns where Install writes the unit of the service called name.
func UnitPath(name string) string { return host.unitPath(name) }

func (s systemd) unitPath(name string) string { return filepath.Join(s.unitDir, name+".service") }

// Install writes c's unit, creates the data directory and the witness's
// folder (owned by c.User) when they do not exist, reloads systemd and
// enables and starts the service.
// Everything is checked before anything is written.
func Install(c Config) error { return host.install(c) }

func (s systemd) install(c Config) error {
	if s.geteuid() != 0 {
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
	if st, _ := s.query(c.Name); st.Packaged {
		return fmt.Errorf("%w: %s", ErrPackaged, st.Unit)
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
	if c.WitnessDir != "" {
		if err := mkdirOwned(c.WitnessDir, uid, gid); err != nil {
			return fmt.Errorf("service: the witness folder %s: %w", c.WitnessDir, err)
		}
	}
	if err := writeUnit(s.unitPath(c.Name), unit); err != nil {
		return err
	}
	if _, err := s.systemctl("daemon-reload"); err != nil {
		return err
	}
	_, err = s.systemctl("enable", "--now", c.Name+".service")
	return err
}

// mkdirOwned makes dir and the folders above it that do not exist, mode
// 0700, each owned by uid:gid (the witness's folder is in the user's home:
// ~/.local/state must not end up root's).
func mkdirOwned(dir string, uid, gid int) error {
	var missing []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		if err := os.Chown(missing[i], uid, gid); err != nil {
			return err
		}
	}
	return nil
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
// directory stays. A package's unit is refused (ErrPackaged): the package
// removes it.
func Uninstall(name string) error { return host.uninstall(name) }

func (s systemd) uninstall(name string) error {
	st, err := s.controllable(name)
	if err != nil {
		return err
	}
	if st.Packaged {
		return fmt.Errorf("%w: %s", ErrPackaged, st.Unit)
	}
	if _, err := s.systemctl("disable", "--now", name+".service"); err != nil {
		return err
	}
	if err := os.Remove(s.unitPath(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	_, err = s.systemctl("daemon-reload")
	return err
}

// Start starts the installed service.
func Start(name string) error { return host.start(name) }

func (s systemd) start(name string) error {
	if _, err := s.controllable(name); err != nil {
		return err
	}
	_, err := s.systemctl("start", name+".service")
	return err
}

// Stop stops the installed service.
func Stop(name string) error { return host.stop(name) }

func (s systemd) stop(name string) error {
	if _, err := s.controllable(name); err != nil {
		return err
	}
	_, err := s.systemctl("stop", name+".service")
	return err
}

// controllable refuses before any systemctl call that changes something:
// not root, an invalid name, no unit systemd knows (Install's or a
// package's).
func (s systemd) controllable(name string) (State, error) {
	if !validName(name) {
		return State{}, fmt.Errorf("service: invalid name %q", name)
	}
	if s.geteuid() != 0 {
		return State{}, ErrNotAdmin
	}
	// When systemctl cannot answer (no systemd running) but a unit file
	// exists, the control command itself then says why it fails.
	st, _ := s.query(name)
	if !st.Installed {
		return st, ErrNotInstalled
	}
	return st, nil
}

// Query reports the service's state; any user may ask. systemd says which
// unit it loaded (LoadState, FragmentPath): the one Install wrote in
// /etc/systemd/system or a package's (/usr/lib/systemd/system). Where
// systemctl cannot answer (systemd is not running) the unit files say
// whether it is installed.
func Query(name string) (State, error) { return host.query(name) }

func (s systemd) query(name string) (State, error) {
	if !validName(name) {
		return State{}, fmt.Errorf("service: invalid name %q", name)
	}
	out, err := s.systemctl("show", "--property=LoadState,FragmentPath,ActiveState,SubState,UnitFileState", name+".service")
	if err != nil {
		for _, dir := range append([]string{s.unitDir}, s.vendorUnitDirs...) {
			p := filepath.Join(dir, name+".service")
			if _, serr := os.Stat(p); serr == nil {
				return State{Installed: true, Unit: p, Packaged: dir != s.unitDir}, err
			}
		}
		return State{}, nil
	}
	props := map[string]string{}
	for _, l := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(l), "="); ok {
			props[k] = v
		}
	}
	if props["LoadState"] == "not-found" || props["LoadState"] == "" {
		return State{}, nil
	}
	fragment := props["FragmentPath"]
	return State{
		Installed: true,
		Running:   props["ActiveState"] == "active",
		Enabled:   props["UnitFileState"] == "enabled",
		Detail:    props["ActiveState"] + " (" + props["SubState"] + ")",
		Unit:      fragment,
		Packaged:  fragment != "" && fragment != s.unitPath(name),
	}, nil
}
