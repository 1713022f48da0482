// Package tray owns the agent's notification-area icon and menu for cashiers
// (Spanish labels), and the decision whether the agent can show one at all.
//
// The tray is a client of the running agent: it reads the local module's
// state report (GET /state) through the Agent interface, shows it as an icon
// (ok, warning, error), a tooltip with the reason and status lines, and turns
// menu clicks into calls on Agent (reprint, switch profile or default printer,
// autostart, diagnostics) or into opening the status page and the log folder.
//
// Available is the headless preflight. On Linux the tray needs a session bus
// on which a StatusNotifierWatcher (the tray host) is registered; Available
// asks over a private connection that never auto-launches a bus. Where the
// tray cannot be built (macOS without cgo, other systems) a stub reports it
// unavailable, so the agent runs headless and still cross-compiles.
package tray
