//go:build !linux

package printer

import "os"

// rawMode leaves the device as it is: outside Linux a serial port is set up
// with the system's tools (mode COM3 on Windows, stty elsewhere).
func rawMode(*os.File) error { return nil }
