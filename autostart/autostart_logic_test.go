package autostart

import (
	"errors"
	"testing"
)

// fakeLocations is an in-memory platform: user entries by name, and the
// names an installer enabled machine-wide.
type fakeLocations struct {
	user    map[string]Entry
	machine map[string]bool
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
func (f *fakeLocations) write(e Entry) error      { f.user[e.Name] = e; return nil }
func (f *fakeLocations) remove(name string) error { delete(f.user, name); return nil }

func useFake(t *testing.T, user bool, machine bool) *fakeLocations {
	f := &fakeLocations{user: map[string]Entry{}, machine: map[string]bool{"cfe-agent": machine}}
	if user {
		f.user["cfe-agent"] = agent
	}
	old := platform
	platform = f
	t.Cleanup(func() { platform = old })
	return f
}

func TestEnable_machineWide(t *testing.T) {
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
			f := useFake(t, c.user, c.machine)
			if err := Enable(agent); err != nil {
				t.Fatal(err)
			}
			if _, ok := f.user["cfe-agent"]; ok != c.wantUser {
				t.Errorf("per-user entry = %v, want %v", ok, c.wantUser)
			}
			st, err := Query("cfe-agent")
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
			f := useFake(t, c.user, c.machine)
			if err := Disable("cfe-agent"); !errors.Is(err, c.wantErr) || (err == nil) != (c.wantErr == nil) {
				t.Fatalf("Disable = %v, want %v", err, c.wantErr)
			}
			if len(f.user) != 0 {
				t.Errorf("the per-user entry is still there")
			}
			if on, err := Enabled("cfe-agent"); err != nil || on != c.wantOn {
				t.Errorf("Enabled = %v, %v, want %v", on, err, c.wantOn)
			}
		})
	}
}

func TestEnable_refusesBadEntry(t *testing.T) {
	f := useFake(t, false, false)
	if err := Enable(Entry{Name: "../x", Command: []string{"/x"}}); err == nil || len(f.user) != 0 {
		t.Fatalf("a bad entry: %v, %d written", err, len(f.user))
	}
}
