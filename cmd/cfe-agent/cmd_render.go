package main

import (
	"github.com/spf13/cobra"

	"github.com/cfe-agent/cfe-agent/app"
)

func newRenderCommand(opts *app.Options) *cobra.Command {
	var req app.RenderRequest
	cmd := &cobra.Command{
		Use:   "render [--variant NOMBRE] [--production] CFE.xml -o SALIDA.pdf",
		Short: "Genera la representación impresa (PDF) de un CFE firmado",
		Long: "Genera el PDF de un CFE firmado (también los de ejemplo de DGI) con una plantilla integrada " +
			"(Estandar, Rollo, Rollo58) o del perfil activo; sin --variant usa el formato del perfil. " +
			"Si el CFE es de la empresa del perfil, el pie lleva la fecha de ingreso al régimen o la resolución, " +
			"la web de la empresa y la constancia de IVA al día según el perfil. " +
			"Sin --production el PDF lleva la marca de agua de prueba, sin valor fiscal.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := requiredFlag(req.Out, "output", "indique el archivo PDF a escribir (-o SALIDA.pdf)"); err != nil {
				return err
			}
			req.File = args[0]
			res, err := app.Render(*opts, req)
			if err != nil {
				return err
			}
			res.Write(cmd.OutOrStdout())
			return nil
		},
	}
	cmd.Flags().StringVar(&req.Variant, "variant", "", "`PLANTILLA`: Estandar, Rollo, Rollo58 o una del perfil (si no se indica: el formato del perfil)")
	cmd.Flags().BoolVar(&req.Production, "production", false, "sin la marca de agua de prueba (solo para los CFE de la empresa con un perfil de producción)")
	cmd.Flags().StringVarP(&req.Out, "output", "o", "", "`ARCHIVO` PDF a escribir (obligatorio)")
	return cmd
}
