//go:build !windows

package printer

// installDir: only Windows has the MSI's registry entry.
func installDir() string { return "" }
