//go:build !windows

package machinezone

import (
	"os"
	"strings"
)

// systemZoneName reads the zone name from /etc/localtime (a link into zoneinfo on
// Linux and macOS), falling back to /etc/timezone (Debian).
func systemZoneName() (name, source string) {
	if _, err := os.Lstat("/etc/localtime"); err == nil {
		if n := zoneNameFromPath("/etc/localtime"); n != "/etc/localtime" {
			return n, "/etc/localtime"
		}
	}
	if b, err := os.ReadFile("/etc/timezone"); err == nil {
		return strings.TrimSpace(string(b)), "/etc/timezone"
	}
	return "", "desconocido"
}
