package sandbox_test

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/sandbox"
	"github.com/cfe-agent/cfe-agent/sandbox/auth"
	"github.com/cfe-agent/cfe-agent/sandbox/issuing"
	"github.com/cfe-agent/cfe-agent/sandbox/reports"
)

// companyIDs returns the hosted ids of Alfa and Beta.
func (e *env) companyIDs() (alfa, beta int64) {
	e.t.Helper()
	var cs []auth.CompanyResponse
	e.do("GET", "/api/v1/usuario/empresas", nil, bearer(e.login("beto", betoPassword).Token)...).expect(e.t, http.StatusOK).decode(e.t, &cs)
	for _, c := range cs {
		switch c.RUC {
		case rucAlfa:
			alfa = c.IdEmpresa
		case rucBeta:
			beta = c.IdEmpresa
		}
	}
	if alfa == 0 || beta == 0 {
		e.t.Fatalf("companies %+v", cs)
	}
	return alfa, beta
}

// expectInvalid expects a 400 in the common error shape naming campo.
func (r *resp) expectInvalid(t *testing.T, campo string) errBody {
	t.Helper()
	r.expect(t, http.StatusBadRequest)
	b := r.errBody(t)
	if b.Code != "invalid" || b.Error == "" {
		t.Errorf("error body %s", r.body)
	}
	if campo != "" {
		found := false
		for _, d := range b.Details {
			found = found || d.Campo == campo
		}
		if !found {
			t.Errorf("details %+v should name %s", b.Details, campo)
		}
	}
	return b
}

func TestRepresentation(t *testing.T) {
	t.Parallel()
	e := start(t, func(c *sandbox.Config) {
		c.Seed.Companies[0].Plantillas = []sandbox.TemplateConfig{{Nombre: "Caja", Base: "Rollo", Leyendas: []string{"Gracias por su visita"}}}
	})
	first := e.emit(ticketRequest("rep-1"))
	second := e.emit(ticketRequest("rep-2"))
	path := func(id int64, formato string) string {
		p := "/api/v1/cfeemitido/representacionImpresa?idCfe=" + strconv.FormatInt(id, 10)
		if formato != "" {
			p += "&formato=" + formato
		}
		return p
	}
	ana := bearer(e.login("ana", anaPassword).Token)

	t.Run("the CFE's own PDF with a key and with a JWT", func(t *testing.T) {
		for name, auth := range map[string][]string{"key": {"X-API-Key", keyAlfa}, "bearer key": bearer(keyAlfa), "jwt": ana} {
			for _, c := range []issuing.ComprobanteResponse{first, second} {
				r := e.do("GET", path(c.ID, ""), nil, auth...).expect(t, http.StatusOK)
				if r.header.Get("Content-Type") != "application/pdf" || !bytes.HasPrefix(r.body, []byte("%PDF-")) {
					t.Fatalf("%s: content type %q, body %.20q", name, r.header.Get("Content-Type"), r.body)
				}
				other := first
				if c.ID == first.ID {
					other = second
				}
				shows(t, pdfTool(t, "pdftotext", r.body), []string{watermark, "Alfa S.A.", rucAlfa, c.CodSeguridad, fmt.Sprintf("Serie H Nº %d", c.Nro)},
					[]string{other.CodSeguridad})
				if cd := r.header.Get("Content-Disposition"); !strings.Contains(cd, fmt.Sprintf("101-H-%07d.pdf", c.Nro)) {
					t.Errorf("Content-Disposition %q", cd)
				}
			}
		}
	})
	t.Run("formato picks the template, default the company's", func(t *testing.T) {
		a4 := pdfTool(t, "pdfinfo", e.do("GET", path(first.ID, ""), nil, "X-API-Key", keyAlfa).expect(t, http.StatusOK).body)
		rollo := pdfTool(t, "pdfinfo", e.do("GET", path(first.ID, "Rollo"), nil, "X-API-Key", keyAlfa).expect(t, http.StatusOK).body)
		if !strings.Contains(a4, "595") || strings.Contains(rollo, "595") {
			t.Errorf("page sizes: default %q, Rollo %q; want A4 then an 80 mm roll", pageSize(a4), pageSize(rollo))
		}
		caja := e.do("GET", path(first.ID, "caja"), nil, "X-API-Key", keyAlfa).expect(t, http.StatusOK).body
		shows(t, pdfTool(t, "pdftotext", caja), []string{"Gracias por su visita", first.CodSeguridad}, nil)
	})
	t.Run("400 for a bad idCfe or an unknown formato", func(t *testing.T) {
		for _, q := range []string{"", "?idCfe=", "?idCfe=x", "?idCfe=0", "?idCfe=-3"} {
			e.do("GET", "/api/v1/cfeemitido/representacionImpresa"+q, nil, "X-API-Key", keyAlfa).expectInvalid(t, "idCfe")
		}
		e.do("GET", path(first.ID, "Ticketera"), nil, "X-API-Key", keyAlfa).expectInvalid(t, "formato")
	})
	t.Run("403 for another company's CFE, 404 for none, 401 without credentials", func(t *testing.T) {
		e.do("GET", path(first.ID, ""), nil, "X-API-Key", keyBeta).expect(t, http.StatusForbidden).errBody(t)
		e.do("GET", path(first.ID, ""), nil, bearer(e.login("carla", carlaPassword).Token)...).expect(t, http.StatusForbidden).errBody(t)
		e.do("GET", path(9999, ""), nil, "X-API-Key", keyAlfa).expect(t, http.StatusNotFound).errBody(t)
		e.do("GET", path(first.ID, ""), nil).expect(t, http.StatusUnauthorized).errBody(t)
	})
}

