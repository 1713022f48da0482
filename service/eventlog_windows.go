package service

import (
	"errors"

	"golang.org/x/sys/windows"
	"golang.org/x/sys/windows/svc/eventlog"
)

// A service has no console: when the agent cannot start, the reason goes to
// the Windows Event Log (Visor de eventos, Registros de Windows,
// Aplicación), source = the service's name, besides the agent's own log,
// which a failure before the log is opened (the data directory, the
// instance lock) never reaches.

// Event IDs of the service's events (EventCreate.exe's message file shows
// any ID from 1 to 1000 with the event's text).
const (
	eventStartFailed = 1 // the agent ended before it served
	eventRunFailed   = 2 // the agent ended with an error while running
)

// registerEventSource registers name as an event source of the Application
// log whose messages are the events' own text (EventCreate.exe), replacing
// one an earlier install left.
func registerEventSource(name string) error {
	if err := removeEventSource(name); err != nil {
		return err
	}
	return eventlog.InstallAsEventCreate(name, eventlog.Error|eventlog.Warning|eventlog.Info)
}

// removeEventSource removes the event source name; one not registered is no
// error.
func removeEventSource(name string) error {
	if err := eventlog.Remove(name); err != nil && !errors.Is(err, windows.ERROR_FILE_NOT_FOUND) {
		return err
	}
	return nil
}

// reportEvent writes msg as an error event of source name. Windows accepts
// a source that is not registered (the Event Viewer then shows the text
// under a note that the source is unknown).
func reportEvent(name string, id uint32, msg string) error {
	l, err := eventlog.Open(name)
	if err != nil {
		return err
	}
	defer l.Close() //nolint:errcheck // closing a handle
	return l.Error(id, msg)
}
