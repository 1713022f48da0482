//go:build !windows

package profiles

// machineDir: no machine-wide folder off Windows (a Linux shop runs one
// agent per machine, the package's service, or one desktop user's).
func machineDir() (string, error) { return "", nil }
