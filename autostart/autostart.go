package autostart

import "errors"

// ErrMachineWide is returned by Disable when the entry is also enabled for
// every user of the machine (by the installer: the MSI's HKLM Run value, the
// .deb's /etc/xdg/autostart file): the per-user entry is gone, but the
// machine-wide one, which only an administrator (or uninstalling) removes,
// still starts the agent.
var ErrMachineWide = errors.New("autostart: enabled for every user of the machine by the installer")

// Status says where an entry is enabled.
type Status struct {
	User        bool   // the current user's entry exists
	Machine     bool   // a machine-wide entry (written by an installer) exists
	UserPath    string // where the user's entry is (or would be)
	MachinePath string // where the machine-wide entry is (or would be)
}

// Enabled reports whether the entry starts with the session at all.
func (s Status) Enabled() bool { return s.User || s.Machine }

// locations is where a platform keeps autostart entries: the user's, which
// this package writes, and the machine's, which it only reads. Tests replace
// platform with a fake.
type locations interface {
	userPath(name string) (string, error)
	machinePath(name string) (string, error)
	has(machine bool, name string) (bool, error)
	write(e Entry) error
	remove(name string) error
}

var platform locations = native{}

// Path returns where the current user's entry called name lives.
func Path(name string) (string, error) { return platform.userPath(name) }

// Query reports where the entry called name is enabled.
func Query(name string) (Status, error) {
	var st Status
	var err error
	if st.UserPath, err = platform.userPath(name); err != nil {
		return st, err
	}
	if st.MachinePath, err = platform.machinePath(name); err != nil {
		return st, err
	}
	if st.User, err = platform.has(false, name); err != nil {
		return st, err
	}
	st.Machine, err = platform.has(true, name)
	return st, err
}

// Enabled reports whether the entry called name starts with the session,
// per user or machine-wide.
func Enabled(name string) (bool, error) {
	st, err := Query(name)
	return st.Enabled(), err
}

// Enable writes e's per-user entry, replacing an older one. When an installer
// enabled e machine-wide, no second (per-user) entry is written, and one
// written before is removed: the agent would be started twice.
func Enable(e Entry) error {
	if err := e.check(); err != nil {
		return err
	}
	machine, err := platform.has(true, e.Name)
	if err != nil {
		return err
	}
	if machine {
		return platform.remove(e.Name)
	}
	return platform.write(e)
}

// Disable removes the per-user entry called name; removing one that does not
// exist is not an error. It returns ErrMachineWide when a machine-wide entry
// still starts the agent.
func Disable(name string) error {
	if err := platform.remove(name); err != nil {
		return err
	}
	machine, err := platform.has(true, name)
	if err != nil {
		return err
	}
	if machine {
		return ErrMachineWide
	}
	return nil
}
