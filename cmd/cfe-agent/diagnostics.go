package main

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/cfe-agent/cfe-agent/app"
	"github.com/cfe-agent/cfe-agent/localapi/localclient"
)

// newDiagnosticsCommand builds "cfe-agent diagnostics".
func newDiagnosticsCommand(opts *app.Options) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "diagnostics",
		Short: "Guarda un archivo .zip con registros, configuración (sin secretos) y estado para soporte técnico",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dataDir, cfg, _, err := app.LoadConfig(*opts)
			if err != nil {
				return err
			}
			src := app.DiagnosticsSource{Version: version, DataDir: dataDir, Config: cfg, Doctor: doctorTo(*opts)}
			// The running agent, if any, answers at the address of its run
			// file, else at the profile's.
			if p, ok := cfg.ActiveProfile(); ok {
				base := "http://" + p.Listen
				if info, ok := app.ReadRunFile(dataDir, cfg.Active); ok {
					base = info.BaseURL
				}
				if c, err := localclient.New(base, localclient.Options{}); err == nil {
					src.State = c.State
				}
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

// doctorTo runs the doctor's checks (cfe-agent doctor) with opts, writing
// them to w: the diagnostic archive's doctor.txt.
func doctorTo(opts app.Options) func(ctx context.Context, w io.Writer) {
	return func(ctx context.Context, w io.Writer) {
		d := &doctor{w: w}
		d.run(ctx, opts)
	}
}
