// Package winstop turns the ways Windows asks a program to stop into the
// cancellation of the agent's run context, the same stop as SIGTERM (Watch).
// Elsewhere SIGINT and SIGTERM are the whole story, and Watch does nothing.
//
// How a Windows program is asked to stop, and how the agent answers:
//
//   - taskkill without /f, Task Manager's "End task" and an installer's
//     restart manager post WM_CLOSE to the process's top-level windows;
//   - log-off, restart and shutdown send WM_QUERYENDSESSION, then
//     WM_ENDSESSION, to every top-level window, and end the process once it
//     has answered WM_ENDSESSION (or after about 5 s);
//   - a console the agent is attached to sends Ctrl+C, Ctrl+Break or its
//     close, which Go's runtime turns into SIGINT and SIGTERM (main's
//     signal.NotifyContext catches both; for the close the runtime holds the
//     console's handler until the process exits).
//
// The GUI-subsystem agent has no window of its own when it runs headless, so
// nothing would reach it: Watch gives it a hidden top-level window (not a
// message-only window: those get neither the session messages nor taskkill's
// WM_CLOSE) whose messages cancel the run context, the same stop as SIGTERM.
// On WM_ENDSESSION the window also waits (at most 4 s) until the
// agent has closed its store and log, so Windows does not end it half-way.
//
// The tray's own window (fyne systray) answers WM_ENDSESSION by removing the
// icon and calling its exit callback, which tray.Run leaves empty: it does not
// stop the agent, and is not meant to. Both windows get the message; the stop
// window's cancel ends tray.Run (its loop watches the context), then the
// agent's Main.Run closes as for any other stop: one path.
//
// The service does not get the window: the service control manager stops it
// (service.Run's Stop and Shutdown).
package winstop
