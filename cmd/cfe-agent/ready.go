package main

import (
	"context"
	"log/slog"
)

// readyKey is the context key of the function Main.Run calls once the agent
// serves (Main.Open returned): the Windows service reports Running then, not
// when the process starts (withReady, cmd_service_windows.go).
type readyKey struct{}

// signalReady tells whoever started the agent that it serves: the ready
// function ctx carries, if any (the Windows service), and systemd's
// notification socket, if any (the unit is Type=notify: "systemctl start"
// returns only now). A notification that fails is logged: systemd then
// ends the start with a timeout, which its journal explains.
func signalReady(ctx context.Context, log *slog.Logger) {
	if ready, ok := ctx.Value(readyKey{}).(func()); ok {
		ready()
	}
	if err := notifySystemd(sdReady); err != nil {
		log.Warn("could not tell systemd the agent is ready", "err", err)
	}
}

// signalStopping tells systemd, if it started the agent, that the agent is
// closing (a stop it did not ask for, as "Salir", is then no failure).
func signalStopping(log *slog.Logger) {
	if err := notifySystemd(sdStopping); err != nil {
		log.Warn("could not tell systemd the agent is stopping", "err", err)
	}
}
