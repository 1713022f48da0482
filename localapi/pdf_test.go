package localapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/localapi"
	"github.com/cfe-agent/cfe-agent/pdf"
	"github.com/cfe-agent/cfe-agent/printer"
	"github.com/cfe-agent/cfe-agent/printing"
)

// watermark is the text DGI's interface puts on PDFs outside production.
const watermark = "Representacion impresa de prueba sin valor fiscal"

// printAgent is the real printing path: the signing parts, the printing
// service over their store, the built-in templates, and a printer manager
// whose printers are folders in t.TempDir(), behind a local module. The
// store holds one signed e-Ticket, A-1, uuid venta-0001, adenda "Mesa 4".
type printAgent struct {
	*agent
	dirs map[string]string // printer alias → its folder
}

// startPrintAgent starts a printAgent whose profile prints Rollo when a
// request names no template. Its printers:
//   - mostrador: a folder; 2 copies of e-Tickets (101), 1 of other types;
//   - cocina: a folder with no copies configured (fallback_copies applies);
//   - sin-carpeta: a folder that does not exist;
//   - any other name: a queue of a CUPS server that is not running.
func startPrintAgent(t testing.TB, environment string) *printAgent {
	t.Helper()
	db, iss := signingParts(t, now.AddDate(0, -1, 0))
	dirs := map[string]string{"mostrador": t.TempDir(), "cocina": t.TempDir()}
	printers, err := printer.NewManager(printer.Config{
		Printers: map[string]printer.PrinterConfig{
			"mostrador":   {Backend: printer.BackendDir, Dir: dirs["mostrador"], Copies: map[cfe.Type]int{cfe.ETicket: 2}},
			"cocina":      {Backend: printer.BackendDir, Dir: dirs["cocina"]},
			"sin-carpeta": {Backend: printer.BackendDir, Dir: filepath.Join(t.TempDir(), "no-existe")},
		},
		CUPS:      printer.CUPSConfig{Host: "127.0.0.1", Port: closedPort(t)},
		RawQueues: printer.BackendCUPS,
	})
	if err != nil {
		t.Fatal(err)
	}
	templates, err := pdf.NewCatalog(nil)
	if err != nil {
		t.Fatal(err)
	}
	svc := printing.New(printing.Config{Store: db, Templates: templates, Printers: printers,
		DefaultTemplate: "Rollo", Production: environment == "produccion"})
	ts := startServer(t, func(c *localapi.ServerConfig) {
		c.Issuer, c.Printing = iss, svc
	})
	a := &printAgent{agent: &agent{testServer: ts, db: db}, dirs: dirs}
	if status, b := a.sign(t, ticket("venta-0001")); status != http.StatusOK || signResponse(t, b).Numero != 1 {
		t.Fatalf("signing the e-Ticket to print: %d %s", status, b)
	}
	return a
}

// closedPort returns a loopback port nothing listens on.
func closedPort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	return port
}

// print posts body to /pdf.
func (a *printAgent) print(t testing.TB, body string) (response, []byte) {
	t.Helper()
	return a.send(t, request{method: http.MethodPost, path: "/pdf",
		headers: map[string]string{"Content-Type": "application/json"}, body: jsonBody(body)})
}

// files lists the files of a printer's folder.
func (a *printAgent) files(t *testing.T, alias string) []string {
	t.Helper()
	entries, err := os.ReadDir(a.dirs[alias])
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, filepath.Join(a.dirs[alias], e.Name()))
	}
	return out
}

// printed posts body, expects a PDF, and returns it with the files the
// request added to the folder of printer alias.
func (a *printAgent) printed(t *testing.T, alias, body string) (response, []byte, []string) {
	t.Helper()
	before := a.files(t, alias)
	resp, b := a.print(t, body)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/pdf" ||
		!bytes.HasPrefix(b, []byte("%PDF-")) {
		t.Fatalf("POST /pdf %s: %d %s, want 200 with a PDF\n%.300s", body, resp.StatusCode,
			resp.Header.Get("Content-Type"), b)
	}
	var added []string
	for _, f := range a.files(t, alias) {
		if !slices.Contains(before, f) {
			added = append(added, f)
		}
	}
	return resp, b, added
}

