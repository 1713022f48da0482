package sandbox_test

import (
	"bytes"
	"encoding/pem"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/sandbox/issuing"
)

// envelopeFactura is an e-Factura of Alfa to the company of RUC ruc.
func envelopeFactura(uuid, ruc, adenda string) map[string]any {
	return map[string]any{
		"uuid": uuid, "adenda": adenda,
		"cfe": map[string]any{
			"idDoc": map[string]any{"tipoCfe": 111, "formaPago": 1, "montoBruto": 1},
			"receptor": map[string]any{"tipoDocumento": 2, "codigoPais": "UY", "documento": ruc, "razonSocial": "Cliente S.A.",
				"direccion": "Rincón 500", "ciudad": "Montevideo", "departamento": "Montevideo"},
			"detalles": []map[string]any{
				{"indicadorFacturacion": 3, "nombreItem": "Yerba mate 1 kg", "cantidad": 10, "precioUnitario": "152.50"},
			},
		},
	}
}

// storedXML is the signed XML the sandbox keeps for CFE id.
func (e *env) storedXML(id int64) []byte {
	e.t.Helper()
	var d issuing.IssuedDetail
	e.do("GET", "/api/v1/cfeemitido/"+strconv.FormatInt(id, 10), nil, "X-API-Key", keyAlfa).expect(e.t, http.StatusOK).decode(e.t, &d)
	return []byte(d.XmlFirmado)
}

// checkEnvelope validates an envelope with xmllint, cuts its CFEs out and
// checks each is the stored CFE byte for byte and verifies with xmlsec1 under
// the Caratula's certificate. It returns the parsed envelope.
func (e *env) checkEnvelope(t *testing.T, r *resp, xsd string, ids ...int64) *cfe.Envelope {
	// The certificate file lives in the top test's folder: xmlsec1 reads a comma in a
	// key file name as a list separator, and subtest names may hold commas.
	dir := e.t.TempDir()
	t.Helper()
	if ct := r.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/xml") {
		t.Fatalf("Content-Type %q", ct)
	}
	testtool.MustValidateXSD(t, testtool.XSD(t, xsd), r.body)
	env, err := cfe.ParseEnvelope(r.body)
	if err != nil {
		t.Fatal(err)
	}
	if len(env.CFEs) != len(ids) || env.Caratula.CantCFE != len(ids) || env.Caratula.RUCEmisor != rucAlfa || !env.Caratula.Fecha.Equal(t0) {
		t.Fatalf("caratula %+v with %d CFEs, want %d", env.Caratula, len(env.CFEs), len(ids))
	}
	want := fmt.Sprintf(`attachment; filename="Sob_%s_20260302_%d.xml"`, rucAlfa, env.Caratula.IdEmisor)
	if got := r.header.Get("Content-Disposition"); got != want {
		t.Errorf("Content-Disposition %q, want %q", got, want)
	}
	certPEM := filepath.Join(dir, "caratula.pem")
	if err := os.WriteFile(certPEM, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: env.Caratula.Certificate}), 0o600); err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		if !bytes.Equal(env.CFEs[i].XML, e.storedXML(id)) {
			t.Errorf("CFE %d of the envelope is not the stored CFE %d byte for byte", i+1, id)
		}
		if out, ok := testtool.XMLSecVerify(t, env.CFEs[i].XML, certPEM); !ok {
			t.Errorf("xmlsec1 rejects CFE %d with the Caratula's certificate:\n%s", i+1, out)
		}
	}
	return env
}

