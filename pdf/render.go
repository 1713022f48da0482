package pdf

import (
	"fmt"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// Options are the choices of one rendering.
type Options struct {
	// Template is the layout; the zero Template is Estandar.
	Template Template
	// Production is false in every environment but production: then each
	// page carries WatermarkText.
	Production bool
	// Adenda is printed in a box titled "ADENDA"; it is not part of the
	// signed CFE. Line breaks are kept.
	Adenda string
	// Footer is the footer data the signed CFE does not carry.
	Footer Footer
}

// Footer is what the printed footer says about the emitter that its signed
// CFE does not: DGI asks for it (V24/V25 "Pie del comprobante"), and it
// comes from the emitter's configuration.
type Footer struct {
	// FechaEmisor is the date the emitter entered the CFE regime, printed
	// "Fecha emisor: dd/mm/aaaa".
	FechaEmisor cfe.Date
	// Resolucion is printed "Res. <Resolucion>" instead of FechaEmisor for
	// emitters incorporated by a resolution (e.g. "1234/2016").
	Resolucion string
	// WebURL is the company's web site, where e-Tickets are published and
	// verified ("Puede verificar comprobante en <WebURL>", printed without
	// http:// or https://); every other type prints www.dgi.gub.uy. An
	// e-Ticket without one prints www.dgi.gub.uy too.
	WebURL string
	// OmitIVAConstancia leaves out the "IVA al día" constancia even where
	// the CFE allows it (DGI: "cuando corresponda"; the emitter decides).
	OmitIVAConstancia bool
}

// Render returns the printed representation of a signed CFE as a PDF. The
// QR data and the security code come from the signature's DigestValue, so
// the document must be the signed XML exactly as issued.
//
// It returns EINVALID when signedXML is not a signed CFE or the template's
// font size or logo is unusable, and EINTERNAL when the PDF cannot be made.
func Render(signedXML []byte, opts Options) ([]byte, error) {
	l, err := newLayout(signedXML, &opts)
	if err != nil {
		return nil, err
	}
	return l.render(opts.Template.Logo)
}

// KeyedCopyText marks every page of a contingency receipt's copy (types
// 2xx, a paper form keyed in afterwards), in every environment: the paper
// form handed to the customer is the fiscal document (DGI, Formato del
// Mensaje de Respuesta v19, note 1: "El comprobante valido fiscalmente es
// el documento papel"), so its copy must never pass for one.
const KeyedCopyText = "COPIA DE CFC INGRESADO - NO ES DOCUMENTO FISCAL"

// PreviewText marks every page of a preview (RenderPreview), in every
// environment, on a line of text that text extraction returns exactly.
const PreviewText = "VISTA PREVIA - SIN VALOR FISCAL"

// Preview values of the pieces a document only gets when it is issued.
const (
	previewNumber   = "Vista previa: sin serie ni número"
	previewSeal     = "Sin valor"
	previewCAE      = "CAE: se asigna al emitir"
	previewCAEDates = "-"
)

// RenderPreview returns the printed representation of a document that was
// not issued: no serie, number, CAE or signature. Each page carries
// PreviewText (and, outside production, the test watermark as Render's);
// the serie and number read previewNumber, the QR code holds PreviewText
// instead of DGI's verification address and the security code reads
// previewSeal, so that nothing on it can pass for an issued CFE. Errors as
// Render's.
func RenderPreview(doc *cfe.CFE, opts Options) ([]byte, error) {
	l, err := buildLayout(doc, "", &opts, true)
	if err != nil {
		return nil, err
	}
	return l.render(opts.Template.Logo)
}

// render paints the layout; logo is the template's logo file.
func (l *layout) render(logo []byte) ([]byte, error) {
	pdf, err := paint(l.pages(), paintInfo{title: l.r.typeName + " " + l.r.number, created: l.created,
		logo: logo})
	if err != nil {
		return nil, &cfe.Error{Code: cfe.EINTERNAL, Op: "pdf.Render", Message: "no se pudo generar el PDF", Err: err}
	}
	return pdf, nil
}

// newLayout reads the signed CFE and checks the options.
func newLayout(signedXML []byte, opts *Options) (*layout, error) {
	c, err := cfe.ParseXML(signedXML)
	if err != nil {
		return nil, err
	}
	digest, err := cfe.DigestValue(signedXML)
	if err != nil {
		return nil, err
	}
	return buildLayout(c, digest, opts, false)
}

// buildLayout lays out c, whose signature's DigestValue is digest (none for
// a preview).
func buildLayout(c *cfe.CFE, digest string, opts *Options, preview bool) (*layout, error) {
	const op = "pdf.Render"
	var err error
	t := opts.Template
	var g geometry
	switch t.Base {
	case Rollo, Rollo58:
		g = rollGeometry(t.Base, t.FontSize)
	case Estandar, "":
		g = a4Geometry(t.FontSize)
	default:
		return nil, cfe.Invalid(op, cfe.FieldError{Campo: "plantilla.base",
			Mensaje: fmt.Sprintf("%q no es una plantilla base: use Estandar, Rollo o Rollo58", t.Base)})
	}
	if t.FontSize != 0 && (t.FontSize < MinFontSize || t.FontSize > MaxFontSize) {
		return nil, cfe.Invalid(op, cfe.FieldError{Campo: "plantilla.font_size",
			Mensaje: fmt.Sprintf("debe estar entre %g y %g puntos", MinFontSize, MaxFontSize)})
	}
	info, _ := c.Type().Info()
	l := &layout{geometry: g, isRoll: t.Base == Rollo || t.Base == Rollo58, test: !opts.Production,
		preview: preview, keyed: info.Contingency, created: c.TmstFirma}
	if t.Logo != nil {
		if l.logo, err = decodeLogo(t.Logo); err != nil {
			return nil, cfe.Invalid(op, cfe.FieldError{Campo: "plantilla.logo", Mensaje: err.Error()})
		}
	}
	l.r = newReceipt(c, digest, opts)
	if preview {
		l.r.number, l.r.securityCode, l.r.qrData = previewNumber, previewSeal, PreviewText
		l.r.cae, l.r.caeRange, l.r.caeExpiry = previewCAE, "", previewCAEDates
	}
	if l.qr, err = encodeQR(l.r.qrData); err != nil {
		return nil, &cfe.Error{Code: cfe.EINTERNAL, Op: op, Message: "no se pudo generar el código QR", Err: err}
	}
	return l, nil
}
