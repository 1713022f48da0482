package localapi_test

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/text/encoding/charmap"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/escpos"
	"github.com/cfe-agent/cfe-agent/internal/testtool/thermal"
	"github.com/cfe-agent/cfe-agent/localapi"
	"github.com/cfe-agent/cfe-agent/pdf"
	"github.com/cfe-agent/cfe-agent/printer"
	"github.com/cfe-agent/cfe-agent/printing"
)

// escposAgent is the real printing path to thermal printers: the signing
// parts, the printing service, and fake ESC/POS printers on loopback TCP
// behind the local module. The store holds one signed e-Ticket, A-1, uuid
// venta-0001, adenda "Mesa 4", whose QR data is qr.
type escposAgent struct {
	*agent
	printers map[string]*thermal.Printer // alias → its fake printer
	qr       string
}

// startESCPOSAgent starts an escposAgent whose printers are:
//   - termica: 80 mm, status asked, 2 copies of e-Tickets, drawer kick;
//   - termica58: 58 mm, raster QR, status asked;
//   - sin-papel: a printer out of paper;
//   - cocina: a folder of PDFs.
func startESCPOSAgent(t testing.TB) *escposAgent {
	t.Helper()
	db, iss := signingParts(t, now.AddDate(0, -1, 0))
	a := &escposAgent{printers: map[string]*thermal.Printer{"termica": {}, "termica58": {}, "sin-papel": {PaperEnd: true}}}
	tcp := func(alias string, copies map[cfe.Type]int) printer.PrinterConfig {
		return printer.PrinterConfig{Backend: printer.BackendTCP, Protocol: printer.ProtocolESCPOS,
			Address: a.printers[alias].Listen(t), Status: true, Copies: copies}
	}
	printers, err := printer.NewManager(printer.Config{Printers: map[string]printer.PrinterConfig{
		"termica":   tcp("termica", map[cfe.Type]int{cfe.ETicket: 2}),
		"termica58": tcp("termica58", nil),
		"sin-papel": tcp("sin-papel", nil),
		"cocina":    {Backend: printer.BackendDir, Dir: t.TempDir()},
	}})
	if err != nil {
		t.Fatal(err)
	}
	templates, err := pdf.NewCatalog(nil)
	if err != nil {
		t.Fatal(err)
	}
	svc := printing.New(printing.Config{Store: db, Templates: templates, Printers: printers, DefaultTemplate: "Rollo",
		ESCPOS: map[string]escpos.Options{
			"termica":   {DrawerKick: true},
			"termica58": {PaperMM: 58, QR: escpos.QRRaster},
		}})
	ts := startServer(t, func(c *localapi.ServerConfig) {
		c.Issuer, c.Printing = iss, svc
	})
	a.agent = &agent{testServer: ts, db: db}
	status, b := a.sign(t, ticket("venta-0001"))
	if status != http.StatusOK {
		t.Fatalf("signing the e-Ticket to print: %d %s", status, b)
	}
	a.qr = signResponse(t, b).DatosQR
	return a
}

// printOn posts a print of venta-0001 on printer alias.
func (a *escposAgent) printOn(t testing.TB, alias string) (response, []byte) {
	t.Helper()
	return a.send(t, request{method: http.MethodPost, path: "/pdf",
		headers: map[string]string{"Content-Type": "application/json"},
		body:    jsonBody(`{"uuid":"venta-0001","impresora":"` + alias + `"}`)})
}

// received returns what the printer of alias has read. It has read the
// whole job when POST /pdf answers: the printer answers the status query
// that follows the job only after reading the bytes before it.
func (a *escposAgent) received(alias string) []byte { return a.printers[alias].Received() }

