package sandbox_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// fuzzEndpoints are the endpoints that decode a request body, with the
// content type they expect and a valid body to start from.
var fuzzEndpoints = []struct {
	path, ctype, seed string
}{
	{"/api/auth/login", "application/json", `{"username":"ana","secret":"x"}`},
	{"/api/auth/refresh", "application/json", `{"refresh_token":"abc"}`},
	{"/api/auth/recuperarClave", "application/json", `{"username":"nadie"}`},
	{"/api/v1/apikeys", "application/json", `{"nombre":"caja","descripcion":"d"}`},
	{"/api/v1/apikeys/1/rate-limit", "application/json", `{"limitePorMinuto":5,"limitePorHora":50}`},
	{"/api/v1/puntoemision/editar", "application/json", `{"idPde":2,"Empresa":2,"CodigoTerminal":"T","RangoCae101":3}`},
	{"/api/v1/comprobante/emitir", "application/json", `{"uuid":"f","cfe":{"idDoc":{"tipoCfe":101,"formaPago":1},"detalles":[{"indicadorFacturacion":3,"nombreItem":"x","cantidad":1,"precioUnitario":"10"}]}}`},
	{"/api/v1/comprobante/firmarXml", "application/json", `{"uuid":"g","xml":"<CFE/>"}`},
	{"/api/v1/comprobante/recibirFirmado", "application/json", `{"uuid":"h","xmlFirmado":"<CFE/>"}`},
	{"/api/v1/comprobante/anular", "application/x-www-form-urlencoded", `idCfeReferencia=1&fecha=2026-03-02`},
	{"/api/v1/cfeemitido/pdf", "application/json", `{"tipo_cfe":101,"serie":"H","numero":1,"variant":"Rollo"}`},
	{"/api/v1/cfeemitido/generarSobreAutoridad", "application/json", `{"tipoFiltro":101,"fechaFirmaDesde":"2026-03-02"}`},
	{"/api/v1/cfeemitido/generarSobreReceptor", "application/json", `{"ids":[1],"rucReceptor":"214844360018","idEmisor":3}`},
}

// FuzzEndpoints sends arbitrary bodies to every endpoint that decodes one,
// as a signed-in user: the server must answer each with a client error or a
// success in the endpoint's shape, never a server error.
func FuzzEndpoints(f *testing.F) {
	for i, ep := range fuzzEndpoints {
		f.Add(uint8(i), []byte(ep.seed))
	}
	e := start(f)
	token := e.login("ana", anaPassword).Token
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		ep := fuzzEndpoints[int(which)%len(fuzzEndpoints)]
		te := *e // the same server, reporting to this input's t
		te.t = t
		r := te.do("POST", ep.path, string(body), "Content-Type", ep.ctype, "Authorization", "Bearer "+token)
		if r.status >= 500 {
			t.Fatalf("%s answered %d to %q: %s", ep.path, r.status, body, r.body)
		}
		if ct := r.header.Get("Content-Type"); ct != "application/pdf" && !strings.HasPrefix(ct, "application/xml") && !json.Valid(r.body) {
			t.Fatalf("%s answered %d with a body that is not JSON: %q", ep.path, r.status, r.body)
		}
		if r.status == http.StatusTooManyRequests && r.header.Get("Retry-After") == "" {
			t.Fatalf("%s: 429 without Retry-After", ep.path)
		}
	})
}
