//go:build !windows && !darwin

package autostart

import (
	"os"
	"path/filepath"
	"strings"
)

// userFile returns the user's XDG autostart file of the entry called name.
func userFile(name string) (string, error) {
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

// machineFile returns the system-wide XDG autostart file of the entry called
// name (the .deb installs /etc/xdg/autostart/cfe-agent.desktop): the first
// that exists in $XDG_CONFIG_DIRS (default /etc/xdg), else the first
// directory's.
func machineFile(name string) string {
	var dirs []string
	for _, d := range strings.Split(os.Getenv("XDG_CONFIG_DIRS"), ":") {
		if filepath.IsAbs(d) {
			dirs = append(dirs, d)
		}
	}
	if len(dirs) == 0 {
		dirs = []string{"/etc/xdg"}
	}
	for _, d := range dirs {
		p := filepath.Join(d, "autostart", name+".desktop")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return filepath.Join(dirs[0], "autostart", name+".desktop")
}

// userShadowsMachine: an XDG autostart file in the user's directory replaces
// the system-wide file of the same name, and one with Hidden=true turns it
// off for that user.
const userShadowsMachine = true

// fileContent is what Enable writes: an XDG autostart desktop entry.
func fileContent(e Entry) []byte { return DesktopEntry(e) }
