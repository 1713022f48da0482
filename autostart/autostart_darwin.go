package autostart

import (
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

// fileContent is what Enable writes: a LaunchAgent, which launchd loads at the
// next login.
func fileContent(e Entry) []byte { return LaunchAgentPlist(e) }
