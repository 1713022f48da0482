package autostart

import (
	"errors"

	"golang.org/x/sys/windows/registry"
)

// runKey is the per-user Run key: its values are command lines started at logon.
const runKey = `Software\Microsoft\Windows\CurrentVersion\Run`

// Path returns where the entry called name lives: the Run key's value.
func Path(name string) (string, error) { return `HKCU\` + runKey + `\` + name, nil }

// Enable sets e's value in the per-user Run key.
func Enable(e Entry) error {
	if err := e.check(); err != nil {
		return err
	}
	k, _, err := registry.CreateKey(registry.CURRENT_USER, runKey, registry.SET_VALUE)
	if err != nil {
		return err
	}
	defer k.Close()
	return k.SetStringValue(e.Name, RunCommand(e))
}

// Disable deletes the Run value of the entry called name; deleting one that
// does not exist is not an error.
func Disable(name string) error {
	k, err := registry.OpenKey(registry.CURRENT_USER, runKey, registry.SET_VALUE)
	if errors.Is(err, registry.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer k.Close()
	if err := k.DeleteValue(name); err != nil && !errors.Is(err, registry.ErrNotExist) {
		return err
	}
	return nil
}

// Enabled reports whether the Run key has a value for the entry called name.
func Enabled(name string) (bool, error) {
	k, err := registry.OpenKey(registry.CURRENT_USER, runKey, registry.QUERY_VALUE)
	if errors.Is(err, registry.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer k.Close()
	_, _, err = k.GetStringValue(name)
	if errors.Is(err, registry.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}
