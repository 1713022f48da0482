package autostart

import (
	"errors"

	"golang.org/x/sys/windows/registry"
)

// runKey is the Run key: its values are command lines started at logon, under
// HKEY_CURRENT_USER for one user and under HKEY_LOCAL_MACHINE for every user
// (where the MSI writes its value; the 64-bit view, as this program is).
const runKey = `Software\Microsoft\Windows\CurrentVersion\Run`

// native keeps entries in the Run keys; key is runKey except in tests.
type native struct{ key string }

func (n native) runKey() string {
	if n.key == "" {
		return runKey
	}
	return n.key
}

func (n native) userPath(name string) (string, error) { return `HKCU\` + n.runKey() + `\` + name, nil }
func (n native) machinePath(name string) (string, error) {
	return `HKLM\` + n.runKey() + `\` + name, nil
}

func (n native) write(e Entry) error {
	k, _, err := registry.CreateKey(registry.CURRENT_USER, n.runKey(), registry.SET_VALUE)
	if err != nil {
		return err
	}
	defer func() { _ = k.Close() }()
	return k.SetStringValue(e.Name, RunCommand(e))
}

func (n native) remove(name string) error {
	k, err := registry.OpenKey(registry.CURRENT_USER, n.runKey(), registry.SET_VALUE)
	if errors.Is(err, registry.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer func() { _ = k.Close() }()
	if err := k.DeleteValue(name); err != nil && !errors.Is(err, registry.ErrNotExist) {
		return err
	}
	return nil
}

// shadows: Windows runs the HKLM and the HKCU Run values both; this
// package does not switch the installer's HKLM value off per user.
func (native) shadows() bool               { return false }
func (native) hidden(string) (bool, error) { return false, nil }
func (native) hide(string) error           { return errors.ErrUnsupported }

func (n native) has(machine bool, name string) (bool, error) {
	root := registry.CURRENT_USER
	if machine {
		root = registry.LOCAL_MACHINE
	}
	k, err := registry.OpenKey(root, n.runKey(), registry.QUERY_VALUE)
	if errors.Is(err, registry.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer func() { _ = k.Close() }()
	_, _, err = k.GetStringValue(name)
	if errors.Is(err, registry.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}
