package main

import (
	"log/slog"
	"os"

	"github.com/spf13/cobra"

	"github.com/cfe-agent/cfe-agent/app"
)

// newRootCommand builds the command tree. Running cfe-agent with no command
// starts the agent (tray when available, else headless).
func newRootCommand() *cobra.Command {
	var opts app.Options
	root := &cobra.Command{
		Use:           "cfe-agent",
		Short:         "Agente de comprobantes fiscales electrónicos (CFE) para puntos de venta",
		Version:       currentBuild().String(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVar(&opts.DataDir, "data-dir", "",
		"`CARPETA` de datos (si no se indica: $CFE_AGENT_DATA_DIR, y si no, <carpeta de configuración del usuario>/cfe-agent)")
	root.PersistentFlags().StringVar(&opts.Profile, "profile", "", "`PERFIL` a usar en lugar del activo")

	root.AddCommand(
		newVerifyCommand(&opts),
		newCAECommand(&opts),
		newContingencyCommand(&opts),
		newEnvelopeCommand(&opts),
		newArchiveCommand(&opts),
		newCertCommand(&opts),
		newProfileCommand(&opts),
		newDoctorCommand(&opts),
		newRenderCommand(&opts),
		newPrintersCommand(&opts),
		newAutostartCommand(&opts),
		newDiagnosticsCommand(&opts),
		newBackupCommand(&opts),
		newRestoreCommand(&opts),
		newLANCommand(),
		newCajaCommand(),
		newRecoverCommand(&opts),
		newVersionCommand(),
		newServiceCommand(&opts),
		newReportCommand(&opts), newNumbersCommand(&opts), newRatesCommand(&opts),
	)
	addServeCommands(root, &opts)
	addReportResendCommand(root, &opts)
	spanishCommandLine(root)
	return root
}

// cliLogger is the logger of one-shot commands: warnings and errors only, on stderr.
func cliLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}