// zipEntries opens a zip and returns its entries' names and contents.
func zipEntries(t *testing.T, body []byte) ([]string, map[string][]byte) {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(body), int64(len(body)))
	if err != nil {
		t.Fatalf("not a zip: %v", err)
	}
	var names []string
	files := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatalf("entry %s: %v", f.Name, err)
		}
		names = append(names, f.Name)
		files[f.Name] = b
	}
	return names, files
}

func TestPDFZip(t *testing.T) {
	t.Parallel()
	e := start(t, func(c *sandbox.Config) { c.MaxZipPDFs = 3 })
	alfa, beta := e.companyIDs()
	var issued []issuing.ComprobanteResponse
	for i := range 3 {
		issued = append(issued, e.emit(ticketRequest("zip-"+strconv.Itoa(i))))
	}
	e.do("POST", "/api/v1/comprobante/emitir", ticketRequest("zip-beta"), "X-API-Key", keyBeta).expect(t, http.StatusOK)
	const path = "/api/v1/cfeemitido/descargarPdfsFiltrados"

	t.Run("each entry is the PDF of its CFE", func(t *testing.T) {
		for name, auth := range map[string][]string{
			"key": {"X-API-Key", keyAlfa}, "jwt": bearer(e.login("ana", anaPassword).Token),
		} {
			r := e.do("POST", path, reports.PDFZipRequest{CFEFilter: issuing.CFEFilter{FechaFirmaDesde: "2026-03-02", FechaFirmaHasta: "2026-03-02"}}, auth...).
				expect(t, http.StatusOK)
			if r.header.Get("Content-Type") != "application/zip" || r.header.Get("X-Cantidad-CFE") != "3" {
				t.Errorf("%s: headers %v", name, r.header)
			}
			names, files := zipEntries(t, r.body)
			if len(names) != len(issued) {
				t.Fatalf("%s: entries %v, want %d", name, names, len(issued))
			}
			for i, c := range issued {
				want := fmt.Sprintf("101-H-%07d.pdf", c.Nro)
				if names[i] != want {
					t.Errorf("%s: entry %d is %q, want %q", name, i, names[i], want)
					continue
				}
				var others []string
				for _, o := range issued {
					if o.ID != c.ID {
						others = append(others, o.CodSeguridad)
					}
				}
				shows(t, pdfTool(t, "pdftotext", files[want]), []string{watermark, c.CodSeguridad, fmt.Sprintf("Serie H Nº %d", c.Nro)}, others)
			}
		}
	})
	t.Run("a JWT user of two companies names one", func(t *testing.T) {
		beto := bearer(e.login("beto", betoPassword).Token)
		e.do("POST", path, reports.PDFZipRequest{}, beto...).expectInvalid(t, "")
		r := e.do("POST", path, reports.PDFZipRequest{CFEFilter: issuing.CFEFilter{IdEmpresa: beta}}, beto...).expect(t, http.StatusOK)
		names, files := zipEntries(t, r.body)
		if len(names) != 1 || !strings.Contains(pdfTool(t, "pdftotext", files[names[0]]), "Beta S.R.L.") {
			t.Errorf("Beta's zip holds %v", names)
		}
	})
	t.Run("formato applies to every entry", func(t *testing.T) {
		r := e.do("POST", path, reports.PDFZipRequest{Formato: "Rollo"}, "X-API-Key", keyAlfa).expect(t, http.StatusOK)
		names, files := zipEntries(t, r.body)
		for _, n := range names {
			if info := pdfTool(t, "pdfinfo", files[n]); strings.Contains(info, "595") {
				t.Errorf("%s: %s, want a roll", n, pageSize(info))
			}
		}
	})
	t.Run("a filter that selects nothing gives an empty zip", func(t *testing.T) {
		r := e.do("POST", path, reports.PDFZipRequest{CFEFilter: issuing.CFEFilter{TipoFiltro: 111}}, "X-API-Key", keyAlfa).expect(t, http.StatusOK)
		if names, _ := zipEntries(t, r.body); len(names) != 0 || r.header.Get("X-Cantidad-CFE") != "0" {
			t.Errorf("entries %v", names)
		}
	})
	t.Run("400 for bad input, 403 for another company", func(t *testing.T) {
		e.do("POST", path, reports.PDFZipRequest{CFEFilter: issuing.CFEFilter{TipoFiltro: 999}}, "X-API-Key", keyAlfa).expectInvalid(t, "tipoFiltro")
		e.do("POST", path, reports.PDFZipRequest{CFEFilter: issuing.CFEFilter{FechaFirmaDesde: "2026-13-01"}}, "X-API-Key", keyAlfa).expectInvalid(t, "fechaFirmaDesde")
		e.do("POST", path, reports.PDFZipRequest{Formato: "Ticketera"}, "X-API-Key", keyAlfa).expectInvalid(t, "formato")
		e.do("POST", path, "{", "X-API-Key", keyAlfa).expectInvalid(t, "")
		e.do("POST", path, reports.PDFZipRequest{CFEFilter: issuing.CFEFilter{IdEmpresa: beta}}, "X-API-Key", keyAlfa).expect(t, http.StatusForbidden).errBody(t)
		e.do("POST", path, reports.PDFZipRequest{CFEFilter: issuing.CFEFilter{IdEmpresa: alfa}}, bearer(e.login("carla", carlaPassword).Token)...).
			expect(t, http.StatusForbidden).errBody(t)
		e.do("POST", path, reports.PDFZipRequest{}).expect(t, http.StatusUnauthorized).errBody(t)
	})
	t.Run("past the bound a clear 400 before any PDF", func(t *testing.T) {
		e.emit(ticketRequest("zip-4"))
		r := e.do("POST", path, reports.PDFZipRequest{}, "X-API-Key", keyAlfa)
		if b := r.expectInvalid(t, ""); !strings.Contains(b.Error, "4 CFE") || !strings.Contains(b.Error, "máximo 3") {
			t.Errorf("error %q should give the count and the bound", b.Error)
		}
		if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("Content-Type %q", ct)
		}
		// A narrower filter is served again.
		r = e.do("POST", path, reports.PDFZipRequest{CFEFilter: issuing.CFEFilter{FechaFirmaHasta: "2026-03-01"}}, "X-API-Key", keyAlfa).expect(t, http.StatusOK)
		if names, _ := zipEntries(t, r.body); len(names) != 0 {
			t.Errorf("entries %v", names)
		}
	})
}

