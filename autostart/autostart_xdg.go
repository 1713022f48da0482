//go:build !windows && !darwin

package autostart

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// Path returns the XDG autostart file of the entry called name.
func Path(name string) (string, error) {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "autostart", name+".desktop"), nil
}

// Enable writes e's autostart file, replacing an older one.
func Enable(e Entry) error {
	if err := e.check(); err != nil {
		return err
	}
	path, err := Path(e.Name)
	if err != nil {
		return err
	}
	return writeFile(path, DesktopEntry(e))
}

// Disable removes the autostart file of the entry called name; removing one
// that does not exist is not an error.
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

// Enabled reports whether the entry called name has an autostart file.
func Enabled(name string) (bool, error) {
	return fileExists(Path(name))
}
