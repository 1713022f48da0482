package autostart

import (
	"errors"
	"testing"
)

// fakeLocations is an in-memory platform: user entries by name, and the
// names an installer enabled machine-wide.
// shadow makes it behave as XDG (a user's entry replaces the machine's;
// hide writes a Hidden entry), else as Windows.
type fakeLocations struct {
	user    map[string]Entry
	machine map[string]bool
	hid     map[string]bool
	shadow  bool
}

func (f *fakeLocations) userPath(name string) (string, error)    { return "user/" + name, nil }
func (f *fakeLocations) machinePath(name string) (string, error) { return "machine/" + name, nil }
func (f *fakeLocations) has(machine bool, name string) (bool, error) {
	if machine {
		return f.machine[name], nil
	}
	_, ok := f.user[name]
	return ok, nil
}
func (f *fakeLocations) write(e Entry) error { f.user[e.Name] = e; delete(f.hid, e.Name); return nil }
func (f *fakeLocations) remove(name string) error {
	delete(f.user, name)
	delete(f.hid, name)
	return nil
}
func (f *fakeLocations) shadows() bool                    { return f.shadow }
func (f *fakeLocations) hidden(name string) (bool, error) { return f.hid[name], nil }
func (f *fakeLocations) hide(name string) error {
	if !f.shadow {
		return errors.ErrUnsupported
	}
	delete(f.user, name)
	f.hid[name] = true
	return nil
}

// newFake returns a fake platform with the entry per user and machine-wide as
// asked.
func newFake(user bool, machine bool) *fakeLocations {
	f := &fakeLocations{user: map[string]Entry{}, machine: map[string]bool{"cfe-agent": machine}, hid: map[string]bool{}}
	if user {
		f.user["cfe-agent"] = agent
	}
	return f
}

// installerCommand is the entry with the installer's own command (no data
// directory).
var installerCommand = Entry{Name: "cfe-agent", DisplayName: "Agente CFE", Command: []string{"/opt/cfe-agent/cfe-agent"}}

func TestEnable_machineWide(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name          string
		user, machine bool
		wantUser      bool
	}{
		{"nothing yet: a per-user entry", false, false, true},
		{"per-user already: replaced", true, false, true},
		{"machine-wide: no second entry", false, true, false},
		{"machine-wide and an old per-user one: the duplicate goes", true, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(c.user, c.machine)
			if err := enable(f, installerCommand); err != nil {
				t.Fatal(err)
			}
			if _, ok := f.user["cfe-agent"]; ok != c.wantUser {
				t.Errorf("per-user entry = %v, want %v", ok, c.wantUser)
			}
			st, err := query(f, "cfe-agent")
			if err != nil || !st.Enabled() || st.Machine != c.machine || st.User != c.wantUser {
				t.Errorf("Query = %+v, %v", st, err)
			}
			if st.UserPath != "user/cfe-agent" || st.MachinePath != "machine/cfe-agent" {
				t.Errorf("paths = %q, %q", st.UserPath, st.MachinePath)
			}
		})
	}
}

func TestDisable_machineWide(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name          string
		user, machine bool
		wantErr       error
		wantOn        bool
	}{
		{"per-user: off", true, false, nil, false},
		{"nothing: still off, no error", false, false, nil, false},
		{"machine-wide: the installer's entry stays", false, true, ErrMachineWide, true},
		{"both: the per-user one goes, the machine-wide one stays", true, true, ErrMachineWide, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(c.user, c.machine)
			if err := disable(f, "cfe-agent"); !errors.Is(err, c.wantErr) || (err == nil) != (c.wantErr == nil) {
				t.Fatalf("Disable = %v, want %v", err, c.wantErr)
			}
			if len(f.user) != 0 {
				t.Errorf("the per-user entry is still there")
			}
			if on, err := enabled(f, "cfe-agent"); err != nil || on != c.wantOn {
				t.Errorf("Enabled = %v, %v, want %v", on, err, c.wantOn)
			}
		})
	}
}

func TestEnable_refusesBadEntry(t *testing.T) {
	t.Parallel()
	f := newFake(false, false)
	if err := enable(f, Entry{Name: "../x", Command: []string{"/x"}}); err == nil || len(f.user) != 0 {
		t.Fatalf("a bad entry: %v, %d written", err, len(f.user))
	}
}

// TestEnable_dataDir: an entry with its own data directory (Custom) is never
// dropped in favour of the installer's, which would open the default folder
// at the next login. Where the user's entry replaces the machine's (XDG) it
// is written; where both would start (Windows) Enable refuses and changes
// nothing.
func TestEnable_dataDir(t *testing.T) {
	t.Parallel()
	custom := agent
	custom.Custom = true
	cases := []struct {
		name          string
		user, machine bool
		shadow        bool
		wantErr       error
		wantUser      bool
	}{
		{"no installer entry: written", false, false, false, nil, true},
		{"XDG installer entry: the user's replaces it", false, true, true, nil, true},
		{"XDG installer entry and an old user entry: kept", true, true, true, nil, true},
		{"Windows installer entry: both would start, refused", false, true, false, ErrConflict, false},
		{"Windows installer entry, the user's entry stays", true, true, false, ErrConflict, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(c.user, c.machine)
			f.shadow = c.shadow
			err := enable(f, custom)
			if !errors.Is(err, c.wantErr) || (err == nil) != (c.wantErr == nil) {
				t.Fatalf("Enable = %v, want %v", err, c.wantErr)
			}
			e, ok := f.user["cfe-agent"]
			if ok != c.wantUser || (ok && len(e.Command) != 3) {
				t.Errorf("per-user entry = %v %q, want %v with the data directory", ok, e.Command, c.wantUser)
			}
		})
	}
}

// TestDisable_hidesMachineWide: where a user's entry replaces the
// machine's (XDG), turning autostart off hides the installer's entry for
// this user; turning it on again (the installer's command) un-hides it.
func TestDisable_hidesMachineWide(t *testing.T) {
	t.Parallel()
	f := newFake(true, true)
	f.shadow = true
	if err := disable(f, "cfe-agent"); err != nil {
		t.Fatalf("Disable = %v", err)
	}
	st, err := query(f, "cfe-agent")
	if err != nil || st.Enabled() || !st.Hidden || !st.Machine || st.User {
		t.Fatalf("after Disable, Query = %+v, %v", st, err)
	}
	if err := enable(f, installerCommand); err != nil {
		t.Fatal(err)
	}
	if st, err = query(f, "cfe-agent"); err != nil || !st.Enabled() || st.Hidden || st.User {
		t.Fatalf("after Enable, Query = %+v, %v", st, err)
	}
}
