package app

import (
	"path/filepath"
	"strings"

	"github.com/cfe-agent/cfe-agent/service"
)

// readAgentRun says whether the agent's Windows service runs on dataDir;
// otherwise the agent is the tray (on Windows the agent is a windowed
// program: the tray, or the service).
func readAgentRun(_ int, dataDir string) agentRun {
	if st, err := service.Query(ServiceName); err == nil && st.Running {
		if dir, err := service.InstalledDataDir(ServiceName); err == nil &&
			strings.EqualFold(filepath.Clean(dir), filepath.Clean(dataDir)) {
			return agentRun{windowsService: true, known: true}
		}
	}
	return agentRun{known: true}
}
