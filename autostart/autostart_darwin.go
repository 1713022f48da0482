package autostart

import (
	"os"
	"path/filepath"
)

// userFile returns the user's LaunchAgent file of the entry called name.
func userFile(name string) (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, "Library", "LaunchAgents", LaunchAgentLabel(Entry{Name: name})+".plist"), nil
}

// machineFile returns the LaunchAgent an installer puts in place for every
// user.
func machineFile(name string) string {
	return filepath.Join("/Library", "LaunchAgents", LaunchAgentLabel(Entry{Name: name})+".plist")
}

// userShadowsMachine: a LaunchAgent in /Library/LaunchAgents is loaded for
// every user whatever the user's own folder holds.
const userShadowsMachine = false

// fileContent is what Enable writes: a LaunchAgent, which launchd loads at the
// next login.
func fileContent(e Entry) []byte { return LaunchAgentPlist(e) }
