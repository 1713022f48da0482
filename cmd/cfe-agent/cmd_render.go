package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/cfe-agent/cfe-agent/app"
	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/pdf"
	"github.com/cfe-agent/cfe-agent/profiles"
	"github.com/cfe-agent/cfe-agent/signer"
)

func newRenderCommand(opts *app.Options) *cobra.Command {
	var (
		variant    string
		production bool
		out        string
	)
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
			if err := requiredFlag(out, "output", "indique el archivo PDF a escribir (-o SALIDA.pdf)"); err != nil {
				return err
			}
			dataDir, cfg, _, err := app.LoadConfig(*opts)
			if err != nil {
				return err
			}
			p, ok := cfg.ActiveProfile()
			if !ok {
				return cfe.Errorf(cfe.ENOTFOUND, "el perfil %q no existe", cfg.Active)
			}
			catalog, err := app.TemplateCatalog(p.Resolve(dataDir))
			if err != nil {
				return err
			}
			if variant == "" {
				variant = p.Print.FormatoRepImpresa
			}
			t, err := catalog.Template(variant)
			if err != nil {
				return err
			}
			signed, err := os.ReadFile(args[0])
			if err != nil {
				return fmt.Errorf("no se puede leer %s: %w", args[0], app.UnwrapPathError(err))
			}
			// A file that is no CFE fails here, before --production could
			// blame its RUC.
			c, err := cfe.ParseXML(signed)
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			// The profile's footer data is its company's: another RUC's CFE
			// (a DGI sample) prints without it.
			var footer pdf.Footer
			note := ""
			own := c.Emisor.RUCEmisor == p.Company.RUC
			if own {
				footer = app.FooterOf(p)
			} else {
				note = fmt.Sprintf("; el RUC emisor %s no es el del perfil: el pie no lleva sus datos", c.Emisor.RUCEmisor)
			}
			if production {
				if err := mayOmitWatermark(signed, own, cfg.Active, p.Resolve(dataDir)); err != nil {
					return err
				}
			}
			doc, err := pdf.Render(signed, pdf.Options{Template: t, Production: production, Footer: footer})
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			if err := os.WriteFile(out, doc, 0o644); err != nil {
				return fmt.Errorf("no se puede escribir %s: %w", out, app.UnwrapPathError(err))
			}
			fmt.Fprintf(cmd.OutOrStdout(), "escrito %s: plantilla %s, %d bytes%s\n", out, t.Name, len(doc), note)
			return nil
		},
	}
	cmd.Flags().StringVar(&variant, "variant", "", "`PLANTILLA`: Estandar, Rollo, Rollo58 o una del perfil (si no se indica: el formato del perfil)")
	cmd.Flags().BoolVar(&production, "production", false, "sin la marca de agua de prueba (solo para los CFE de la empresa con un perfil de producción)")
	cmd.Flags().StringVarP(&out, "output", "o", "", "`ARCHIVO` PDF a escribir (obligatorio)")
	return cmd
}

// mayOmitWatermark says whether signed may be printed without the test
// watermark, which would make it pass for a fiscal document: only a CFE of the
// company of profile p (named name), own, signed with p's certificate, and p
// a production profile. The RUC alone is not enough: the company's own test
// CFEs carry it too, signed with another certificate.
func mayOmitWatermark(signed []byte, own bool, name string, p profiles.Profile) error {
	const rule = "--production solo vale para los CFE de la empresa de un perfil de producción, firmados con el certificado del perfil"
	switch {
	case p.Environment != profiles.Produccion:
		return cfe.Errorf(cfe.EINVALID, "%s (el perfil %q es del entorno %s); sin --production el PDF lleva la marca de agua de prueba",
			rule, name, p.Environment)
	case !own:
		return cfe.Errorf(cfe.EINVALID, "%s (el CFE no es de la empresa del perfil); sin --production el PDF lleva la marca de agua de prueba", rule)
	}
	s, err := app.LoadSigner(p.Certificate)
	if err == nil {
		_, err = signer.Verify(signed, signer.VerifyOptions{Certificate: s.Certificate()})
	}
	if err != nil {
		return cfe.Errorf(cfe.EINVALID, "%s: %s", rule, cfe.ErrorMessage(err))
	}
	return nil
}
