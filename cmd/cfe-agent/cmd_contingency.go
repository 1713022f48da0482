package main

import (
	"github.com/spf13/cobra"

	"github.com/cfe-agent/cfe-agent/app"
)

// newContingencyCommand is "contingencia": the paper contingency receipts
// (CFC, types 2xx) keyed in after the shop could issue again
// (docs/contingencia.md).
func newContingencyCommand(opts *app.Options) *cobra.Command {
	cmd := &cobra.Command{Use: "contingencia", Short: "Comprobantes de contingencia en papel (CFC, tipos 2xx) ingresados después"}
	var file string
	ingresar := &cobra.Command{
		Use:   "ingresar --archivo ARCHIVO",
		Short: "Ingresa en lote comprobantes de contingencia en papel: todos o ninguno",
		Long: "Ingresa en lote los comprobantes de contingencia en papel (tipos 201 a 282) que el archivo describe:\n" +
			"una lista JSON de solicitudes de firma de /sign-cfe (o una por línea), cada una con el tipo, la serie\n" +
			"(idDoc.serie), el número (idDoc.numero) y la fecha (idDoc.fechaEmision) impresos en el formulario, y su uuid.\n" +
			"Se revisan todas antes de firmar ninguna: si una no se puede ingresar, no se ingresa ninguna y el informe\n" +
			"dice por qué, línea por línea. Volver a ingresar el mismo archivo no ingresa nada dos veces (mismo uuid).\n" +
			"Con el agente en ejecución se hace a través de él; si no, sobre el archivo de datos.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			res, err := app.KeyInFile(cmd.Context(), *opts, file, cliLogger())
			if err != nil {
				return err
			}
			app.WriteKeyInResult(cmd.OutOrStdout(), res)
			if !res.OK {
				return errChecksFailed{n: len(res.Lineas)}
			}
			return nil
		},
	}
	ingresar.Flags().StringVar(&file, "archivo", "", "`ARCHIVO` JSON con las solicitudes de firma de los formularios (obligatorio)")
	_ = ingresar.MarkFlagRequired("archivo")
	cmd.AddCommand(ingresar)
	return cmd
}
