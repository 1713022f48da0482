//go:build !linux

package service

// Only systemd (Linux) is notified: elsewhere these states go nowhere.
const (
	sdReady    = "READY=1"
	sdStopping = "STOPPING=1"
)

// notifySystemd does nothing outside Linux.
func notifySystemd(string) error { return nil }