// TestPDF_ESCPOS prints through POST /pdf on thermal printers: the answer
// is still the PDF, X-CFE-Formato says escpos, and the printer received the
// receipt in ESC/POS (decoded by escpos-tools) with its copies, the QR
// code's data and the drawer pulse.
func TestPDF_ESCPOS(t *testing.T) {
	a := startESCPOSAgent(t)

	t.Run("80 mm", func(t *testing.T) {
		resp, b := a.printOn(t, "termica")
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/pdf" ||
			!bytes.HasPrefix(b, []byte("%PDF-")) {
			t.Fatalf("POST /pdf: %d %s, want 200 with the PDF", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		h := resp.Header
		if h.Get("X-CFE-Formato") != "escpos" || h.Get("X-CFE-Copias") != "2" || h.Get("X-CFE-Estado") != "processing" ||
			h.Get("X-CFE-Impresora") != "termica" {
			t.Errorf("headers %v", h)
		}
		got := a.received("termica")
		// Two copies, each from reset (ESC @) to its cut (GS V).
		if n := bytes.Count(got, []byte{0x1b, '@'}); n != 2 {
			t.Errorf("%d receipts received, want 2", n)
		}
		if n := bytes.Count(got, []byte{0x1b, 'p', 0}); n != 2 {
			t.Errorf("%d drawer pulses, want 2", n)
		}
		if !bytes.Contains(got, []byte(a.qr)) || !strings.HasPrefix(a.qr, "https://www.efactura.dgi.gub.uy/") {
			t.Errorf("the receipt does not carry the QR data %q", a.qr)
		}
		text := thermal.Text(t, got, charmap.CodePage858)
		flat := strings.Join(strings.Fields(text), " ")
		for _, want := range []string{"e-Ticket", "Serie A Nº 1", "CONSUMO FINAL", "Yerba mate 1 kg", "Total a pagar",
			"UYU 300,00", "ADENDA Mesa 4", "Código de seguridad", "Fecha de vencimiento", watermark} {
			if strings.Count(flat, want) < 2 {
				t.Errorf("the two copies do not both show %q", want)
			}
		}
		if t.Failed() {
			t.Logf("decoded:\n%s", text)
		}
	})

	t.Run("58 mm with a raster QR", func(t *testing.T) {
		resp, _ := a.printOn(t, "termica58")
		if resp.StatusCode != http.StatusOK || resp.Header.Get("X-CFE-Formato") != "escpos" {
			t.Fatalf("POST /pdf: %d %v", resp.StatusCode, resp.Header)
		}
		got := a.received("termica58")
		if bytes.Contains(got, []byte(a.qr)) || !bytes.Contains(got, []byte{0x1d, 'v', '0'}) {
			t.Error("the 58 mm printer was not sent the QR code as an image")
		}
		for _, line := range strings.Split(thermal.Text(t, got, charmap.CodePage858), "\n") {
			if len([]rune(line)) > 32 {
				t.Errorf("line wider than 32 columns: %q", line)
			}
		}
	})

	t.Run("a printer out of paper is 502 with the reason", func(t *testing.T) {
		resp, b := a.printOn(t, "sin-papel")
		wantError(t, resp, b, http.StatusBadGateway, "no tiene papel")
		if got := a.printers["sin-papel"].Received(); len(got) != 0 {
			t.Errorf("the printer without paper received %d bytes", len(got))
		}
	})

	t.Run("a PDF printer says pdf", func(t *testing.T) {
		resp, _ := a.printOn(t, "cocina")
		if resp.StatusCode != http.StatusOK || resp.Header.Get("X-CFE-Formato") != "pdf" {
			t.Errorf("POST /pdf: %d, X-CFE-Formato %q", resp.StatusCode, resp.Header.Get("X-CFE-Formato"))
		}
	})
}

// BenchmarkPDF_ESCPOS measures POST /pdf to a thermal printer on loopback
// TCP, as a point of sale sees it: the request through the security
// pipeline, the CFE read from bbolt, its PDF (the answer) and its ESC/POS
// rendered, the printer's status asked, the bytes written, the status asked
// again; the PDF read back.
func BenchmarkPDF_ESCPOS(b *testing.B) {
	a := startESCPOSAgent(b)
	b.ReportAllocs()
	for b.Loop() {
		if resp, doc := a.printOn(b, "termica58"); resp.StatusCode != http.StatusOK {
			b.Fatalf("POST /pdf: %d %s", resp.StatusCode, doc)
		}
	}
}

// BenchmarkSaleToAccepted_ESCPOS measures a sale from the point of sale's
// side: POST /sign-cfe of a new e-Ticket, then POST /pdf on the thermal
// printer, until the printer has accepted the receipt.
func BenchmarkSaleToAccepted_ESCPOS(b *testing.B) {
	a := startESCPOSAgent(b)
	n := 0
	b.ReportAllocs()
	for b.Loop() {
		n++
		uuid := "venta-bench-" + strconv.Itoa(n)
		if status, body := a.sign(b, ticket(uuid)); status != http.StatusOK {
			b.Fatalf("sign: %d %s", status, body)
		}
		resp, doc := a.send(b, request{method: http.MethodPost, path: "/pdf",
			headers: map[string]string{"Content-Type": "application/json"},
			body:    jsonBody(`{"uuid":"` + uuid + `","impresora":"termica58"}`)})
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("POST /pdf: %d %s", resp.StatusCode, doc)
		}
	}
}

// TestPDF_AllowedOriginReadsFormat: a web point of sale on an allowed origin
// can read X-CFE-Formato.
func TestPDF_AllowedOriginReadsFormat(t *testing.T) {
	const origin = "https://pos.example.com"
	ts := startServer(t, func(c *localapi.ServerConfig) { c.AllowedOrigins = []string{origin} })
	resp, _ := ts.send(t, request{method: http.MethodPost, path: "/pdf", body: jsonBody(`{}`),
		headers: map[string]string{"Content-Type": "application/json", "Origin": origin}})
	if expose := resp.Header.Get("Access-Control-Expose-Headers"); !hasToken(expose, "X-CFE-Formato") {
		t.Errorf("Access-Control-Expose-Headers %q lacks X-CFE-Formato", expose)
	}
}
