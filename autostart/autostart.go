package autostart

import "errors"

// ErrMachineWide is returned by Disable when the entry is also enabled for
// every user of the machine (by the installer: the MSI's HKLM Run value, the
// .deb's /etc/xdg/autostart file): the per-user entry is gone, but the
// machine-wide one, which only an administrator (or uninstalling) removes,
// still starts the agent.
var ErrMachineWide = errors.New("autostart: enabled for every user of the machine by the installer")

// ErrConflict is returned by Enable when e is Custom (another data
// directory), an installer enabled the agent machine-wide, and this platform
// cannot keep the machine-wide entry from starting for this user (Windows'
// HKLM Run value, macOS's /Library/LaunchAgents): a per-user entry would
// start a second agent beside the installer's. Nothing is changed.
var ErrConflict = errors.New("autostart: a per-user entry would start a second agent beside the machine-wide one")

// Status says where an entry is enabled.
type Status struct {
	User        bool   // the current user's entry exists (and is not a Hidden one)
	Hidden      bool   // the current user turned the machine-wide entry off (XDG Hidden=true)
	Machine     bool   // a machine-wide entry (written by an installer) exists
	Replaced    bool   // the user's entry replaces the machine-wide one for this user (XDG)
	UserPath    string // where the user's entry is (or would be)
	MachinePath string // where the machine-wide entry is (or would be)
}

// Enabled reports whether the entry starts with the session at all.
func (s Status) Enabled() bool { return s.User || s.Machine && !s.Hidden }

// locations is where a platform keeps autostart entries: the user's, which
// this package writes, and the machine's, which it only reads. The exported
// functions act on platform; the unexported ones they call take the
// locations, which tests give a fake (or, on Windows, a throwaway key).
type locations interface {
	userPath(name string) (string, error)
	machinePath(name string) (string, error)
	has(machine bool, name string) (bool, error)
	write(e Entry) error
	remove(name string) error
	// shadows says a user's entry replaces the machine-wide entry of the
	// same name for that user (XDG autostart), rather than starting beside it.
	shadows() bool
	// hidden says the user's entry is one that turns the machine-wide
	// entry off; hide writes it (only where shadows is true).
	hidden(name string) (bool, error)
	hide(name string) error
}

// platform is this machine's locations.
var platform locations = native{}

// Path returns where the current user's entry called name lives.
func Path(name string) (string, error) { return platform.userPath(name) }

// Query reports where the entry called name is enabled.
func Query(name string) (Status, error) { return query(platform, name) }

func query(platform locations, name string) (Status, error) {
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
	if st.Hidden, err = platform.hidden(name); err != nil {
		return st, err
	}
	st.Machine, err = platform.has(true, name)
	st.Replaced = st.User && st.Machine && platform.shadows()
	return st, err
}

// Enabled reports whether the entry called name starts with the session,
// per user or machine-wide.
func Enabled(name string) (bool, error) { return enabled(platform, name) }

func enabled(platform locations, name string) (bool, error) {
	st, err := query(platform, name)
	return st.Enabled(), err
}

// Enable writes e's per-user entry, replacing an older one. When an installer
// enabled the agent machine-wide:
//   - an entry that is not Custom (the installer's own command) is not
//     written twice: an older per-user entry, or one that turned the
//     machine-wide entry off, is removed, and the machine-wide one starts it;
//   - a Custom entry (another data directory) is written where a user's entry
//     replaces the machine-wide one (XDG); elsewhere both would start, and
//     Enable returns ErrConflict without changing anything.
func Enable(e Entry) error { return enable(platform, e) }

func enable(platform locations, e Entry) error {
	if err := e.check(); err != nil {
		return err
	}
	machine, err := platform.has(true, e.Name)
	if err != nil {
		return err
	}
	switch {
	case !machine:
		return platform.write(e)
	case !e.Custom:
		return platform.remove(e.Name)
	case platform.shadows():
		return platform.write(e)
	}
	return ErrConflict
}

// Disable turns the entry called name off for the current user; turning off
// one that is not on is not an error. Where a user's entry replaces the
// machine-wide one (XDG), a machine-wide entry is turned off for this user
// by a Hidden entry of the same name; elsewhere the per-user entry is
// removed and ErrMachineWide is returned when a machine-wide entry still
// starts the agent.
func Disable(name string) error { return disable(platform, name) }

func disable(platform locations, name string) error {
	machine, err := platform.has(true, name)
	if err != nil {
		return err
	}
	if machine && platform.shadows() {
		return platform.hide(name)
	}
	if err := platform.remove(name); err != nil {
		return err
	}
	if machine {
		return ErrMachineWide
	}
	return nil
}
