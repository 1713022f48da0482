package app

import (
	"fmt"
	"io"
	"os"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/pdf"
	"github.com/cfe-agent/cfe-agent/profiles"
	"github.com/cfe-agent/cfe-agent/signer"
)

// RenderRequest is "cfe-agent render": the printed representation of a
// signed CFE file, written to a PDF file.
type RenderRequest struct {
	File    string // the signed CFE
	Out     string // the PDF to write
	Variant string // the template: a built-in one or the profile's; "" for the profile's format
	// Production leaves out the test watermark: only for the company's own
	// CFEs, signed with a production profile's certificate.
	Production bool
}

// Rendered is what Render wrote.
type Rendered struct {
	Out      string
	Template string
	Bytes    int
	// Foreign: the CFE is of another RUC than the profile's (a DGI sample),
	// and its footer carries none of the profile's data.
	Foreign   bool
	RUCEmisor string
}

// Write writes the technician's line of the PDF written.
func (r *Rendered) Write(w io.Writer) {
	note := ""
	if r.Foreign {
		note = fmt.Sprintf("; el RUC emisor %s no es el del perfil: el pie no lleva sus datos", r.RUCEmisor)
	}
	fmt.Fprintf(w, "escrito %s: plantilla %s, %d bytes%s\n", r.Out, r.Template, r.Bytes, note)
}

// Render writes the PDF of a signed CFE (DGI's samples too) with a template
// of the active profile, its footer data when the CFE is the profile's
// company's, and the test watermark unless req.Production (MayOmitWatermark).
func Render(opts Options, req RenderRequest) (*Rendered, error) {
	_, cfg, p, err := ActiveProfile(opts)
	if err != nil {
		return nil, err
	}
	catalog, err := TemplateCatalog(p)
	if err != nil {
		return nil, err
	}
	variant := req.Variant
	if variant == "" {
		variant = p.Print.FormatoRepImpresa
	}
	t, err := catalog.Template(variant)
	if err != nil {
		return nil, err
	}
	signed, err := os.ReadFile(req.File)
	if err != nil {
		return nil, fmt.Errorf("no se puede leer %s: %w", req.File, UnwrapPathError(err))
	}
	// A file that is no CFE fails here, before --production could blame
	// its RUC.
	c, err := cfe.ParseXML(signed)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", req.File, err)
	}
	// The profile's footer data is its company's: another RUC's CFE (a DGI
	// sample) prints without it.
	res := &Rendered{Out: req.Out, Template: t.Name, RUCEmisor: c.Emisor.RUCEmisor, Foreign: c.Emisor.RUCEmisor != p.Company.RUC}
	var footer pdf.Footer
	if !res.Foreign {
		footer = FooterOf(p)
	}
	if req.Production {
		if err := MayOmitWatermark(signed, !res.Foreign, cfg.Active, p); err != nil {
			return nil, err
		}
	}
	doc, err := pdf.Render(signed, pdf.Options{Template: t, Production: req.Production, Footer: footer})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", req.File, err)
	}
	if err := os.WriteFile(req.Out, doc, 0o644); err != nil {
		return nil, fmt.Errorf("no se puede escribir %s: %w", req.Out, UnwrapPathError(err))
	}
	res.Bytes = len(doc)
	return res, nil
}

// MayOmitWatermark says whether signed may be printed without the test
// watermark, which would make it pass for a fiscal document: only a CFE of
// the company of profile p (named name), own, signed with p's certificate,
// and p a production profile. The RUC alone is not enough: the company's
// own test CFEs carry it too, signed with another certificate.
func MayOmitWatermark(signed []byte, own bool, name string, p profiles.Profile) error {
	const rule = "--production solo vale para los CFE de la empresa de un perfil de producción, firmados con el certificado del perfil"
	switch {
	case p.Environment != profiles.Produccion:
		return cfe.Errorf(cfe.EINVALID, "%s (el perfil %q es del entorno %s); sin --production el PDF lleva la marca de agua de prueba",
			rule, name, p.Environment)
	case !own:
		return cfe.Errorf(cfe.EINVALID, "%s (el CFE no es de la empresa del perfil); sin --production el PDF lleva la marca de agua de prueba", rule)
	}
	s, err := LoadSigner(p.Certificate)
	if err == nil {
		_, err = signer.Verify(signed, signer.VerifyOptions{Certificate: s.Certificate()})
	}
	if err != nil {
		return cfe.Errorf(cfe.EINVALID, "%s: %s", rule, cfe.ErrorMessage(err))
	}
	return nil
}
