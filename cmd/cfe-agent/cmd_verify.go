package main

import (
	"github.com/spf13/cobra"

	"github.com/cfe-agent/cfe-agent/app"
	"github.com/cfe-agent/cfe-agent/verifier"
)

func newVerifyCommand(opts *app.Options) *cobra.Command {
	var (
		certFiles      []string
		profileCert    bool
		allowUntrusted bool
		skipXSD        bool
	)
	cmd := &cobra.Command{
		Use:   "verify [--cert ARCHIVO]... [--profile-cert] [--allow-untrusted] ARCHIVO.xml...",
		Short: "Verifica firma, certificado del firmante y esquema XSD de CFE firmados, archivos CAE, reportes y sobres",
		Long: "Verifica cada archivo (un CFE firmado, un archivo CAE de DGI, un reporte diario o un sobre de CFE, a DGI o a un receptor, " +
			"cuyos CFE se verifican uno por uno con el certificado de la carátula): la firma XML-DSig y su digest; " +
			"que el certificado que firmó sea del RUC emisor del CFE o del reporte (de DGI en un archivo CAE) y " +
			"estuviera vigente en la fecha de firma que el documento indica (TmstFirma), no hoy; que su cadena llegue, " +
			"vigente en esa fecha, a la Autoridad Certificadora Raíz Nacional de Uruguay o a otra autoridad " +
			"acreditada que el programa incluye; y el esquema XSD oficial de DGI (incluida la firma ds:Signature), " +
			"con el validador que el programa incluye, sin programas externos. Si xmllint está instalado también " +
			"se consulta como segunda opinión: si los dos no coinciden el archivo falla y la línea dice qué dijo cada uno. " +
			"Con --cert la firma debe ser de ese certificado (o de uno de ellos, si se indica varias veces), y ese " +
			"certificado se acepta aunque su cadena no llegue a una autoridad acreditada; --profile-cert hace lo " +
			"mismo con el certificado del perfil activo (así se verifican los CFE de prueba del agente, firmados con " +
			"un certificado autofirmado). Con --allow-untrusted una cadena no confiable se informa como advertencia " +
			"y no como falla; una firma inválida, otro RUC o un certificado no vigente al firmar fallan siempre. " +
			"Imprime una línea por archivo (y una por CFE de un sobre) y termina con estado 0 solo si todos pasan.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg := verifier.Config{AllowUntrusted: allowUntrusted, SkipXSD: skipXSD}
			for _, f := range certFiles {
				c, err := verifier.ReadCertificate(f)
				if err != nil {
					return err
				}
				cfg.Pinned = append(cfg.Pinned, verifier.Pin{Cert: c, By: "--cert " + f})
			}
			if profileCert {
				c, err := app.ProfileCertificate(*opts)
				if err != nil {
					return err
				}
				cfg.Pinned = append(cfg.Pinned, verifier.Pin{Cert: c, By: "--profile-cert"})
			}
			var err error
			if cfg.Trust, err = verifier.EmbeddedTrust(); err != nil {
				return err
			}
			v, err := verifier.New(cfg)
			if err != nil {
				return err
			}
			defer v.Close()
			failed := 0
			for _, f := range args {
				res := v.File(f)
				res.Write(cmd.OutOrStdout())
				if !res.OK {
					failed++
				}
			}
			if failed > 0 {
				return errChecksFailed{failed}
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&certFiles, "cert", nil, "`CERTIFICADO` (PEM o DER) que debe haber hecho la firma; se confía en él aunque su cadena no llegue a una autoridad acreditada (repítalo para varios)")
	cmd.Flags().BoolVar(&profileCert, "profile-cert", false, "como --cert, con el certificado del perfil activo (los CFE del propio agente, también los de prueba)")
	cmd.Flags().BoolVar(&allowUntrusted, "allow-untrusted", false, "informa una cadena que no llega a una autoridad acreditada como advertencia, no como falla")
	cmd.Flags().BoolVar(&skipXSD, "skip-xsd", false, "no hace la comprobación contra el XSD de DGI")
	return cmd
}