// wantError checks an error answer: the status and {ok: false, error}
// whose text contains each of want.
func wantError(t *testing.T, resp response, b []byte, status int, want ...string) {
	t.Helper()
	var e map[string]any
	if err := json.Unmarshal(b, &e); err != nil || resp.StatusCode != status {
		t.Fatalf("got %d %s, want %d with {ok:false,error}", resp.StatusCode, b, status)
	}
	msg, _ := e["error"].(string)
	if ok, present := e["ok"]; !present || ok != false || len(e) != 2 {
		t.Fatalf("body %s, want exactly {ok:false,error}", b)
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q lacks %q", msg, w)
		}
	}
}

// pdfText extracts a PDF's text with pdftotext.
func pdfText(t *testing.T, doc []byte) string {
	t.Helper()
	bin := testtool.Require(t, "pdftotext")
	f := filepath.Join(t.TempDir(), "doc.pdf")
	if err := os.WriteFile(f, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "-enc", "UTF-8", f, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	return string(out)
}

var pageWidthRE = regexp.MustCompile(`(?m)^Page size:\s+([\d.]+) x`)

// pageWidth returns the first page's width in millimetres, read with pdfinfo.
func pageWidth(t *testing.T, doc []byte) float64 {
	t.Helper()
	bin := testtool.Require(t, "pdfinfo")
	f := filepath.Join(t.TempDir(), "doc.pdf")
	if err := os.WriteFile(f, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, f).Output()
	m := pageWidthRE.FindSubmatch(out)
	if err != nil || m == nil {
		t.Fatalf("pdfinfo: %v\n%s", err, out)
	}
	pt, _ := strconv.ParseFloat(string(m[1]), 64)
	return pt * 25.4 / 72
}

func TestPDF_Errors(t *testing.T) {
	a := startPrintAgent(t, "sandbox")

	for _, tc := range []struct {
		name string
		body string
		want []string
	}{
		{"no identification", `{"impresora":"mostrador"}`, []string{"uuid", "tipo_cfe, serie y numero"}},
		{"an incomplete folio", `{"tipo_cfe":101,"serie":"A","impresora":"mostrador"}`,
			[]string{"numero: es obligatorio cuando no se envía uuid"}},
		{"no printer", `{"uuid":"venta-0001"}`, []string{"impresora: es obligatoria"}},
		{"a blank printer", `{"uuid":"venta-0001","impresora":"  "}`, []string{"impresora: es obligatoria"}},
		{"a printer that is not a name", `{"uuid":"venta-0001","impresora":7}`, []string{"impresora: se espera un texto"}},
		{"an unknown CFE type", `{"tipo_cfe":100,"serie":"A","numero":1,"impresora":"mostrador"}`,
			[]string{"tipo_cfe: 100 no es un tipo de CFE"}},
		{"copies out of range", `{"uuid":"venta-0001","impresora":"cocina","fallback_copies":11}`,
			[]string{"fallback_copies: debe estar entre 1 y 10"}},
		{"an unknown template", `{"uuid":"venta-0001","impresora":"mostrador","variant":"Plantilla-Inexistente"}`,
			[]string{"variant", "Plantilla-Inexistente"}},
		{"not an object", `["venta-0001"]`, []string{"objeto JSON"}},
	} {
		t.Run(tc.name+" is 400", func(t *testing.T) {
			resp, b := a.print(t, tc.body)
			wantError(t, resp, b, http.StatusBadRequest, tc.want...)
			if n := len(a.files(t, "mostrador")) + len(a.files(t, "cocina")); n != 0 {
				t.Fatalf("a refused request printed %d files", n)
			}
		})
	}

	t.Run("a CFE the store does not have is 404", func(t *testing.T) {
		resp, b := a.print(t, `{"uuid":"venta-9999","impresora":"mostrador"}`)
		wantError(t, resp, b, http.StatusNotFound, "venta-9999")
		resp, b = a.print(t, `{"tipo_cfe":101,"serie":"A","numero":2,"impresora":"mostrador"}`)
		wantError(t, resp, b, http.StatusNotFound, "101", "número 2")
	})

	t.Run("a stored CFE that cannot be rendered is 500 and prints nothing", func(t *testing.T) {
		ctx := context.Background()
		r, err := a.db.Reserve(ctx, cfe.ETicket, cfe.DateOf(now))
		if err != nil {
			t.Fatal(err)
		}
		broken := &cfe.Issued{UUID: "venta-rota", Type: r.Type, Serie: r.Serie, Nro: r.Nro, RangeID: r.Range.ID,
			CAE: r.Range.CAEData(), TmstFirma: now, XML: []byte(`<CFE version="1.0"><eTck><TmstFirma>`)}
		if err := a.db.Commit(ctx, r, broken); err != nil {
			t.Fatal(err)
		}
		resp, b := a.print(t, `{"uuid":"venta-rota","impresora":"mostrador"}`)
		wantError(t, resp, b, http.StatusInternalServerError, "error interno", resp.Header.Get("X-Request-Id"))
		if n := len(a.files(t, "mostrador")); n != 0 {
			t.Fatalf("a failed PDF printed %d files", n)
		}
		if !strings.Contains(a.logs.String(), "no se pudo generar el PDF") {
			t.Fatalf("the cause is not logged:\n%s", a.logs)
		}
	})

	t.Run("a printer that fails is 502 with its reason", func(t *testing.T) {
		resp, b := a.print(t, `{"uuid":"venta-0001","impresora":"sin-carpeta"}`)
		wantError(t, resp, b, http.StatusBadGateway, "la carpeta de impresión", "no existe")
		// No CUPS server answers: the queue cannot be reached.
		resp, b = a.print(t, `{"uuid":"venta-0001","impresora":"Caja_Termica"}`)
		wantError(t, resp, b, http.StatusBadGateway, "CUPS")
	})

	t.Run("a store that cannot be read is 503, not the printer's 502", func(t *testing.T) {
		b := startPrintAgent(t, "sandbox")
		b.db.Close()
		resp, body := b.print(t, `{"uuid":"venta-0001","impresora":"mostrador"}`)
		if resp.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("got %d %s, want 503", resp.StatusCode, body)
		}
	})

	t.Run("the body must be JSON, as on every route", func(t *testing.T) {
		resp, b := a.send(t, request{method: http.MethodPost, path: "/pdf",
			headers: map[string]string{"Content-Type": "text/plain"}, body: jsonBody(`{"uuid":"venta-0001","impresora":"mostrador"}`)})
		wantError(t, resp, b, http.StatusUnsupportedMediaType)
		resp, b = a.send(t, request{method: http.MethodGet, path: "/pdf"})
		wantError(t, resp, b, http.StatusMethodNotAllowed)
	})
}

