//go:build windows

package machinezone

import (
	"golang.org/x/sys/windows/registry"

	"github.com/cfe-agent/cfe-agent/issuer"
)

// systemZoneName reads the Windows zone key name (e.g. "Montevideo Standard
// Time") from the registry.
func systemZoneName() (name, source string) {
	k, err := registry.OpenKey(registry.LOCAL_MACHINE,
		`SYSTEM\CurrentControlSet\Control\TimeZoneInformation`, registry.QUERY_VALUE)
	if err != nil {
		return "", "desconocido"
	}
	defer func() { _ = k.Close() }()
	v, _, err := k.GetStringValue("TimeZoneKeyName")
	if err != nil {
		return "", "desconocido"
	}
	return v, issuer.WindowsZoneSource
}
