package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/cfe-agent/cfe-agent/app"
	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/service"
)

// executeRoot runs the command tree. Started by the service control manager
// (the service's command line is "--data-dir DIR serve"), it runs under
// service.Run, which reports the service's state and cancels ctx on Stop or
// shutdown, so the headless agent closes as on SIGTERM. The service is
// Running once Main.Open has returned (the module serves: Main.Run calls the
// ready function ctx carries); an Open that fails ends the service with
// service.ExitStartFailed, its error in the agent's log (Main.Open) and in
// the Windows Event Log (service.Run), which also has the errors that come
// before the log is open (the data directory, the instance lock).
func executeRoot(ctx context.Context, root *cobra.Command) error {
	if !service.IsService() {
		return root.ExecuteContext(ctx)
	}
	return service.Run(app.ServiceName, func(svcCtx context.Context, ready func()) error {
		// Only the manager stops the service: Go's runtime turns a console
		// CTRL_LOGOFF_EVENT, which services receive when any user logs
		// off, into SIGTERM, and main's signal context would stop the
		// service with the user's session.
		ctx, cancel := context.WithCancel(withReady(context.WithoutCancel(ctx), ready))
		defer cancel()
		stop := context.AfterFunc(svcCtx, cancel)
		defer stop()
		if err := root.ExecuteContext(ctx); err != nil {
			return describedError{err} // the Event Log gets the Spanish reason
		}
		return nil
	})
}

// withReady returns ctx carrying ready, which Main.Run calls once the agent
// serves (service.SignalReady).
func withReady(ctx context.Context, ready func()) context.Context {
	return service.WithReady(ctx, ready)
}

// describedError is an error whose text is describe's (Spanish, for the
// Event Log, where the service writes why it stopped); it unwraps to err.
type describedError struct{ err error }

func (e describedError) Error() string { return cfe.Describe(e.err) }
func (e describedError) Unwrap() error { return e.err }