func TestPDF_Prints(t *testing.T) {
	a := startPrintAgent(t, "sandbox")

	t.Run("the PDF answered is the file printed, with the profile's copies for the type", func(t *testing.T) {
		resp, doc, added := a.printed(t, "mostrador",
			`{"uuid":"venta-0001","impresora":"mostrador","cod_comercio":"C1","cod_terminal":{"id":1}}`)
		if len(added) != 2 {
			t.Fatalf("%d files written, want the 2 copies mostrador prints of e-Tickets", len(added))
		}
		for _, f := range added {
			if b, err := os.ReadFile(f); err != nil || !bytes.Equal(b, doc) {
				t.Fatalf("%s is not the PDF answered (%v)", f, err)
			}
		}
		h := resp.Header
		if h.Get("X-CFE-Impresora") != "mostrador" || h.Get("X-CFE-Copias") != "2" || h.Get("X-CFE-Estado") != "completed" {
			t.Fatalf("headers %v, want the printer, 2 copies and a completed job", h)
		}
		if cd := h.Get("Content-Disposition"); cd != `inline; filename="e-Ticket-A-1.pdf"` {
			t.Fatalf("Content-Disposition %q", cd)
		}
		text := pdfText(t, doc)
		for _, want := range []string{watermark, "e-Ticket", "Serie A Nº 1", "Mesa 4", "Yerba mate 1 kg"} {
			if !strings.Contains(text, want) {
				t.Errorf("the PDF lacks %q:\n%s", want, text)
			}
		}
	})

	t.Run("a profile count wins over fallback_copies", func(t *testing.T) {
		resp, _, added := a.printed(t, "mostrador", `{"uuid":"venta-0001","impresora":"mostrador","fallback_copies":5}`)
		if len(added) != 2 || resp.Header.Get("X-CFE-Copias") != "2" {
			t.Fatalf("%d files, header %q: want mostrador's 2", len(added), resp.Header.Get("X-CFE-Copias"))
		}
	})

	t.Run("without a profile count fallback_copies applies, else 1", func(t *testing.T) {
		resp, _, added := a.printed(t, "cocina", `{"uuid":"venta-0001","impresora":"COCINA","fallback_copies":"3"}`)
		if len(added) != 3 || resp.Header.Get("X-CFE-Copias") != "3" {
			t.Fatalf("%d files, header %q: want the 3 fallback copies", len(added), resp.Header.Get("X-CFE-Copias"))
		}
		resp, _, added = a.printed(t, "cocina", `{"uuid":"venta-0001","impresora":"cocina"}`)
		if len(added) != 1 || resp.Header.Get("X-CFE-Copias") != "1" {
			t.Fatalf("%d files, header %q: want 1", len(added), resp.Header.Get("X-CFE-Copias"))
		}
	})

	t.Run("the profile's format applies unless variant names another", func(t *testing.T) {
		// Rollo is an 80 mm roll; Estandar an A4 sheet, 210 mm wide.
		_, roll, _ := a.printed(t, "cocina", `{"tipo_cfe":101,"serie":"A","numero":1,"impresora":"cocina"}`)
		_, a4, _ := a.printed(t, "cocina", `{"tipo_cfe":"101","serie":"a","numero":1,"impresora":"cocina","variant":"estandar"}`)
		if w := pageWidth(t, roll); w < 79.5 || w > 80.5 {
			t.Errorf("default format: page %.1f mm wide, want Rollo's 80", w)
		}
		if w := pageWidth(t, a4); w < 209.5 || w > 210.5 {
			t.Errorf("variant estandar: page %.1f mm wide, want A4's 210", w)
		}
	})
}

