package main

import (
	"log/slog"
	"os"

	"github.com/spf13/cobra"
)

// newRootCommand builds the command tree. Running cfe-agent with no command
// starts the agent (tray when available, else headless).
func newRootCommand() *cobra.Command {
	var opts globalOptions
	root := &cobra.Command{
		Use:           "cfe-agent",
		Short:         "Agente de comprobantes fiscales electrónicos (CFE) para puntos de venta",
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&opts.dataDir, "data-dir", "",
		"data directory (default: $CFE_AGENT_DATA_DIR, else <user config dir>/cfe-agent)")
	root.PersistentFlags().StringVar(&opts.profile, "profile", "", "profile to use instead of the active one")

	root.AddCommand(
		newVerifyCommand(&opts),
		newCAECommand(&opts),
		newEnvelopeCommand(&opts),
		newArchiveCommand(&opts),
		newCertCommand(&opts),
		newProfileCommand(&opts),
		newDoctorCommand(&opts),
		newRenderCommand(&opts),
		newPrintersCommand(&opts),
		newAutostartCommand(&opts),
		newDiagnosticsCommand(&opts),
	)
	addServeCommands(root, &opts)
	return root
}

// cliLogger is the logger of one-shot commands: warnings and errors only, on stderr.
func cliLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}
