//go:build !windows

package autostart

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// native keeps entries in files: the user's is written, the machine's only
// read.
type native struct{}

func (native) userPath(name string) (string, error)    { return userFile(name) }
func (native) machinePath(name string) (string, error) { return machineFile(name), nil }

func (native) has(machine bool, name string) (bool, error) {
	if machine {
		return fileExists(machineFile(name), nil)
	}
	ok, err := fileExists(userFile(name))
	if !ok || err != nil || !userShadowsMachine {
		return ok, err
	}
	hidden, err := native{}.hidden(name)
	return !hidden, err
}

func (native) shadows() bool { return userShadowsMachine }

func (native) hidden(name string) (bool, error) {
	if !userShadowsMachine {
		return false, nil
	}
	path, err := userFile(name)
	if err != nil {
		return false, err
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return desktopHidden(b), nil
}

func (native) hide(name string) error {
	if !userShadowsMachine {
		return errors.ErrUnsupported
	}
	path, err := userFile(name)
	if err != nil {
		return err
	}
	return writeFile(path, HiddenDesktopEntry(Entry{Name: name, DisplayName: "Agente CFE"}))
}

func (native) write(e Entry) error {
	path, err := userFile(e.Name)
	if err != nil {
		return err
	}
	return writeFile(path, fileContent(e))
}

func (native) remove(name string) error {
	path, err := userFile(name)
	if err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

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

// desktopHidden reports whether a desktop file's [Desktop Entry] group
// says Hidden=true.
func desktopHidden(data []byte) bool {
	group := ""
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			group = line
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok && group == "[Desktop Entry]" &&
			strings.TrimSpace(k) == "Hidden" && strings.TrimSpace(v) == "true" {
			return true
		}
	}
	return false
}
