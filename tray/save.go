//go:build linux || windows || (darwin && cgo)

package tray

import (
	"os"
	"path/filepath"
)

// firstDir returns the first of dirs that is an existing folder, else "".
func firstDir(dirs ...string) string {
	for _, d := range dirs {
		if d == "" {
			continue
		}
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			return d
		}
	}
	return ""
}

// homeDesktop is the home folder's Desktop (or its Spanish name), else the
// home folder itself.
func homeDesktop() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	if d := firstDir(filepath.Join(home, "Escritorio"), filepath.Join(home, "Desktop")); d != "" {
		return d, nil
	}
	return home, nil
}
