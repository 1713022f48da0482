package sandbox_test

import (
	"bytes"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/sandbox"
)

// Marks of a preview (pdf.PreviewText and the number it prints).
const (
	previewMark   = "VISTA PREVIA - SIN VALOR FISCAL"
	previewNumber = "Vista previa: sin serie ni número"
)

// issuedCount returns how many CFEs buscar lists for Alfa.
func (e *env) issuedCount() int {
	e.t.Helper()
	var list []sandbox.IssuedSummary
	e.do("GET", "/api/v1/cfeemitido/buscar", nil, "X-API-Key", keyAlfa).expect(e.t, http.StatusOK).decode(e.t, &list)
	return len(list)
}

func TestPreview(t *testing.T) {
	t.Parallel()
	e := start(t)
	_, beta := e.companyIDs()
	if n := e.emit(ticketRequest("prev-0")).Nro; n != 1 {
		t.Fatalf("first number %d", n)
	}
	const path = "/api/v1/comprobante/previsualizar"

	var token string
	var first []byte
	t.Run("the emitir body as a marked PDF, with a token", func(t *testing.T) {
		r := e.do("POST", path, ticketRequest("prev-1"), "X-API-Key", keyAlfa).expect(t, http.StatusOK)
		if r.header.Get("Content-Type") != "application/pdf" || !bytes.HasPrefix(r.body, []byte("%PDF-")) {
			t.Fatalf("content type %q, body %.20q", r.header.Get("Content-Type"), r.body)
		}
		token, first = r.header.Get("X-Preview-Token"), r.body
		if len(token) < 40 || r.header.Get("Content-Location") != path+"/"+token {
			t.Errorf("token %q, Content-Location %q", token, r.header.Get("Content-Location"))
		}
		if exp, err := time.Parse(time.RFC3339, r.header.Get("X-Preview-Expires")); err != nil || !exp.Equal(t0.Add(10*time.Minute)) {
			t.Errorf("X-Preview-Expires %q, want %s", r.header.Get("X-Preview-Expires"), t0.Add(10*time.Minute))
		}
		shows(t, pdfTool(t, "pdftotext", r.body),
			[]string{previewMark, previewNumber, watermark, "Alfa S.A.", rucAlfa, "Yerba mate 1 kg", "Pan flauta", "415,00", "Gracias por su compra"},
			[]string{"Serie H", "CAE Nº"})
	})
	t.Run("no number consumed, nothing stored, the uuid still free", func(t *testing.T) {
		if n := e.issuedCount(); n != 1 {
			t.Errorf("buscar lists %d CFEs after the preview, want 1", n)
		}
		// prev-1 was only previewed: issuing another body under it is no conflict.
		other := ticketRequest("prev-1")
		other["adenda"] = "otra adenda"
		if got := e.emit(other); got.Nro != 2 {
			t.Errorf("the next emission got number %d, want 2", got.Nro)
		}
	})
	t.Run("with a JWT, and the JWT user's company by idEmpresa", func(t *testing.T) {
		e.do("POST", path, ticketRequest("prev-2"), bearer(e.login("ana", anaPassword).Token)...).expect(t, http.StatusOK)
		beto := bearer(e.login("beto", betoPassword).Token)
		e.do("POST", path, ticketRequest("prev-2"), beto...).expectInvalid(t, "idEmpresa")
		body := ticketRequest("prev-2")
		body["idEmpresa"] = strconv.FormatInt(beta, 10)
		shows(t, pdfTool(t, "pdftotext", e.do("POST", path, body, beto...).expect(t, http.StatusOK).body), []string{"Beta S.R.L.", previewMark}, nil)
		e.do("POST", path, body, "X-API-Key", keyAlfa).expect(t, http.StatusForbidden).errBody(t)
	})
	t.Run("formato picks the template", func(t *testing.T) {
		r := e.do("POST", path+"?formato=Rollo", ticketRequest("prev-3"), "X-API-Key", keyAlfa).expect(t, http.StatusOK)
		if info := pdfTool(t, "pdfinfo", r.body); bytes.Contains([]byte(info), []byte("595")) {
			t.Errorf("Rollo preview: %s", pageSize(info))
		}
		e.do("POST", path+"?formato=Ticketera", ticketRequest("prev-3"), "X-API-Key", keyAlfa).expectInvalid(t, "formato")
	})
	t.Run("validation errors are emitir's", func(t *testing.T) {
		noLines := ticketRequest("prev-bad")
		noLines["cfe"].(map[string]any)["detalles"] = []map[string]any{}
		badType := ticketRequest("prev-bad")
		badType["cfe"].(map[string]any)["idDoc"] = map[string]any{"tipoCfe": 999}
		longUUID := ticketRequest(strings.Repeat("u", 65))
		for name, body := range map[string]any{"no lines": noLines, "unknown type": badType, "not JSON": `{"cfe":`, "uuid too long": longUUID} {
			want := e.do("POST", "/api/v1/comprobante/emitir", body, "X-API-Key", keyAlfa)
			got := e.do("POST", path, body, "X-API-Key", keyAlfa)
			if got.status != http.StatusBadRequest || got.status != want.status {
				t.Errorf("%s: status %d, emitir %d", name, got.status, want.status)
				continue
			}
			g, w := got.rejection(t), want.rejection(t)
			if g.CodRespuesta != w.CodRespuesta || g.Error != w.Error || !reflect.DeepEqual(g.Details, w.Details) {
				t.Errorf("%s: preview %+v\nemitir %+v", name, g, w)
			}
		}
		if n := e.issuedCount(); n != 2 {
			t.Errorf("%d CFEs listed, want 2", n)
		}
	})
	t.Run("401 without credentials", func(t *testing.T) {
		e.do("POST", path, ticketRequest("prev-4")).expect(t, http.StatusUnauthorized).errBody(t)
	})

	t.Run("the token serves the same PDF to its company only", func(t *testing.T) {
		for _, auth := range [][]string{{"X-API-Key", keyAlfa}, bearer(e.login("ana", anaPassword).Token), bearer(e.login("beto", betoPassword).Token)} {
			r := e.do("GET", path+"/"+token, nil, auth...).expect(t, http.StatusOK)
			if !bytes.Equal(r.body, first) || r.header.Get("Content-Type") != "application/pdf" {
				t.Errorf("the token's PDF differs from the preview's")
			}
		}
		e.do("GET", path+"/"+token, nil, "X-API-Key", keyBeta).expect(t, http.StatusForbidden).errBody(t)
		e.do("GET", path+"/"+token, nil, bearer(e.login("carla", carlaPassword).Token)...).expect(t, http.StatusForbidden).errBody(t)
		e.do("GET", path+"/"+token, nil).expect(t, http.StatusUnauthorized).errBody(t)
		e.do("GET", path+"/"+token+"x", nil, "X-API-Key", keyAlfa).expect(t, http.StatusNotFound).errBody(t)
	})
	t.Run("the token expires", func(t *testing.T) {
		e.clock.Advance(10*time.Minute - time.Second)
		e.do("GET", path+"/"+token, nil, "X-API-Key", keyAlfa).expect(t, http.StatusOK)
		e.clock.Advance(time.Second)
		if b := e.do("GET", path+"/"+token, nil, "X-API-Key", keyAlfa).expect(t, http.StatusNotFound).errBody(t); b.Code != "not_found" {
			t.Errorf("expired token: %+v", b)
		}
	})
}

func TestPreview_Production(t *testing.T) {
	t.Parallel()
	e := start(t, func(c *sandbox.Config) {
		c.Environment = sandbox.EnvProduccion
		c.Seed.APIKeys = []sandbox.SeedKey{{Empresa: rucAlfa, Nombre: "caja", Key: "xx_live_alfa-known-key-0000000000000001"}}
	})
	r := e.do("POST", "/api/v1/comprobante/previsualizar", ticketRequest("prod-1"), "X-API-Key", "xx_live_alfa-known-key-0000000000000001").
		expect(t, http.StatusOK)
	// Without the test watermark, the preview mark still shows.
	shows(t, pdfTool(t, "pdftotext", r.body), []string{previewMark, previewNumber, "Alfa S.A."}, []string{watermark})
}
