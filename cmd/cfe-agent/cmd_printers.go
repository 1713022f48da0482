package main

import (
	"github.com/spf13/cobra"

	"github.com/cfe-agent/cfe-agent/app"
)

func newPrintersCommand(opts *app.Options) *cobra.Command {
	return &cobra.Command{
		Use:   "printers",
		Short: "Lista las impresoras del perfil activo y las del equipo (CUPS o Windows) con su estado",
		Long: "Lista las impresoras configuradas en el perfil (alias, tipo, destino, copias) y las del equipo: " +
			"las colas del servidor CUPS (el que indica CUPS_SERVER, o el local) o, en Windows, las del spooler, " +
			"con su estado; POST /pdf acepta como impresora un alias o el nombre de una de ellas. " +
			"GET /printers da lo mismo en JSON.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			l, err := app.ListPrinters(cmd.Context(), *opts)
			if err != nil {
				return err
			}
			return l.Write(cmd.OutOrStdout())
		},
	}
}