func TestPDF_Production(t *testing.T) {
	a := startPrintAgent(t, "produccion")
	_, doc, _ := a.printed(t, "cocina", `{"uuid":"venta-0001","impresora":"cocina"}`)
	if text := pdfText(t, doc); strings.Contains(text, "sin valor fiscal") || !strings.Contains(text, "Serie A Nº 1") {
		t.Fatalf("a production PDF must print the CFE without the test watermark:\n%s", text)
	}
}

func TestPDF_WithoutPrinting(t *testing.T) {
	ts := startServer(t, nil)
	resp, b := ts.send(t, request{method: http.MethodPost, path: "/pdf",
		headers: map[string]string{"Content-Type": "application/json"}, body: jsonBody(`{"uuid":"x","impresora":"y"}`)})
	wantError(t, resp, b, http.StatusServiceUnavailable, "impresión no está disponible")
}

// A page of an allowed origin (a web POS) reads the print headers.
func TestPDF_AllowedOriginReadsPrintHeaders(t *testing.T) {
	const origin = "https://pos.example.com"
	ts := startServer(t, func(c *localapi.ServerConfig) { c.AllowedOrigins = []string{origin} })
	resp, _ := ts.send(t, request{method: http.MethodPost, path: "/pdf", body: jsonBody(`{}`),
		headers: map[string]string{"Content-Type": "application/json", "Origin": origin}})
	expose := resp.Header.Get("Access-Control-Expose-Headers")
	for _, h := range []string{"X-CFE-Impresora", "X-CFE-Copias", "X-CFE-Trabajo", "X-CFE-Estado", "X-Request-Id"} {
		if !hasToken(expose, h) {
			t.Errorf("Access-Control-Expose-Headers %q lacks %s", expose, h)
		}
	}
}
