package app

import (
	"encoding/json"
	"os"
	"path/filepath"
)

// RunFileOfPID is internal/instance's Start.Locate over dataDir's run
// files: the base URL in the run file that process pid (the one holding the
// data directory's instance lock) wrote, whatever its profile.
func RunFileOfPID(dataDir string) func(pid int) (string, bool) {
	return func(pid int) (string, bool) {
		files, _ := filepath.Glob(filepath.Join(dataDir, "run", "*.json"))
		for _, f := range files {
			var info RunInfo
			if b, err := os.ReadFile(f); err == nil && json.Unmarshal(b, &info) == nil && info.PID == pid && info.BaseURL != "" {
				return info.BaseURL, true
			}
		}
		return "", false
	}
}
