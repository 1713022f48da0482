package main

import (
	"os"

	"github.com/spf13/cobra"

	"github.com/cfe-agent/cfe-agent/app"
	"github.com/cfe-agent/cfe-agent/profiles"
)

func newCertCommand(opts *app.Options) *cobra.Command {
	cmd := &cobra.Command{Use: "cert", Short: "Certificado de firma de la empresa"}
	var password string
	imp := &cobra.Command{
		Use:   "import FILE.p12",
		Short: "Importa el certificado de firma (.p12/.pfx) al perfil activo",
		Long: "Comprueba el archivo (contraseña, vigencia, RUC de la empresa), lo copia a la carpeta de datos " +
			"y lo configura en el perfil. La contraseña se toma de --password o de CFE_AGENT_CERTIFICATE_PASSWORD.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if password == "" {
				password = os.Getenv(profiles.EnvPrefix + "CERTIFICATE_PASSWORD")
			}
			res, err := app.ImportCertificate(*opts, args[0], password)
			if err != nil {
				return err
			}
			res.Write(cmd.OutOrStdout())
			return nil
		},
	}
	imp.Flags().StringVar(&password, "password", "", "`CONTRASEÑA` del archivo PKCS#12 (si no se indica: CFE_AGENT_CERTIFICATE_PASSWORD)")
	cmd.AddCommand(imp, &cobra.Command{
		Use:   "show",
		Short: "Muestra el certificado de firma del perfil activo",
		Long: "Muestra el certificado de firma del perfil activo. Con el agente en ejecución muestra el que el " +
			"agente usa (leído de su módulo local); si no, el del archivo que indica el perfil.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			view, live, err := app.ShowCertificate(cmd.Context(), *opts, cliLogger())
			if live != nil {
				live.Note(cmd.ErrOrStderr())
			}
			if err != nil {
				return err
			}
			view.Write(cmd.OutOrStdout())
			return nil
		},
	})
	return cmd
}
