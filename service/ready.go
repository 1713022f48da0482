package service

import (
	"context"
	"log/slog"
)

// Readiness: whoever started the agent learns when it serves, not when the
// process starts. The Windows service reports Running then (Run's ready
// function, which the caller puts in the run context with WithReady), and a
// systemd unit of Type=notify (SystemdUnit's) gets READY=1 on its
// notification socket, so that "systemctl start" returns only then and
// reports a start that fails.

// readyKey is the context key of the function SignalReady calls.
type readyKey struct{}

// WithReady returns ctx carrying ready, which SignalReady calls once the
// agent serves: Run's ready function, under the service control manager.
func WithReady(ctx context.Context, ready func()) context.Context {
	return context.WithValue(ctx, readyKey{}, ready)
}

// SignalReady tells whoever started the agent that it serves: the ready
// function ctx carries (WithReady), if any, and systemd's notification
// socket, if any ($NOTIFY_SOCKET). A notification that fails is logged on
// log: systemd then ends the start with a timeout, which its journal
// explains.
func SignalReady(ctx context.Context, log *slog.Logger) {
	if ready, ok := ctx.Value(readyKey{}).(func()); ok {
		ready()
	}
	if err := notifySystemd(sdReady); err != nil {
		log.Warn("could not tell systemd the agent is ready", "err", err)
	}
}

// SignalStopping tells systemd, if it started the agent, that the agent is
// closing (a stop it did not ask for, as the tray's "Salir", is then no
// failure). A notification that fails is logged on log.
func SignalStopping(log *slog.Logger) {
	if err := notifySystemd(sdStopping); err != nil {
		log.Warn("could not tell systemd the agent is stopping", "err", err)
	}
}
