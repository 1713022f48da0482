package app

import (
	"context"
	"os"
	"runtime"
	"strings"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/escpos"
	"github.com/cfe-agent/cfe-agent/pdf"
	"github.com/cfe-agent/cfe-agent/printer"
	"github.com/cfe-agent/cfe-agent/printing"
	"github.com/cfe-agent/cfe-agent/profiles"
)

// newPrinting builds what POST /pdf needs from an open agent: its store, the
// profile's templates and printers. Folders of directory printers are made
// when missing. A profile whose templates or printers cannot be used (a
// logo that cannot be read) does not stop the agent from signing: the
// problem is logged, and /pdf answers 503 with it.
func newPrinting(a *Agent) PrintService {
	catalog, err := TemplateCatalog(a.Profile)
	if err != nil {
		a.Log.Warn("print templates not usable: printing is disabled", "err", err)
		return unavailablePrinting{err}
	}
	printers, err := PrinterManager(a.Profile)
	if err != nil {
		a.Log.Warn("printers not usable: printing is disabled", "err", err)
		return unavailablePrinting{err}
	}
	a.PrinterWatch = newPrinterWatch(a, printers)
	for alias, pr := range a.Profile.Printers {
		if pr.Backend == profiles.BackendDir {
			if err := os.MkdirAll(pr.Dir, 0o700); err != nil {
				a.Log.Warn("cannot create the folder of a directory printer", "printer", alias, "err", err)
			}
		}
	}
	return printing.New(printing.Config{
		Store:           a.DB,
		Templates:       catalog,
		Printers:        printers,
		DefaultTemplate: a.Profile.Print.FormatoRepImpresa,
		Production:      a.Profile.Environment == profiles.Produccion,
		Footer:          FooterOf(a.Profile),
		ESCPOS:          escposOptions(a.Profile),
	})
}

// PrintService renders and prints the printed representation of signed
// CFEs, in two steps (see localapi.Printing): printing.Service, or, when the
// profile's templates or printers cannot be used, one that refuses with the
// reason.
type PrintService interface {
	Render(ctx context.Context, ref printing.CFERef, variant string) (*printing.Document, error)
	// Load is Render without the PDF, which Print renders when its
	// printer needs one (printing.Service.Load).
	Load(ctx context.Context, ref printing.CFERef, variant string) (*printing.Document, error)
	Print(ctx context.Context, doc *printing.Document, printer string, fallbackCopies int) (printing.PrintResult, error)
	// PrintReport prints a plain report (the day's close) on the printer
	// called printer (printing.Service.PrintReport).
	PrintReport(ctx context.Context, r pdf.Report, printer, jobName string) (printing.PrintResult, error)
}

// escposOptions maps the options of the profile's ESC/POS printers onto the
// escpos package's, by alias.
func escposOptions(p profiles.Profile) map[string]escpos.Options {
	out := map[string]escpos.Options{}
	for alias, pr := range p.Printers {
		if pr.Protocol != profiles.ProtocolESCPOS {
			continue
		}
		e := pr.ESCPOS
		out[strings.ToLower(alias)] = escpos.Options{PaperMM: e.PaperMM, Columns: e.Columns, CodePage: e.CodePage,
			CodeTable: e.CodeTable, DPI: e.DPI, QR: escpos.QRMode(e.QR), Cut: escpos.CutMode(e.Cut),
			DrawerKick: e.DrawerKick}
	}
	return out
}

// FooterOf is what the profile says for the printed footer: the Fecha
// emisor or resolution, the company's web site and the IVA constancia.
func FooterOf(p profiles.Profile) pdf.Footer {
	return pdf.Footer{FechaEmisor: p.Company.FechaEmisor.Date, Resolucion: p.Company.Resolucion,
		WebURL: p.Company.WebURL, OmitIVAConstancia: !p.Print.ConstanciaIVAAlDia}
}

// TemplateCatalog maps the profile's custom templates onto pdf's; a
// template's leyenda prints one line per line of text.
func TemplateCatalog(p profiles.Profile) (*pdf.Catalog, error) {
	var custom []pdf.TemplateConfig
	for name, t := range p.Print.Templates {
		var legends []string
		if l := strings.TrimSpace(t.Leyenda); l != "" {
			legends = strings.Split(l, "\n")
		}
		custom = append(custom, pdf.TemplateConfig{Name: name, Base: string(t.Base), LogoPath: t.Logo,
			Legends: legends, FontSize: float64(t.FontSize)})
	}
	return pdf.NewCatalog(custom)
}

// PrinterManager maps the profile's printers onto the printer package. A
// name that is no alias is a CUPS queue (a Windows printer on Windows),
// reached on the local CUPS server.
func PrinterManager(p profiles.Profile) (*printer.Manager, error) {
	// POST /pdf answers once CUPS has handed the job to the printer, not
	// when the paper comes out (issue 19).
	cfg := printer.Config{Printers: make(map[string]printer.PrinterConfig, len(p.Printers)), RawQueues: printer.BackendCUPS,
		CUPS: printer.CUPSConfig{UntilAccepted: true}}
	if runtime.GOOS == "windows" {
		cfg.RawQueues = printer.BackendWindows
	}
	for alias, pr := range p.Printers {
		cfg.Printers[alias] = printer.PrinterConfig{Backend: printer.Backend(pr.Backend), Queue: pr.Queue, Dir: pr.Dir,
			SumatraPath: pr.SumatraPath, Media: pr.Media, Copies: pr.Copies, DefaultCopies: pr.DefaultCopies,
			Protocol: printer.Protocol(pr.Protocol), Address: pr.Address, Device: pr.Device,
			Status: pr.ESCPOS.StatusQuery(pr.Backend)}
	}
	return printer.NewManager(cfg)
}

// unavailablePrinting answers every print request with the reason printing
// could not be set up.
type unavailablePrinting struct{ err error }

func (u unavailablePrinting) Render(context.Context, printing.CFERef, string) (*printing.Document, error) {
	return nil, &cfe.Error{Code: cfe.EUNAVAILABLE, Err: u.err,
		Message: "la impresión no está disponible: revise las plantillas e impresoras del perfil (" +
			cfe.ErrorMessage(u.err) + ")"}
}

func (u unavailablePrinting) Load(ctx context.Context, ref printing.CFERef, variant string) (*printing.Document, error) {
	return u.Render(ctx, ref, variant)
}

func (u unavailablePrinting) Print(ctx context.Context, _ *printing.Document, _ string, _ int) (printing.PrintResult, error) {
	_, err := u.Render(ctx, printing.CFERef{}, "")
	return printing.PrintResult{}, err
}

func (u unavailablePrinting) PrintReport(ctx context.Context, _ pdf.Report, _, _ string) (printing.PrintResult, error) {
	_, err := u.Render(ctx, printing.CFERef{}, "")
	return printing.PrintResult{}, err
}