func TestEnvelopes(t *testing.T) {
	t.Parallel()
	e := start(t)
	tck := e.emit(ticketRequest("env-t1")).ID
	toBeta := e.emit(envelopeFactura("env-f1", rucBeta, "Pagadero a 30 días")).ID
	toDGI := e.emit(envelopeFactura("env-f2", cfe.RUCDGI, "")).ID
	toBeta2 := e.emit(envelopeFactura("env-f3", rucBeta, "")).ID
	key := []string{"X-API-Key", keyAlfa}
	ana := bearer(e.login("ana", anaPassword).Token)
	const authority, receiver = "/api/v1/cfeemitido/generarSobreAutoridad", "/api/v1/cfeemitido/generarSobreReceptor"

	t.Run("authority envelope by ids with the API key", func(t *testing.T) {
		r := e.do("POST", authority, map[string]any{"ids": []int64{tck, toBeta, toDGI}}, key...).expect(t, http.StatusOK)
		env := e.checkEnvelope(t, r, "EnvioCFE.xsd", tck, toBeta, toDGI)
		if env.Kind != cfe.EnvelopeDGI || env.Caratula.RutReceptor != cfe.RUCDGI || env.Caratula.IdEmisor != 1 {
			t.Errorf("caratula %+v", env.Caratula)
		}
	})
	t.Run("authority envelope by filter with a JWT and the next number", func(t *testing.T) {
		r := e.do("POST", authority, map[string]any{"tipoFiltro": 111, "fechaFirmaDesde": today, "fechaFirmaHasta": today}, ana...).expect(t, http.StatusOK)
		env := e.checkEnvelope(t, r, "EnvioCFE.xsd", toBeta, toDGI, toBeta2)
		if env.Caratula.IdEmisor != 2 {
			t.Errorf("Idemisor %d, want 2", env.Caratula.IdEmisor)
		}
	})
	t.Run("receiver envelope by filter: only the CFEs addressed to the RUC and their adenda", func(t *testing.T) {
		r := e.do("POST", receiver, map[string]any{"rucReceptor": rucBeta}, ana...).expect(t, http.StatusOK)
		env := e.checkEnvelope(t, r, "EnvioCFE_entreEmpresas.xsd", toBeta, toBeta2)
		if env.Kind != cfe.EnvelopeReceiver || env.Caratula.RutReceptor != rucBeta || env.CFEs[0].Adenda != "Pagadero a 30 días" || env.CFEs[1].Adenda != "" {
			t.Errorf("caratula %+v, adendas %q %q", env.Caratula, env.CFEs[0].Adenda, env.CFEs[1].Adenda)
		}
	})
	t.Run("receiver envelope by ids with the API key and a chosen number", func(t *testing.T) {
		r := e.do("POST", receiver, map[string]any{"rucReceptor": cfe.RUCDGI, "ids": []int64{toDGI}, "idEmisor": 777}, key...).expect(t, http.StatusOK)
		if env := e.checkEnvelope(t, r, "EnvioCFE_entreEmpresas.xsd", toDGI); env.Caratula.IdEmisor != 777 {
			t.Errorf("Idemisor %d", env.Caratula.IdEmisor)
		}
	})
	t.Run("another company's CFEs are 403, a missing one 404", func(t *testing.T) {
		carla := bearer(e.login("carla", carlaPassword).Token)
		for _, c := range []struct {
			path string
			body map[string]any
			auth []string
			want int
		}{
			{authority, map[string]any{"ids": []int64{tck}}, []string{"X-API-Key", keyBeta}, http.StatusForbidden},
			{receiver, map[string]any{"ids": []int64{toBeta}, "rucReceptor": rucBeta}, carla, http.StatusForbidden},
			{authority, map[string]any{"idEmpresa": 1}, []string{"X-API-Key", keyBeta}, http.StatusForbidden},
			{authority, map[string]any{"ids": []int64{999}}, key, http.StatusNotFound},
		} {
			b := e.do("POST", c.path, c.body, c.auth...).expect(t, c.want).errBody(t)
			if b.Code == "" || b.Error == "" {
				t.Errorf("error body %+v", b)
			}
		}
	})
	t.Run("no credentials is 401", func(t *testing.T) {
		e.do("POST", authority, map[string]any{"ids": []int64{tck}}).expect(t, http.StatusUnauthorized)
	})
	many := make([]int64, cfe.MaxEnvelopeCFEs+1)
	for i := range many {
		many[i] = int64(i + 1)
	}
	for _, c := range []struct {
		name, path string
		body       any
		campo, msg string
	}{
		{"not JSON", authority, "{", "", "JSON"},
		{"ids and filter", authority, map[string]any{"ids": []int64{tck}, "tipoFiltro": 101}, "ids", "no ambos"},
		{"empty ids", authority, `{"ids": []}`, "ids", "al menos un CFE"},
		{"empty ids with the company", authority, map[string]any{"ids": []int64{}, "idEmpresa": 1}, "ids", "al menos un CFE"},
		{"receiver: empty ids", receiver, map[string]any{"ids": []int64{}, "rucReceptor": cfe.RUCDGI}, "ids", "al menos un CFE"},
		{"251 ids", authority, map[string]any{"ids": many}, "ids", "hasta 250"},
		{"repeated id", authority, map[string]any{"ids": []int64{tck, tck}}, "ids[1]", "repetido"},
		{"bad filter", authority, map[string]any{"tipoFiltro": 999}, "tipoFiltro", "código de tipo"},
		{"nothing matches", authority, map[string]any{"tipoFiltro": 181}, "filtro", "ningún CFE"},
		{"authority to another RUC", authority, map[string]any{"rucReceptor": rucBeta}, "rucReceptor", cfe.RUCDGI},
		{"negative idEmisor", authority, map[string]any{"idEmisor": -1}, "idEmisor", "0 a 9999999999"},
		{"receiver without RUC", receiver, map[string]any{"ids": []int64{toBeta}}, "rucReceptor", "obligatorio"},
		{"receiver with a bad RUC", receiver, map[string]any{"rucReceptor": "212222220012"}, "rucReceptor", "no es un RUC válido"},
		{"receiver: a CFE to someone else", receiver, map[string]any{"rucReceptor": rucBeta, "ids": []int64{toBeta, tck}}, "CFE[2]", "no está dirigido al RUC " + rucBeta},
		{"receiver: nothing addressed to it", receiver, map[string]any{"rucReceptor": rucAlfa}, "rucReceptor", "ningún CFE"},
	} {
		t.Run("400: "+c.name, func(t *testing.T) {
			b := e.do("POST", c.path, c.body, key...).expect(t, http.StatusBadRequest).errBody(t)
			if b.Code != cfe.EINVALID || !strings.Contains(b.Error+fmt.Sprint(b.Details), c.msg) {
				t.Errorf("body %+v, want %q", b, c.msg)
			}
			if c.campo != "" && (len(b.Details) == 0 || b.Details[0].Campo != c.campo) {
				t.Errorf("details %+v, want campo %s", b.Details, c.campo)
			}
		})
	}
	t.Run("400: CFEs signed with two certificates", func(t *testing.T) {
		delivered := e.deliver("env-agent", sign(t, agentSigner(t), ticket(1, t0)).XML)
		b := e.do("POST", authority, map[string]any{"ids": []int64{tck, delivered}}, key...).expect(t, http.StatusBadRequest).errBody(t)
		if !strings.Contains(fmt.Sprint(b.Details), "un solo certificado por sobre") {
			t.Errorf("body %+v", b)
		}
	})
	t.Run("refused requests used no envelope number", func(t *testing.T) {
		r := e.do("POST", authority, map[string]any{"ids": []int64{toDGI}}, key...).expect(t, http.StatusOK)
		// 1 to 3 were taken above; 777 was the caller's, not the company's.
		if env := e.checkEnvelope(t, r, "EnvioCFE.xsd", toDGI); env.Caratula.IdEmisor != 4 {
			t.Errorf("Idemisor %d, want 4", env.Caratula.IdEmisor)
		}
	})
}

