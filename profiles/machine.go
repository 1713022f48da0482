package profiles

import (
	"os"
	"path/filepath"
)

// EnvMachineDir names the machine-wide folder of the agent (see
// MachineDir); tests set it.
const EnvMachineDir = EnvPrefix + "MACHINE_DIR"

// MachineDir is the agent's machine-wide folder, shared by every user of
// the machine: %ProgramData%\cfe-agent on Windows (every user may create
// files there, and read the others'), where each user's agent records the
// production profile it runs (app: the Windows multi-user rule,
// docs/windows-users.md). "" where there is none: elsewhere, unless
// CFE_AGENT_MACHINE_DIR names one.
func MachineDir() (string, error) {
	if dir := os.Getenv(EnvMachineDir); dir != "" {
		return filepath.Abs(dir)
	}
	return machineDir()
}
