//go:build !windows

package autostart

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// writeFile writes data to path through a temporary file renamed into place,
// creating the directory.
func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".autostart-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly once renamed
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func fileExists(path string, err error) (bool, error) {
	if err != nil {
		return false, err
	}
	_, err = os.Stat(path)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	}
	return false, err
}

// Enable writes e's autostart file (see Path), replacing an older one.
func Enable(e Entry) error {
	if err := e.check(); err != nil {
		return err
	}
	path, err := Path(e.Name)
	if err != nil {
		return err
	}
	return writeFile(path, fileContent(e))
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
