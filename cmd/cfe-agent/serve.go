package main

import "github.com/spf13/cobra"

// addServeCommands adds the commands that run the agent. (Filled in when the
// local REST module lands.)
func addServeCommands(root *cobra.Command, opts *globalOptions) {}
