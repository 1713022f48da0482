package sandbox_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/sandbox"
	"github.com/cfe-agent/cfe-agent/sandbox/auth"
	"github.com/cfe-agent/cfe-agent/sandbox/issuing"
)

const watermark = "Representacion impresa de prueba sin valor fiscal"

// pdfTool runs pdftotext or pdfinfo on a PDF and returns its output.
func pdfTool(t *testing.T, tool string, doc []byte) string {
	t.Helper()
	bin := testtool.Require(t, tool)
	f := filepath.Join(t.TempDir(), "doc.pdf")
	if err := os.WriteFile(f, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{f}
	if tool == "pdftotext" {
		args = append(args, "-")
	}
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", tool, err, out)
	}
	return string(out)
}

// pdfError is the PDF endpoint's error shape.
type pdfError struct {
	OK    *bool  `json:"ok"`
	Error string `json:"error"`
}

// pdfErr expects status want with the {ok:false, error} body.
func (r *resp) pdfErr(t *testing.T, want int) string {
	t.Helper()
	r.expect(t, want)
	var b pdfError
	r.decode(t, &b)
	if b.OK == nil || *b.OK || b.Error == "" {
		t.Errorf("body %s, want {ok:false, error}", r.body)
	}
	return b.Error
}

func TestPDF(t *testing.T) {
	t.Parallel()
	e := start(t, func(c *sandbox.Config) {
		c.Seed.Companies[0].Plantillas = []sandbox.TemplateConfig{{Nombre: "Caja", Base: "Rollo", Leyendas: []string{"Gracias por su visita"}}}
	})
	issued := e.emit(ticketRequest("pdf-1"))

	var doc []byte
	t.Run("by uuid with a key: the test watermark", func(t *testing.T) {
		r := e.do("POST", "/api/v1/cfeemitido/pdf", issuing.PDFRequest{UUID: "pdf-1"}, "X-API-Key", keyAlfa, "Accept", "application/pdf").expect(t, http.StatusOK)
		if r.header.Get("Content-Type") != "application/pdf" || !bytes.HasPrefix(r.body, []byte("%PDF-")) {
			t.Fatalf("content type %q, body %.20q", r.header.Get("Content-Type"), r.body)
		}
		doc = r.body
		text := pdfTool(t, "pdftotext", r.body)
		for _, want := range []string{watermark, "Alfa S.A.", rucAlfa, issued.CodSeguridad} {
			if !strings.Contains(text, want) {
				t.Errorf("the PDF does not show %q:\n%s", want, text)
			}
		}
	})
	t.Run("by folio with each header form and a JWT", func(t *testing.T) {
		folio := issuing.PDFRequest{TipoCfe: 101, Serie: "H", Numero: issued.Nro, CodComercio: json.RawMessage(`"C1"`), Impresora: json.RawMessage(`"x"`), FallbackCopies: json.RawMessage(`2`)}
		for _, h := range [][]string{{"Authorization", "ApiKey " + keyAlfa}, bearer(keyAlfa), bearer(e.login("ana", anaPassword).Token)} {
			r := e.do("POST", "/api/v1/cfeemitido/pdf", folio, h...).expect(t, http.StatusOK)
			if !bytes.HasPrefix(r.body, []byte("%PDF-")) {
				t.Errorf("%s: not a PDF", h[1][:10])
			}
		}
	})
	t.Run("the variant picks the template", func(t *testing.T) {
		a4 := pdfTool(t, "pdfinfo", doc)
		r := e.do("POST", "/api/v1/cfeemitido/pdf", issuing.PDFRequest{UUID: "pdf-1", Variant: "caja"}, "X-API-Key", keyAlfa).expect(t, http.StatusOK)
		roll := pdfTool(t, "pdfinfo", r.body)
		if !strings.Contains(a4, "595") || strings.Contains(roll, "595") {
			t.Errorf("page sizes: default %q, Caja %q; want A4 (595 pt wide) then an 80 mm roll", pageSize(a4), pageSize(roll))
		}
		if text := pdfTool(t, "pdftotext", r.body); !strings.Contains(text, "Gracias por su visita") {
			t.Errorf("the custom template's legend is missing:\n%s", text)
		}
		msg := e.do("POST", "/api/v1/cfeemitido/pdf", issuing.PDFRequest{UUID: "pdf-1", Variant: "Ticketera"}, "X-API-Key", keyAlfa).pdfErr(t, http.StatusBadRequest)
		if !strings.Contains(msg, "variant") {
			t.Errorf("error %q should name variant", msg)
		}
	})
	t.Run("400 without uuid or the whole folio", func(t *testing.T) {
		for _, body := range []issuing.PDFRequest{{}, {TipoCfe: 101, Serie: "H"}, {Serie: "H", Numero: 1}, {TipoCfe: 101, Numero: 1}} {
			e.do("POST", "/api/v1/cfeemitido/pdf", body, "X-API-Key", keyAlfa).pdfErr(t, http.StatusBadRequest)
		}
	})
	t.Run("400 when a JWT user's company is ambiguous", func(t *testing.T) {
		e.do("POST", "/api/v1/cfeemitido/pdf", issuing.PDFRequest{UUID: "pdf-1"}, bearer(e.login("beto", betoPassword).Token)...).pdfErr(t, http.StatusBadRequest)
	})
	t.Run("403 when idEmpresa is not the caller's", func(t *testing.T) {
		e.do("POST", "/api/v1/cfeemitido/pdf", issuing.PDFRequest{UUID: "pdf-1", IdEmpresa: 999}, "X-API-Key", keyAlfa).pdfErr(t, http.StatusForbidden)
		var beta []auth.CompanyResponse
		e.do("GET", "/api/v1/usuario/empresas", nil, "X-API-Key", keyBeta).expect(t, http.StatusOK).decode(t, &beta)
		e.do("POST", "/api/v1/cfeemitido/pdf", issuing.PDFRequest{UUID: "pdf-1", IdEmpresa: beta[0].IdEmpresa}, bearer(e.login("ana", anaPassword).Token)...).pdfErr(t, http.StatusForbidden)
	})
	t.Run("404 for an unknown CFE", func(t *testing.T) {
		e.do("POST", "/api/v1/cfeemitido/pdf", issuing.PDFRequest{UUID: "nope"}, "X-API-Key", keyAlfa).pdfErr(t, http.StatusNotFound)
		e.do("POST", "/api/v1/cfeemitido/pdf", issuing.PDFRequest{TipoCfe: 101, Serie: "H", Numero: 99}, "X-API-Key", keyAlfa).pdfErr(t, http.StatusNotFound)
	})
	t.Run("403 for another company's CFE by uuid; 404 by a folio the caller's company lacks", func(t *testing.T) {
		msg := e.do("POST", "/api/v1/cfeemitido/pdf", issuing.PDFRequest{UUID: "pdf-1"}, "X-API-Key", keyBeta).pdfErr(t, http.StatusForbidden)
		if msg != "no tiene acceso a este CFE" {
			t.Errorf("error %q", msg)
		}
		// Every company numbers its own ranges: Alfa's H-n is no CFE of Beta.
		e.do("POST", "/api/v1/cfeemitido/pdf", issuing.PDFRequest{TipoCfe: 101, Serie: "H", Numero: issued.Nro}, "X-API-Key", keyBeta).
			pdfErr(t, http.StatusNotFound)
		// A user of both companies who names Beta gets Beta's answer: not found.
		var beta []auth.CompanyResponse
		e.do("GET", "/api/v1/usuario/empresas", nil, "X-API-Key", keyBeta).expect(t, http.StatusOK).decode(t, &beta)
		e.do("POST", "/api/v1/cfeemitido/pdf", issuing.PDFRequest{UUID: "pdf-1", IdEmpresa: beta[0].IdEmpresa},
			bearer(e.login("beto", betoPassword).Token)...).pdfErr(t, http.StatusNotFound)
	})
	t.Run("401 in the PDF shape", func(t *testing.T) {
		e.do("POST", "/api/v1/cfeemitido/pdf", issuing.PDFRequest{UUID: "pdf-1"}).pdfErr(t, http.StatusUnauthorized)
		e.do("POST", "/api/v1/cfeemitido/pdf", issuing.PDFRequest{UUID: "pdf-1"}, "Authorization", "ApiKey xx_test_unknown-key-0000000000000").pdfErr(t, http.StatusUnauthorized)
	})
	t.Run("500 when the stored CFE cannot be rendered", func(t *testing.T) {
		e.close()
		corruptCFE(t, e.cfg.DataDir, issued.ID)
		e.open()
		msg := e.do("POST", "/api/v1/cfeemitido/pdf", issuing.PDFRequest{UUID: "pdf-1"}, "X-API-Key", keyAlfa).pdfErr(t, http.StatusInternalServerError)
		if msg != "no se pudo generar el PDF" {
			t.Errorf("error %q", msg)
		}
	})
}

