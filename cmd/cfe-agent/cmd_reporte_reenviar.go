package main

import (
	"github.com/spf13/cobra"

	"github.com/cfe-agent/cfe-agent/app"
)

// addReportResendCommand adds "reporte reenviar" under the "reporte"
// command, making a bare "reporte" when there is none yet.
func addReportResendCommand(root *cobra.Command, opts *app.Options) {
	var parent *cobra.Command
	for _, c := range root.Commands() {
		if c.Name() == "reporte" {
			parent = c
		}
	}
	if parent == nil {
		parent = &cobra.Command{Use: "reporte", Short: "El reporte diario de CFE a DGI", Args: cobra.NoArgs}
		root.AddCommand(parent)
	}
	parent.AddCommand(newReportResendCommand(opts))
}

// newReportResendCommand is "reporte reenviar --fecha D" (direct mode).
func newReportResendCommand(opts *app.Options) *cobra.Command {
	var fecha string
	cmd := &cobra.Command{
		Use:   "reenviar --fecha AAAA-MM-DD",
		Short: "Reenvía corregido a DGI el reporte diario de un día (modo directo)",
		Long: "Arma de nuevo el reporte diario de ese día con los comprobantes y números anulados que el agente tiene hoy,\n" +
			"con secuencia de envío (SecEnvio) una más que el último enviado, y lo envía a DGI; cuando DGI lo recibe, el\n" +
			"anterior queda reemplazado (FR). Se usa cuando DGI rechazó el reporte (BR) o encontró inconsistencias (ER):\n" +
			"«cfe-agent doctor» y la página de estado muestran el estado de cada día. Con el agente en ejecución lo hace el\n" +
			"agente y lo envía enseguida; si no, queda guardado y el agente lo envía cuando se inicie. No se reenvía mientras\n" +
			"el último reporte del día no tenga respuesta de DGI.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			res, running, err := app.ResendReport(cmd.Context(), *opts, fecha, cliLogger())
			if err != nil {
				return err
			}
			app.WriteReportResent(cmd.OutOrStdout(), res, running)
			return nil
		},
	}
	cmd.Flags().StringVar(&fecha, "fecha", "", "`FECHA` del reporte (AAAA-MM-DD, hora de Montevideo)")
	_ = cmd.MarkFlagRequired("fecha")
	return cmd
}
