// Package tray owns the agent's notification-area icon and menu for cashiers
// (Spanish labels), and the decision whether the agent can show one at all.
//
// The tray talks to the running agent through the Agent interface only: it
// reads the local module's state report (the body of GET /state, a
// localapi/apitype type), shows it as an icon (ok, warning, error), a tooltip
// with the reason and status lines, and turns menu clicks into calls on Agent
// (reprint, switch profile or default printer, autostart, diagnostics) or
// into opening the status page and the log folder.
//
// The agent implements Agent in-process, every method of it (app.Runner):
// the tray lives in the agent's own process, and switching the profile, the
// default printer, autostart and the diagnostic archive are the machine
// owner's actions that the local module does not offer over HTTP (it may
// listen on the LAN), so going "only through the client" would have meant
// new privileged routes. In-process, the state is the report the module
// answers and a reprint is the print the module does, both from the
// application's facade (app.Facade: Report, Reprint), which the local module
// and the status page call too: the tray sees what a client of GET /state
// and POST /pdf would see, without a port, a token or a JSON round trip, and
// never links the server nor the application: this package imports only the
// wire types (localapi/apitype) and declares the port (Agent) the
// application implements.
//
// The menu's first line says MODO PRUEBA for a sandbox profile (the tooltip
// and a badge on the icon say it too); then why the agent is red or amber,
// in lines of at most 60 characters, with "Detalles…" (the status page).
// Titles have their mnemonic marker doubled (label.go). "Salir" asks first
// (confirm.go: zenity or kdialog on Linux, MessageBoxW on Windows, else a
// submenu with the question). Reprint results,
// an exported diagnostic archive, the agent turning red (once per
// transition) and a print job that failed on the default printer are also
// desktop notifications, failures with an error icon: org.freedesktop.Notifications
// on Linux, a balloon of the tray icon on Windows. "Exportar diagnóstico…"
// asks where to save with the desktop's save dialog (zenity or kdialog on
// Linux); without one (Windows, macOS, a Linux desktop lacking both) the item
// loses its ellipsis and the archive goes to the desktop folder, named in a
// notification.
//
// Available is the headless preflight. On Linux the tray needs a session bus
// on which a StatusNotifierWatcher (the tray host) is registered; Available
// asks over a private connection that never auto-launches a bus. When a bus
// exists but no host does yet (the agent started at login before the panel),
// its error wraps ErrNoHost and WaitHost waits for NameOwnerChanged; once the
// tray runs, the tray library registers again with every new host. Where the
// tray cannot be built (macOS without cgo, other systems) a stub reports it
// unavailable, so the agent runs headless and still cross-compiles.
package tray
