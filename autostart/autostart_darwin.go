package autostart

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// Path returns the LaunchAgent file of the entry called name.
func Path(name string) (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, "Library", "LaunchAgents", LaunchAgentLabel(Entry{Name: name})+".plist"), nil
}

// Enable writes e's LaunchAgent, which launchd loads at the next login.
func Enable(e Entry) error {
	if err := e.check(); err != nil {
		return err
	}
	path, err := Path(e.Name)
	if err != nil {
		return err
	}
	return writeFile(path, LaunchAgentPlist(e))
}

// Disable removes the LaunchAgent of the entry called name; removing one that
// does not exist is not an error.
func Disable(name string) error {
	path, err := Path(name)
	if err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// Enabled reports whether the entry called name has a LaunchAgent.
func Enabled(name string) (bool, error) {
	return fileExists(Path(name))
}
