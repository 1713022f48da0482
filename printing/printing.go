package printing

import (
	"context"
	"strings"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/escpos"
	"github.com/cfe-agent/cfe-agent/pdf"
	"github.com/cfe-agent/cfe-agent/printer"
)

// Finder reads signed CFEs; *store.DB implements it.
type Finder interface {
	// FindByUUID returns the CFE stored under uuid: ENOTFOUND when there is
	// none, EUNAVAILABLE when ctx is done.
	FindByUUID(ctx context.Context, uuid string) (*cfe.Issued, error)
	// FindByNumber returns the CFE of type t, serie and number nro:
	// ENOTFOUND when there is none, EUNAVAILABLE when ctx is done.
	FindByNumber(ctx context.Context, t cfe.Type, serie string, nro int64) (*cfe.Issued, error)
}

// Config configures a Service. Store, Templates and Printers are required.
type Config struct {
	Store     Finder
	Templates *pdf.Catalog
	Printers  *printer.Manager
	// DefaultTemplate is the template of requests that name none (the
	// profile's FormatoRepImpresa); "" means Estandar.
	DefaultTemplate string
	// Production is true only for a production profile; every other
	// document carries the test watermark.
	Production bool
	// Footer is the emitter's footer data (Fecha emisor or resolution,
	// web site, IVA constancia); see pdf.Footer.
	Footer pdf.Footer
	// ESCPOS are the options of the printers whose protocol is escpos, by
	// alias in lower case; a missing one prints with escpos's defaults.
	ESCPOS map[string]escpos.Options
}

// Service renders and prints stored CFEs. It is safe for concurrent use.
type Service struct{ cfg Config }

// New returns a Service over cfg's parts.
func New(cfg Config) *Service { return &Service{cfg: cfg} }

// Render finds the CFE ref names and renders it with the named template (""
// means DefaultTemplate). The adenda stored with the CFE is printed with
// it. It returns EINVALID for an unknown template (field variant) or a ref
// without uuid, type, serie and number; ENOTFOUND when the store has no
// such CFE; EUNAVAILABLE when the store cannot be read now; and EINTERNAL
// when the stored CFE cannot be rendered.
func (s *Service) Render(ctx context.Context, ref CFERef, variant string) (*Document, error) {
	doc, err := s.Load(ctx, ref, variant)
	if err != nil {
		return nil, err
	}
	if err := s.renderPDF(doc); err != nil {
		return nil, err
	}
	return doc, nil
}

// Load is Render without the PDF: it finds the CFE and checks the template
// (the same errors as Render's), and leaves doc.PDF nil. Print renders the
// PDF when the printer needs one; a thermal printer (ESC/POS) never does, so
// a caller that does not want the PDF back (POST /pdf answering JSON) spares
// its rendering.
func (s *Service) Load(ctx context.Context, ref CFERef, variant string) (*Document, error) {
	const op = "printing.Render"
	if strings.TrimSpace(variant) == "" {
		variant = s.cfg.DefaultTemplate
	}
	t, err := s.cfg.Templates.Template(variant)
	if err != nil {
		return nil, cfe.Invalid(op, cfe.FieldError{Campo: "variant",
			Mensaje: "la plantilla «" + variant + "» no existe: use Estandar, Rollo, Rollo58 o una plantilla del perfil"})
	}
	is, err := s.find(ctx, ref)
	if err != nil {
		return nil, err
	}
	return &Document{Type: is.Type, Serie: is.Serie, Numero: is.Nro, Template: t.Name,
		Signed: is.XML, Adenda: is.Adenda}, nil
}

// renderPDF sets doc.PDF, the CFE rendered with doc's template.
func (s *Service) renderPDF(doc *Document) error {
	const op = "printing.Render"
	t, err := s.cfg.Templates.Template(doc.Template)
	if err != nil {
		return &cfe.Error{Code: cfe.EINTERNAL, Op: op, Err: err, Message: "no se pudo generar el PDF del comprobante"}
	}
	b, err := pdf.Render(doc.Signed, pdf.Options{Template: t, Production: s.cfg.Production, Adenda: doc.Adenda,
		Footer: s.cfg.Footer})
	if err != nil {
		// The CFE was stored as signed: a document pdf cannot read is the
		// agent's fault, never the request's.
		return &cfe.Error{Code: cfe.EINTERNAL, Op: op, Err: err,
			Message: "no se pudo generar el PDF del comprobante"}
	}
	doc.PDF = b
	return nil
}

