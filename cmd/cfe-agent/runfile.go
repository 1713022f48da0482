package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"time"
)

// runInfo tells other local programs (doctor, the tray, scripts) where a
// running agent of a profile serves its module: the agent writes it after it
// starts listening and removes it when it stops.
type runInfo struct {
	PID     int       `json:"pid"`
	BaseURL string    `json:"base_url"`
	Started time.Time `json:"started"`
	// AdminToken authorizes POST /backup (localapi/backup.go): the file is
	// private to the agent's user (0600).
	AdminToken string `json:"admin_token,omitempty"`
}

func runFilePath(dataDir, profile string) string {
	return filepath.Join(dataDir, "run", profile+".json")
}

func writeRunFile(dataDir, profile string, info runInfo) error {
	p := runFilePath(dataDir, profile)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	b, err := json.Marshal(info)
	if err != nil {
		return err
	}
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

// readRunFile returns the run information of a profile's agent, if one wrote it.
func readRunFile(dataDir, profile string) (runInfo, bool) {
	var info runInfo
	b, err := os.ReadFile(runFilePath(dataDir, profile))
	if err != nil || json.Unmarshal(b, &info) != nil || info.BaseURL == "" {
		return runInfo{}, false
	}
	return info, true
}
