//go:build !windows

package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/cfe-agent/cfe-agent/service"
)

// executeRoot runs the command tree. systemd runs the agent as any other
// process (SIGTERM stops it).
func executeRoot(ctx context.Context, root *cobra.Command) error { return root.ExecuteContext(ctx) }

// startService starts the installed service (systemd waits for the agent's
// READY=1: a start that fails is reported).
func startService(name string) error { return service.Start(name) }

// checkServiceDataDir checks nothing here: systemd reports a service that
// cannot take its data directory (Type=notify).
func checkServiceDataDir(string) error { return nil }