// TestPDFZip_RenderFailureAborts: a CFE that cannot be rendered once the
// zip is under way breaks the transfer; the client never gets a complete
// zip that lacks its PDF.
func TestPDFZip_RenderFailureAborts(t *testing.T) {
	t.Parallel()
	e := start(t)
	e.emit(ticketRequest("abort-1"))
	bad := e.emit(ticketRequest("abort-2"))
	e.close()
	corruptCFE(t, e.cfg.DataDir, bad.ID)
	e.open()

	req, err := http.NewRequest("POST", e.url+"/api/v1/cfeemitido/descargarPdfsFiltrados", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-Key", keyAlfa)
	res, err := testClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, readErr := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK || readErr == nil {
		t.Fatalf("status %d, read error %v: want 200 then a broken transfer", res.StatusCode, readErr)
	}
	if _, err := zip.NewReader(bytes.NewReader(body), int64(len(body))); err == nil {
		t.Errorf("the truncated body reads as a zip")
	}
}

// BenchmarkPDFZip measures descargarPdfsFiltrados over 20 e-Tickets (A4,
// with the test watermark): the time and bytes per PDF in the zip, which
// size maxZipPDFs.
func BenchmarkPDFZip(b *testing.B) {
	e, client := benchEnv(b)
	const n = 20
	for i := range n {
		e.do("POST", "/api/v1/comprobante/emitir", ticketRequest("bench-zip-"+strconv.Itoa(i)), "X-API-Key", keyBench).expect(b, http.StatusOK)
	}
	var size int64
	b.ResetTimer()
	for b.Loop() {
		req, _ := http.NewRequest("POST", e.url+"/api/v1/cfeemitido/descargarPdfsFiltrados", strings.NewReader(`{}`))
		req.Header.Set("X-API-Key", keyBench)
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		size, err = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusOK {
			b.Fatalf("status %d, %v", res.StatusCode, err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()*1000/float64(b.N*n), "ms/pdf")
	b.ReportMetric(float64(size)/n, "zipbytes/pdf")
}

// documentEndpoints are this file's, preview_test's and reapply_test's
// endpoints that decode a body, with a valid body to start from (kept apart
// from fuzzEndpoints so that each list stays with its endpoints).
var documentEndpoints = []struct{ path, seed string }{
	{"/api/v1/cfeemitido/descargarPdfsFiltrados", `{"tipoFiltro":101,"fechaFirmaDesde":"2026-03-02","formato":"Rollo"}`},
	{"/api/v1/comprobante/previsualizar", `{"uuid":"p","cfe":{"idDoc":{"tipoCfe":101,"formaPago":1},"detalles":[{"indicadorFacturacion":3,"nombreItem":"x","cantidad":1,"precioUnitario":"10"}]}}`},
	{"/api/v1/comprobante/reaplicarReferencia", `{"idCfeReferencia":2,"referencias":[1],"fecha":"2026-03-02"}`},
}

// FuzzDocumentEndpoints sends arbitrary bodies to those endpoints as a
// signed-in user with issued CFEs: never a server error, and every answer is
// a PDF, a zip or JSON.
func FuzzDocumentEndpoints(f *testing.F) {
	for i, ep := range documentEndpoints {
		f.Add(uint8(i), []byte(ep.seed))
	}
	e := start(f)
	e.emit(ticketRequest("fuzz-t"))
	e.emit(collectionRequest("fuzz-c"))
	token := e.login("ana", anaPassword).Token
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		ep := documentEndpoints[int(which)%len(documentEndpoints)]
		te := *e
		te.t = t
		r := te.do("POST", ep.path, string(body), "Content-Type", "application/json", "Authorization", "Bearer "+token)
		if r.status >= 500 {
			t.Fatalf("%s answered %d to %q: %s", ep.path, r.status, body, r.body)
		}
		switch ct := r.header.Get("Content-Type"); {
		case ct == "application/pdf" || ct == "application/zip":
			if r.status != http.StatusOK {
				t.Fatalf("%s answered %d with %s", ep.path, r.status, ct)
			}
		case !json.Valid(r.body):
			t.Fatalf("%s answered %d with a body that is not JSON: %q", ep.path, r.status, r.body)
		}
	})
}
