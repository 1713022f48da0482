package localapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"sync"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool/thermal"
	"github.com/cfe-agent/cfe-agent/localapi"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
	"github.com/cfe-agent/cfe-agent/pdf"
	"github.com/cfe-agent/cfe-agent/printer"
	"github.com/cfe-agent/cfe-agent/printing"
)

// pdfWatch is the real printing service, watched: after each Print it
// records whether the document had a PDF (rendered by Render, or by Print
// for a printer that needs one).
type pdfWatch struct {
	*printing.Service
	mu       sync.Mutex
	withPDF  []bool
	rendered int // Render calls (the PDF rendered before printing)
}

func (w *pdfWatch) Render(ctx context.Context, ref printing.CFERef, variant string) (*printing.Document, error) {
	w.mu.Lock()
	w.rendered++
	w.mu.Unlock()
	return w.Service.Render(ctx, ref, variant)
}

func (w *pdfWatch) Print(ctx context.Context, doc *printing.Document, name string, n int) (printing.PrintResult, error) {
	res, err := w.Service.Print(ctx, doc, name, n)
	w.mu.Lock()
	w.withPDF = append(w.withPDF, doc.PDF != nil)
	w.mu.Unlock()
	return res, err
}

// last returns whether the last printed document had a PDF, and how many
// times a PDF was rendered before printing.
func (w *pdfWatch) last() (hadPDF bool, rendered int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.withPDF) > 0 && w.withPDF[len(w.withPDF)-1], w.rendered
}

// TestPDF_JSONAnswer: POST /pdf with "Accept: application/json" answers the
// print result alone, in JSON (apitype.PrintResult, with the same X-CFE-*
// headers), and renders no PDF when the printer is a thermal one (ESC/POS):
// the printer still gets the receipt. A folder printer still gets its PDF.
// Without that preference — no Accept, or a library's default that ranks
// */* as high as JSON — the answer is the PDF, as before.
func TestPDF_JSONAnswer(t *testing.T) { // not parallel: startServer sets TZ
	db, iss := signingParts(t, now.AddDate(0, -1, 0))
	thermalPrinter := &thermal.Printer{}
	folder := t.TempDir()
	printers, err := printer.NewManager(printer.Config{Printers: map[string]printer.PrinterConfig{
		"termica": {Backend: printer.BackendTCP, Protocol: printer.ProtocolESCPOS, Address: thermalPrinter.Listen(t), Status: true},
		"cocina":  {Backend: printer.BackendDir, Dir: folder},
	}})
	if err != nil {
		t.Fatal(err)
	}
	templates, err := pdf.NewCatalog(nil)
	if err != nil {
		t.Fatal(err)
	}
	watch := &pdfWatch{Service: printing.New(printing.Config{Store: db, Templates: templates, Printers: printers, DefaultTemplate: "Rollo"})}
	ts := startServer(t, func(c *localapi.ServerConfig) { c.Issuer, c.Printing = iss, watch })
	a := &agent{testServer: ts, db: db}
	if status, b := a.sign(t, ticket("venta-json")); status != http.StatusOK {
		t.Fatalf("signing: %d %s", status, b)
	}
	post := func(printerName, accept string) (response, []byte) {
		return a.send(t, request{method: http.MethodPost, path: "/pdf",
			headers: map[string]string{"Content-Type": "application/json", "Accept": accept},
			body:    jsonBody(`{"uuid":"venta-json","impresora":"` + printerName + `"}`)})
	}
	cuts := func() int { return bytes.Count(thermalPrinter.Received(), []byte{0x1d, 'V', 66}) }

	// JSON to the thermal printer: no PDF at all.
	resp, b := post("termica", "application/json")
	var res apitype.PrintResult
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/json; charset=utf-8" || json.Unmarshal(b, &res) != nil {
		t.Fatalf("JSON to the thermal printer: %d %s: %.300s", resp.StatusCode, resp.Header.Get("Content-Type"), b)
	}
	want := apitype.PrintResult{OK: true, Comprobante: "e-Ticket A-1", TipoCFE: cfe.ETicket, Serie: "A", Numero: 1, Plantilla: "Rollo",
		Impresora: "termica", Copias: 1, Estado: resp.Header.Get("X-CFE-Estado"), Formato: "escpos"}
	if res != want || (res.Estado != "completed" && res.Estado != "processing") {
		t.Errorf("print result %+v, want %+v", res, want)
	}
	if resp.Header.Get("X-CFE-Formato") != "escpos" || resp.Header.Get("X-CFE-Copias") != "1" || resp.Header.Get("Vary") != "Accept" {
		t.Errorf("headers %v", resp.Header)
	}
	// The answer is what openapi.json says it is (an independent validator).
	answer := t.TempDir() + "/print-result.json"
	if err := os.WriteFile(answer, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if v := validateWithJSONSchema(t, "PrintResult", []string{answer}); v[answer] != "OK" {
		t.Errorf("the JSON answer does not match openapi.json's PrintResult: %s", v[answer])
	}
	if hadPDF, rendered := watch.last(); hadPDF || rendered != 0 {
		t.Errorf("a PDF was rendered for a JSON answer on a thermal printer (document had a PDF: %v; renders: %d)", hadPDF, rendered)
	}
	if cuts() != 1 {
		t.Errorf("the thermal printer cut %d receipts, want 1", cuts())
	}

	// JSON to a folder printer: the printer needs the PDF, the caller does not get it.
	resp, b = post("cocina", "application/json")
	if err := json.Unmarshal(b, &res); err != nil || resp.StatusCode != http.StatusOK || res.Formato != "pdf" || res.Impresora != "cocina" {
		t.Fatalf("JSON to the folder printer: %d %+v %.300s", resp.StatusCode, res, b)
	}
	if hadPDF, _ := watch.last(); !hadPDF {
		t.Error("the folder printer got no PDF")
	}
	files, _ := os.ReadDir(folder)
	if len(files) != 1 {
		t.Fatalf("the folder has %d files, want the printed PDF", len(files))
	}
	if pdfBytes, err := os.ReadFile(folder + "/" + files[0].Name()); err != nil || !bytes.HasPrefix(pdfBytes, []byte("%PDF-")) {
		t.Errorf("the folder printer's file is not a PDF (%v)", err)
	}

	// Today's answer stays the default.
	for _, accept := range []string{"", "application/pdf", "application/json, text/plain, */*", "*/*", "application/json;q=0.5, application/pdf"} {
		resp, b = post("termica", accept)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/pdf" || !bytes.HasPrefix(b, []byte("%PDF-")) {
			t.Errorf("Accept %q: %d %s, want the PDF", accept, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
	}
	if cuts() != 6 {
		t.Errorf("the thermal printer cut %d receipts, want 6", cuts())
	}

	// Errors keep their JSON shape.
	resp, b = post("no-existe", "application/json")
	if resp.StatusCode != http.StatusBadGateway || !bytes.Contains(b, []byte(`"ok":false`)) {
		t.Errorf("JSON to an unknown printer: %d %.200s", resp.StatusCode, b)
	}
}
