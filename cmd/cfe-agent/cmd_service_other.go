//go:build !windows

package main

import (
	"context"

	"github.com/spf13/cobra"
)

// executeRoot runs the command tree. systemd runs the agent as any other
// process (SIGTERM stops it).
func executeRoot(ctx context.Context, root *cobra.Command) error { return root.ExecuteContext(ctx) }
