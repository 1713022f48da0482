package printing_test

import (
	"context"
	"strings"
	"testing"

	"golang.org/x/text/encoding/charmap"

	"github.com/cfe-agent/cfe-agent/escpos"
	"github.com/cfe-agent/cfe-agent/internal/testtool/thermal"
	"github.com/cfe-agent/cfe-agent/pdf"
	"github.com/cfe-agent/cfe-agent/printer"
	"github.com/cfe-agent/cfe-agent/printing"
)

// TestService_PrintESCPOS prints on a thermal printer: it receives the
// receipt in ESC/POS in its code page, with what the PDF of the same
// template shows (legends, footer, adenda, watermark), and the result says
// escpos.
func TestService_PrintESCPOS(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake := &thermal.Printer{}
	templates, err := pdf.NewCatalog([]pdf.TemplateConfig{{Name: "ticket", Base: "Rollo",
		Legends: []string{"Gracias por su compra"}}})
	if err != nil {
		t.Fatal(err)
	}
	printers, err := printer.NewManager(printer.Config{Printers: map[string]printer.PrinterConfig{
		"termica": {Backend: printer.BackendTCP, Protocol: printer.ProtocolESCPOS, Address: fake.Listen(t), Status: true}}})
	if err != nil {
		t.Fatal(err)
	}
	svc := printing.New(printing.Config{Store: storedSample(t), Templates: templates, Printers: printers,
		Footer: pdf.Footer{Resolucion: "798/2012"},
		ESCPOS: map[string]escpos.Options{"termica": {CodePage: "cp850", PaperMM: 58}}})
	doc, err := svc.Render(ctx, printing.CFERef{UUID: "muestra-dgi"}, "ticket")
	if err != nil {
		t.Fatal(err)
	}
	res, err := svc.Print(ctx, doc, "Termica", 1)
	if err != nil {
		t.Fatalf("Print: %v", err)
	}
	if res.Format != printing.FormatESCPOS || res.Copies != 1 || res.State != printer.StateProcessing {
		t.Errorf("result %+v", res)
	}
	text := thermal.Text(t, fake.Received(), charmap.CodePage850)
	flat := strings.Join(strings.Fields(text), " ")
	for _, want := range []string{"e-Factura", "Serie A Nº 1", "Gracias por su compra", "Res. 798/2012",
		"Pedido 77 Entregar en depósito", "Representacion impresa de prueba sin valor fiscal"} {
		if !strings.Contains(flat, want) {
			t.Errorf("the receipt lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("decoded:\n%s", text)
	}
}
