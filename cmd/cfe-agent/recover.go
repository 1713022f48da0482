package main

import (
	"github.com/spf13/cobra"

	"github.com/cfe-agent/cfe-agent/app"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

func newRecoverCommand(opts *app.Options) *cobra.Command {
	var req apitype.RecoverRequest
	cmd := &cobra.Command{
		Use:   "recuperar UUID",
		Short: "Recupera un comprobante dañado (en cuarentena) de una copia de seguridad o del servicio en la nube",
		Long: "Un comprobante firmado cuyo registro guardado está dañado no se envía ni se imprime: queda en cuarentena\n" +
			"(«cfe-agent doctor» y /state lo nombran). Este comando lo recupera de la primera copia que lo tiene intacto:\n" +
			"las copias indicadas con --copia o, si no se indica ninguna, las copias de seguridad que conoce el agente\n" +
			"(su carpeta backups y la carpeta backup.folder del perfil), de la más nueva a la más vieja, y después la\n" +
			"copia del servicio en la nube (salvo --sin-servicio). Antes de escribir comprueba que es el mismo\n" +
			"comprobante (uuid, número, registro, firma del XML, código de seguridad y QR). Vuelve a la cola de envíos\n" +
			"y el agente lo envía. Con el agente en ejecución lo hace el agente; si no, este comando.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			req.UUID = args[0]
			res, running, err := app.Recover(cmd.Context(), *opts, req, cliLogger())
			if err != nil {
				return err
			}
			app.WriteRecovered(cmd.OutOrStdout(), res, running)
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&req.Copias, "copia", nil, "`ARCHIVO` de copia de seguridad de donde recuperarlo (puede repetirse; si no se indica: las copias que conoce el agente)")
	cmd.Flags().BoolVar(&req.SinServicio, "sin-servicio", false, "no buscar la copia del servicio en la nube")
	return cmd
}
