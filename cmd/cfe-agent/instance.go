package main

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/cfe-agent/cfe-agent/app"
)

// runFileOfPID is instance.Start's Locate over dataDir's run files: the base
// URL in the run file written by process pid (the one holding the instance
// lock).
func runFileOfPID(dataDir string) func(pid int) (string, bool) {
	return func(pid int) (string, bool) {
		files, _ := filepath.Glob(filepath.Join(dataDir, "run", "*.json"))
		for _, f := range files {
			var info app.RunInfo
			if b, err := os.ReadFile(f); err == nil && json.Unmarshal(b, &info) == nil && info.PID == pid && info.BaseURL != "" {
				return info.BaseURL, true
			}
		}
		return "", false
	}
}
