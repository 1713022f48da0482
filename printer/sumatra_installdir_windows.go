//go:build windows

package printer

import "golang.org/x/sys/windows/registry"

// InstallDirKey and InstallDirValue are where the MSI records the agent's
// folder (HKLM, 64-bit view; packaging/windows/cfe-agent.wxs).
const (
	InstallDirKey   = `Software\cfe-agent`
	InstallDirValue = "InstallDir"
)

// installDir is the folder the MSI recorded, or "".
func installDir() string {
	k, err := registry.OpenKey(registry.LOCAL_MACHINE, InstallDirKey, registry.QUERY_VALUE|registry.WOW64_64KEY)
	if err != nil {
		return ""
	}
	defer func() { _ = k.Close() }()
	dir, _, err := k.GetStringValue(InstallDirValue)
	if err != nil {
		return ""
	}
	return dir
}
