package profiles

import (
	"path/filepath"

	"golang.org/x/sys/windows"
)

// machineDir is %ProgramData%\cfe-agent (the ProgramData known folder).
func machineDir() (string, error) {
	d, err := windows.KnownFolderPath(windows.FOLDERID_ProgramData, 0)
	if err != nil {
		return "", err
	}
	return filepath.Join(d, "cfe-agent"), nil
}