// find reads the CFE by uuid when ref has one, else by type, serie and number.
func (s *Service) find(ctx context.Context, ref CFERef) (*cfe.Issued, error) {
	if ref.UUID != "" {
		return s.cfg.Store.FindByUUID(ctx, ref.UUID)
	}
	if ref.Type == 0 || ref.Serie == "" || ref.Numero == 0 {
		return nil, cfe.Invalid("printing.Render", cfe.FieldError{Campo: "uuid",
			Mensaje: "indique el comprobante: uuid, o tipo_cfe, serie y numero"})
	}
	return s.cfg.Store.FindByNumber(ctx, ref.Type, strings.ToUpper(ref.Serie), ref.Numero)
}

// Print sends doc to the printer called name with the profile's copies for
// that printer and doc's type, else fallbackCopies, else 1. Its errors are
// printer.Manager.Print's: EINVALID for a bad job, ENOTFOUND for an unknown
// printer, EUNAVAILABLE when the printer refused, failed or cannot be
// reached (with the printer's reason).
//
// A printer whose protocol is escpos is sent the same receipt in ESC/POS
// (the content of the Rollo template, with doc's template's legends and web
// site) instead of the PDF; the result's Format says which. An ESC/POS
// receipt that cannot be made is EINTERNAL.
func (s *Service) Print(ctx context.Context, doc *Document, name string, fallbackCopies int) (PrintResult, error) {
	copies := s.cfg.Printers.Copies(name, doc.Type, fallbackCopies)
	if s.cfg.Printers.Protocol(name) == printer.ProtocolESCPOS {
		return s.printESCPOS(ctx, doc, name, copies)
	}
	if doc.PDF == nil { // Load's: the printer needs the PDF
		if err := s.renderPDF(doc); err != nil {
			return PrintResult{}, err
		}
	}
	res, err := s.cfg.Printers.Print(ctx, name, printer.Job{Name: doc.Name(), PDF: doc.PDF, Copies: copies})
	if err != nil {
		return PrintResult{}, err
	}
	return PrintResult{Printer: res.Printer, Copies: res.Copies, JobID: res.JobID, State: res.State,
		Format: FormatPDF}, nil
}

// printESCPOS renders doc's CFE in ESC/POS for the printer called name and
// sends it.
func (s *Service) printESCPOS(ctx context.Context, doc *Document, name string, copies int) (PrintResult, error) {
	const op = "printing.Print"
	data, err := s.escposOf(doc, name)
	if err != nil {
		return PrintResult{}, &cfe.Error{Code: cfe.EINTERNAL, Op: op, Err: err,
			Message: "no se pudo generar el ticket ESC/POS del comprobante"}
	}
	res, err := s.cfg.Printers.PrintRaw(ctx, name, printer.RawJob{Name: doc.Name(), Data: data, Copies: copies})
	if err != nil {
		return PrintResult{}, err
	}
	return PrintResult{Printer: res.Printer, Copies: res.Copies, JobID: res.JobID, State: res.State,
		Format: FormatESCPOS}, nil
}

// escposOf returns one copy of doc's receipt in ESC/POS for the printer
// called name: the model of doc's template (legends, web site), this
// service's environment and footer, and the printer's options.
func (s *Service) escposOf(doc *Document, name string) ([]byte, error) {
	t, err := s.cfg.Templates.Template(doc.Template)
	if err != nil {
		return nil, err
	}
	r, err := pdf.NewReceipt(doc.Signed, pdf.Options{Template: t, Production: s.cfg.Production, Adenda: doc.Adenda,
		Footer: s.cfg.Footer})
	if err != nil {
		return nil, err
	}
	return escpos.Render(r, s.cfg.ESCPOS[strings.ToLower(strings.TrimSpace(name))])
}