// A filter that selects more CFEs than an envelope holds is refused with the
// count, and uses no envelope number.
func TestEnvelopes_FilterOverTheLimit(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("issues 251 CFEs")
	}
	e := start(t)
	ana := bearer(e.login("ana", anaPassword).Token)
	for i := range cfe.MaxEnvelopeCFEs + 1 {
		e.do("POST", "/api/v1/comprobante/emitir", ticketRequest(fmt.Sprintf("lim-%d", i)), ana...).expect(t, http.StatusOK)
	}
	b := e.do("POST", "/api/v1/cfeemitido/generarSobreAutoridad", map[string]any{"tipoFiltro": 101}, ana...).expect(t, http.StatusBadRequest).errBody(t)
	if len(b.Details) != 1 || b.Details[0].Campo != "filtro" || !strings.Contains(b.Details[0].Mensaje, "selecciona 251 CFE y un sobre admite hasta 250") {
		t.Fatalf("body %+v", b)
	}
	r := e.do("POST", "/api/v1/cfeemitido/generarSobreAutoridad", map[string]any{"tipoFiltro": 101, "fechaFirmaHasta": "2026-03-01"}, ana...).expect(t, http.StatusBadRequest)
	if !strings.Contains(string(r.body), "ningún CFE") {
		t.Fatalf("%s", r.body)
	}
	r = e.do("POST", "/api/v1/cfeemitido/generarSobreAutoridad", map[string]any{"ids": []int64{1, 2}}, ana...).expect(t, http.StatusOK)
	if env := e.checkEnvelope(t, r, "EnvioCFE.xsd", 1, 2); env.Caratula.IdEmisor != 1 {
		t.Errorf("Idemisor %d, want 1", env.Caratula.IdEmisor)
	}
}
