//go:build !windows

package app

import "github.com/cfe-agent/cfe-agent/service"

// StartService starts the installed service ("cfe-agent service start");
// systemd waits for the agent's READY=1, so a start that fails is reported.
func StartService(name string) error { return service.Start(name) }

// CheckServiceDataDir checks nothing here: systemd reports a service that
// cannot take its data directory (Type=notify).
func CheckServiceDataDir(string) error { return nil }
