package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/cfe-agent/cfe-agent/app"
)

// newDiagnosticsCommand builds "cfe-agent diagnostics".
func newDiagnosticsCommand(opts *app.Options) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "diagnostics",
		Short: "Guarda un archivo .zip con registros, configuración (sin secretos) y estado para soporte técnico",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			src, err := app.CommandDiagnostics(*opts, version, doctorConfig(*opts))
			if err != nil {
				return err
			}
			path, err := app.ExportDiagnostics(cmd.Context(), src, output)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), path)
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "`ARCHIVO` zip a escribir (si no se indica: <carpeta de datos>/diagnostics/cfe-agent-diagnostico-<fecha>.zip)")
	return cmd
}
