package main

import "context"

// readyKey is the context key of the function Main.Run calls once the agent
// serves (Main.Open returned): the Windows service reports Running then, not
// when the process starts (withReady, cmd_service_windows.go).
type readyKey struct{}

// signalReady calls the ready function ctx carries, if any.
func signalReady(ctx context.Context) {
	if ready, ok := ctx.Value(readyKey{}).(func()); ok {
		ready()
	}
}
