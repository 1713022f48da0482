package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"time"
)

// RunInfo tells other local programs (doctor, the tray, scripts) where a
// running agent of a profile serves its module: the agent writes it after it
// starts listening and removes it when it stops.
type RunInfo struct {
	PID     int       `json:"pid"`
	BaseURL string    `json:"base_url"`
	Started time.Time `json:"started"`
	// AdminToken authorizes POST /backup (localapi/backup.go): the file is
	// private to the agent's user (0600).
	AdminToken string `json:"admin_token,omitempty"`
}

// RunFilePath is where the running agent of profile writes its RunInfo.
func RunFilePath(dataDir, profile string) string {
	return filepath.Join(dataDir, "run", profile+".json")
}

// WriteRunFile writes info as the run file of profile (0600, replaced
// atomically).
func WriteRunFile(dataDir, profile string, info RunInfo) error {
	p := RunFilePath(dataDir, profile)
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

// ReadRunFile returns the run information of a profile's agent, if one wrote it.
func ReadRunFile(dataDir, profile string) (RunInfo, bool) {
	var info RunInfo
	b, err := os.ReadFile(RunFilePath(dataDir, profile))
	if err != nil || json.Unmarshal(b, &info) != nil || info.BaseURL == "" {
		return RunInfo{}, false
	}
	return info, true
}
