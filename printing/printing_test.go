package printing_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/pdf"
	"github.com/cfe-agent/cfe-agent/printer"
	"github.com/cfe-agent/cfe-agent/printing"
	"github.com/cfe-agent/cfe-agent/store"
)

var now = time.Date(2026, 5, 14, 15, 4, 5, 0, cfe.Montevideo)

// storedSample puts DGI's signed sample e-Factura A-1 into a real store, with
// an adenda, as the issuer would have, and returns the store.
func storedSample(t *testing.T) *store.DB {
	t.Helper()
	ctx := context.Background()
	xml, err := os.ReadFile(filepath.Join(testtool.SharedDir(t), "dgi", "samples", "extracted-cfe",
		"Sob_Ej_Mod_19072016__CFE_111_A1.xml"))
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(filepath.Join(t.TempDir(), "agent.db"), store.Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	err = db.PutRange(ctx, cfe.CAERange{RUC: "219999830019", Type: cfe.EFactura, Serie: "A", DNro: 1, HNro: 100,
		CAEID: "90160134272", Autorizado: cfe.Date{Year: 2016, Month: 1, Day: 5},
		Vencimiento: cfe.Date{Year: 2030, Month: 12, Day: 31}, Source: "manual"})
	if err != nil {
		t.Fatal(err)
	}
	r, err := db.Reserve(ctx, cfe.EFactura, cfe.DateOf(now))
	if err != nil {
		t.Fatal(err)
	}
	err = db.Commit(ctx, r, &cfe.Issued{UUID: "muestra-dgi", Type: r.Type, Serie: r.Serie, Nro: r.Nro,
		RangeID: r.Range.ID, CAE: r.Range.CAEData(), TmstFirma: now, XML: xml, Adenda: "Pedido 77\nEntregar en depósito"})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func newService(t *testing.T, db printing.Finder, defaultTemplate string) *printing.Service {
	t.Helper()
	templates, err := pdf.NewCatalog([]pdf.TemplateConfig{{Name: "ticket", Base: "Rollo",
		Legends: []string{"Gracias por su compra"}}})
	if err != nil {
		t.Fatal(err)
	}
	printers, err := printer.NewManager(printer.Config{Printers: map[string]printer.PrinterConfig{
		"archivo": {Backend: printer.BackendDir, Dir: t.TempDir(), Copies: map[cfe.Type]int{cfe.EFactura: 3}}}})
	if err != nil {
		t.Fatal(err)
	}
	return printing.New(printing.Config{Store: db, Templates: templates, Printers: printers,
		DefaultTemplate: defaultTemplate,
		Footer:          pdf.Footer{Resolucion: "798/2012", WebURL: "https://www.ejemplo.com.uy", OmitIVAConstancia: true}})
}

func text(t *testing.T, doc []byte) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "doc.pdf")
	if err := os.WriteFile(f, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(testtool.Require(t, "pdftotext"), "-enc", "UTF-8", f, "-").Output()
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func TestService_Render(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := newService(t, storedSample(t), "ticket")

	t.Run("by folio, with the profile's template and footer, the stored adenda and the watermark", func(t *testing.T) {
		doc, err := svc.Render(ctx, printing.CFERef{Type: cfe.EFactura, Serie: "a", Numero: 1}, "")
		if err != nil {
			t.Fatal(err)
		}
		if doc.Type != cfe.EFactura || doc.Serie != "A" || doc.Numero != 1 || doc.Template != "ticket" ||
			doc.Name() != "e-Factura A-1" {
			t.Fatalf("document %+v (%s)", doc, doc.Name())
		}
		s := text(t, doc.PDF)
		for _, want := range []string{"Gracias por su compra", "Pedido 77", "Entregar en depósito",
			"Representacion impresa de prueba sin valor fiscal", "Res. 798/2012", "www.dgi.gub.uy"} {
			if !strings.Contains(s, want) {
				t.Errorf("the PDF lacks %q:\n%s", want, s)
			}
		}
		// An e-Factura is verified at DGI, and this emitter prints no constancia.
		for _, absent := range []string{"ejemplo.com.uy", pdf.ConstanciaIVAalDia} {
			if strings.Contains(s, absent) {
				t.Errorf("the PDF shows %q:\n%s", absent, s)
			}
		}
	})

	t.Run("errors name what is wrong", func(t *testing.T) {
		_, err := svc.Render(ctx, printing.CFERef{UUID: "muestra-dgi"}, "Inexistente")
		if f := cfe.ErrorFields(err); cfe.ErrorCode(err) != cfe.EINVALID || len(f) != 1 || f[0].Campo != "variant" {
			t.Errorf("unknown template: %v, want EINVALID on variant", err)
		}
		if _, err := svc.Render(ctx, printing.CFERef{Type: cfe.EFactura, Serie: "A"}, ""); cfe.ErrorCode(err) != cfe.EINVALID {
			t.Errorf("a folio without number: %v, want EINVALID", err)
		}
		if _, err := svc.Render(ctx, printing.CFERef{UUID: "otra"}, ""); cfe.ErrorCode(err) != cfe.ENOTFOUND {
			t.Errorf("unknown uuid: %v, want ENOTFOUND", err)
		}
	})
}

func TestService_Print(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	svc := newService(t, storedSample(t), "")
	doc, err := svc.Render(ctx, printing.CFERef{UUID: "muestra-dgi"}, "")
	if err != nil {
		t.Fatal(err)
	}
	// The profile prints 3 e-Facturas on archivo; fallback_copies does not
	// override it.
	res, err := svc.Print(ctx, doc, "Archivo", 1)
	if err != nil || res.Copies != 3 || res.State != printer.StateCompleted {
		t.Fatalf("Print = %+v, %v; want 3 copies completed", res, err)
	}
	if _, err := svc.Print(ctx, doc, "otra", 1); cfe.ErrorCode(err) != cfe.ENOTFOUND {
		t.Fatalf("an unknown printer with no raw queues: %v, want ENOTFOUND", err)
	}
}