func pageSize(info string) string {
	for _, l := range strings.Split(info, "\n") {
		if strings.HasPrefix(l, "Page size:") {
			return l
		}
	}
	return "?"
}

// corruptCFE replaces the signed XML of record id in a closed server's file
// with a document that is not a CFE.
func corruptCFE(t *testing.T, dir string, id int64) {
	t.Helper()
	key := binary.BigEndian.AppendUint64(nil, uint64(id)) // the record's id key
	editRecord(t, dir, "cfes", func(*bolt.Tx) []byte { return key }, func(rec map[string]any) { rec["xml"] = []byte("<roto/>") })
}

// editRecord changes one JSON record of bucket, the one at key, in a closed
// server's file.
func editRecord(t *testing.T, dir, bucket string, key func(*bolt.Tx) []byte, edit func(rec map[string]any)) {
	t.Helper()
	db, err := bolt.Open(filepath.Join(dir, "cfe-sandbox-sandbox.db"), 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		b, k := tx.Bucket([]byte(bucket)), key(tx)
		var rec map[string]any
		if err := json.Unmarshal(b.Get(k), &rec); err != nil {
			return err
		}
		edit(rec)
		raw, _ := json.Marshal(rec)
		return b.Put(k, raw)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestPDF_Production(t *testing.T) {
	t.Parallel()
	e := start(t, func(c *sandbox.Config) {
		c.Environment = sandbox.EnvProduccion
		c.Seed.APIKeys = nil
	})
	tok := bearer(e.login("ana", anaPassword).Token)
	e.do("POST", "/api/v1/comprobante/emitir", ticketRequest("prod-1"), tok...).expect(t, http.StatusOK)
	r := e.do("POST", "/api/v1/cfeemitido/pdf", issuing.PDFRequest{UUID: "prod-1"}, tok...).expect(t, http.StatusOK)
	text := pdfTool(t, "pdftotext", r.body)
	if strings.Contains(text, watermark) || !strings.Contains(text, "Alfa S.A.") {
		t.Errorf("a production PDF shows the watermark or lacks the emitter:\n%s", text)
	}
}

// pdfText returns the text of the PDF of the CFE uuid, asked with the
// credential headers h.
func (e *env) pdfText(t *testing.T, uuid string, h ...string) string {
	t.Helper()
	r := e.do("POST", "/api/v1/cfeemitido/pdf", issuing.PDFRequest{UUID: uuid}, h...).expect(t, http.StatusOK)
	return pdfTool(t, "pdftotext", r.body)
}

// shows fails t unless text has every one of want and none of unwanted.
func shows(t *testing.T, text string, want, unwanted []string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(text, w) {
			t.Errorf("the PDF does not show %q:\n%s", w, text)
		}
	}
	for _, u := range unwanted {
		if strings.Contains(text, u) {
			t.Errorf("the PDF shows %q:\n%s", u, text)
		}
	}
}

const (
	verifyDGI = "Puede verificar comprobante en www.dgi.gub.uy"
	ivaAlDia  = "IVA al día" // pdf.ConstanciaIVAalDia
)

// TestPDF_Footer: the PDF prints the footer data of the CFE's company, as the
// agent prints those of its profile.
func TestPDF_Footer(t *testing.T) {
	t.Parallel()
	e := start(t, func(c *sandbox.Config) {
		alfa, beta := &c.Seed.Companies[0], &c.Seed.Companies[1]
		alfa.FechaEmisor, alfa.WebURL, alfa.ConstanciaIVAAlDia = "2015-03-02", "https://www.alfa.com.uy/cfe/", new(false)
		beta.Resolucion = "798/2012"
	})
	e.emit(ticketRequest("alfa-1"))
	e.do("POST", "/api/v1/comprobante/emitir", ticketRequest("beta-1"), "X-API-Key", keyBeta).expect(t, http.StatusOK)
	demo := bearer(e.login("demo", "demo-password").Token)
	e.do("POST", "/api/v1/comprobante/emitir", ticketRequest("demo-1"), demo...).expect(t, http.StatusOK)

	t.Run("Fecha emisor, the web site of an e-Ticket and no constancia", func(t *testing.T) {
		shows(t, e.pdfText(t, "alfa-1", "X-API-Key", keyAlfa),
			[]string{"Fecha emisor: 02/03/2015", "Puede verificar comprobante en www.alfa.com.uy/cfe"},
			[]string{"Res. ", "www.dgi.gub.uy", ivaAlDia})
	})
	t.Run("a resolution instead of Fecha emisor; no web site: DGI's", func(t *testing.T) {
		shows(t, e.pdfText(t, "beta-1", "X-API-Key", keyBeta),
			[]string{"Res. 798/2012", verifyDGI, ivaAlDia}, []string{"Fecha emisor"})
	})
	t.Run("the demo company's PDF is complete out of the box", func(t *testing.T) {
		shows(t, e.pdfText(t, "demo-1", demo...),
			[]string{"Fecha emisor: 01/10/2012", "Puede verificar comprobante en www.ejemplo.com.uy/comprobantes", ivaAlDia}, nil)
	})
	t.Run("a company stored without footer data still issues and prints", func(t *testing.T) {
		e.close()
		editRecord(t, e.cfg.DataDir, "companies", func(tx *bolt.Tx) []byte { return tx.Bucket([]byte("rucs")).Get([]byte(rucAlfa)) },
			func(rec map[string]any) {
				if rec["fechaEmisor"] != "2015-03-02" || rec["webUrl"] != "https://www.alfa.com.uy/cfe/" || rec["omitIvaConstancia"] != true {
					t.Errorf("stored company %v, want its footer data", rec)
				}
				for _, k := range []string{"fechaEmisor", "resolucion", "webUrl", "omitIvaConstancia"} {
					delete(rec, k) // as a file written before the sandbox kept them
				}
			})
		e.open()
		e.emit(ticketRequest("alfa-2"))
		for _, uuid := range []string{"alfa-1", "alfa-2"} {
			shows(t, e.pdfText(t, uuid, "X-API-Key", keyAlfa), []string{verifyDGI, ivaAlDia}, []string{"Fecha emisor", "Res. "})
		}
	})
}

func TestLoadSeed_Footer(t *testing.T) {
	t.Parallel()
	f := filepath.Join(t.TempDir(), "seed.json")
	raw := `{"companies": [
		{"ruc": "211111110015", "razonSocial": "Alfa S.A.", "fechaEmisor": "2015-03-02", "webUrl": "https://www.alfa.com.uy/cfe", "constanciaIvaAlDia": false},
		{"ruc": "212222220011", "razonSocial": "Beta S.R.L.", "resolucion": "798/2012"}]}`
	if err := os.WriteFile(f, []byte(raw), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := sandbox.LoadSeed(f)
	if err != nil {
		t.Fatal(err)
	}
	alfa, beta := s.Companies[0], s.Companies[1]
	if alfa.FechaEmisor != "2015-03-02" || alfa.WebURL != "https://www.alfa.com.uy/cfe" || alfa.ConstanciaIVAAlDia == nil || *alfa.ConstanciaIVAAlDia {
		t.Errorf("Alfa %+v", alfa)
	}
	if beta.Resolucion != "798/2012" || beta.FechaEmisor != "" || beta.ConstanciaIVAAlDia != nil {
		t.Errorf("Beta %+v", beta)
	}
}

// TestSeed_FooterErrors: the seed's footer data follow the agent profile's
// rules, and a broken one stops the start naming the company and the field.
func TestSeed_FooterErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		edit  func(*sandbox.SeedCompany)
		field string
		says  string
	}{
		{"a date in another format", func(c *sandbox.SeedCompany) { c.FechaEmisor = "02/03/2015" }, "fechaEmisor", "AAAA-MM-DD"},
		{"a date that does not exist", func(c *sandbox.SeedCompany) { c.FechaEmisor = "2015-02-30" }, "fechaEmisor", "AAAA-MM-DD"},
		{"a date before the regime", func(c *sandbox.SeedCompany) { c.FechaEmisor = "1999-12-31" }, "fechaEmisor", "anterior a 2000"},
		{"a resolution with Res.", func(c *sandbox.SeedCompany) { c.Resolucion = "Res. 798/2012" }, "resolucion", "1234/2016"},
		{"a resolution without its year", func(c *sandbox.SeedCompany) { c.Resolucion = "798" }, "resolucion", "1234/2016"},
		{"a resolution and a date", func(c *sandbox.SeedCompany) { c.FechaEmisor, c.Resolucion = "2015-03-02", "798/2012" }, "resolucion", "no ambas"},
		{"a web site without scheme", func(c *sandbox.SeedCompany) { c.WebURL = "www.alfa.com.uy" }, "webUrl", "http o https"},
	} {
		t.Run(c.name, func(t *testing.T) {
			seed := testSeed()
			c.edit(&seed.Companies[0])
			srv, err := sandbox.New(sandbox.Config{Environment: sandbox.EnvSandbox, DataDir: t.TempDir(), PasswordCost: 4, Seed: seed})
			if err == nil {
				srv.Close()
				t.Fatal("the seed was accepted")
			}
			for _, want := range []string{rucAlfa, c.field + ": ", c.says} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
		})
	}
}
