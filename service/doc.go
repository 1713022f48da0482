// Package service runs the agent as a system service, for machines where no
// cashier logs in (a till server in LAN mode): a Windows service through the
// service control manager (golang.org/x/sys/windows/svc and svc/mgr) and a
// systemd system unit on Linux.
//
// The service's command line is the agent's headless command with the data
// directory pinned at install time (Config.Args: "--data-dir DIR serve"), so
// the service and the technician's command line use the same store.
//
// Install, Uninstall, Start, Stop and State act on the current platform and
// need an administrator (Windows) or root (Linux; ErrNotAdmin otherwise,
// before anything is written). SystemdUnit is pure and tested anywhere. On
// Windows, IsService tells whether the process was started by the service
// control manager and Run runs the agent under it.
//
// SignalReady and SignalStopping tell whoever started the agent when it
// serves and when it closes: the Windows service's ready function (carried
// in the run context, WithReady) and systemd's notification socket (the
// unit is Type=notify).
//
// The package is a leaf: it imports nothing of the project.
package service
