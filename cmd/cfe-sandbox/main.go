// Command cfe-sandbox runs an offline emulator of the hosted CFE service, for
// integrators and for the agent's tests. See docs/sandbox.md.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := newRootCommand(ctx).Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "cfe-sandbox:", err)
		os.Exit(1)
	}
}
