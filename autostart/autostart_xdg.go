//go:build !windows && !darwin

package autostart

import (
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

// fileContent is what Enable writes: an XDG autostart desktop entry.
func fileContent(e Entry) []byte { return DesktopEntry(e) }
