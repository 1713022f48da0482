package sandbox_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/sandbox/auth"
	"github.com/cfe-agent/cfe-agent/sandbox/issuing"
)

// ticketRequest is an emitir body for an e-Ticket with prices including IVA
// (montoBruto 1): 2 × 152.50 at the basic rate and 2 × 55.00 at the minimum
// rate. By DGI's formulas: basic 305.00 / 1.22 = 250.00 net + 55.00 IVA;
// minimum 110.00 / 1.10 = 100.00 net + 10.00 IVA; total to pay 415.00.
func ticketRequest(uuid string) map[string]any {
	return map[string]any{
		"uuid": uuid, "adenda": "Gracias por su compra",
		"cfe": map[string]any{
			"idDoc": map[string]any{"tipoCfe": 101, "formaPago": 1, "montoBruto": 1},
			"detalles": []map[string]any{
				{"indicadorFacturacion": 3, "nombreItem": "Yerba mate 1 kg", "cantidad": 2, "precioUnitario": "152.50"},
				{"indicadorFacturacion": 2, "nombreItem": "Pan flauta", "cantidad": 2, "precioUnitario": "55.00"},
			},
		},
	}
}

// emit issues body with Alfa's key and returns the response.
func (e *env) emit(body any) issuing.ComprobanteResponse {
	e.t.Helper()
	var got issuing.ComprobanteResponse
	e.do("POST", "/api/v1/comprobante/emitir", body, "X-API-Key", keyAlfa).expect(e.t, http.StatusOK).decode(e.t, &got)
	return got
}

// rejected decodes a rejection's response code and common error fields.
type rejected struct {
	CodRespuesta, CodigoRespuesta, MensajeRespuesta string
	errBody
}

func (r *resp) rejection(t testing.TB) rejected {
	t.Helper()
	var rej rejected
	r.decode(t, &rej)
	if rej.CodRespuesta != rej.CodigoRespuesta || rej.MensajeRespuesta != rej.Error || rej.RequestID != r.header.Get("X-Request-Id") {
		t.Errorf("inconsistent rejection %s", r.body)
	}
	return rej
}

func TestEmit(t *testing.T) {
	t.Parallel()
	e := start(t)
	got := e.emit(ticketRequest("emit-1"))
	if got.CodRespuesta != "00" || got.CodigoRespuesta != "00" || got.TipoCfe != 101 || got.Serie != "H" || got.Nro != 1 ||
		got.NroInicalCAE != 1 || got.NroFinalCAE != 1_000_000 || got.ID <= 0 {
		t.Fatalf("response %+v", got)
	}
	doc, err := cfe.ParseXML([]byte(got.XmlFirmado))
	if err != nil {
		t.Fatal(err)
	}
	tot := doc.Totales
	for name, c := range map[string]struct {
		got  any
		want string
	}{
		"MntNetoIVATasaBasica": {tot.MntNetoIVATasaBasica, "250"}, "MntIVATasaBasica": {tot.MntIVATasaBasica, "55"},
		"MntNetoIvaTasaMin": {tot.MntNetoIvaTasaMin, "100"}, "MntIVATasaMin": {tot.MntIVATasaMin, "10"},
		"MntTotal": {tot.MntTotal, "415"}, "MntPagar": {tot.MntPagar, "415"},
	} {
		if s := decString(c.got); s != c.want {
			t.Errorf("%s = %s, want %s", name, s, c.want)
		}
	}
	if doc.Emisor.RUCEmisor != rucAlfa || doc.Emisor.RznSoc != "Alfa S.A." {
		t.Errorf("emisor %+v", doc.Emisor)
	}
	if !strings.Contains(got.DatosQR, "?"+rucAlfa+",101,H,1,415.00,") || len(got.CodSeguridad) != 6 {
		t.Errorf("DatosQR %q", got.DatosQR)
	}
	t.Run("the signed XML passes xmllint and xmlsec1", func(t *testing.T) {
		testtool.MustValidateXSD(t, testtool.XSD(t, "CFEDGI.xsd"), []byte(got.XmlFirmado))
		if out, ok := testtool.XMLSecVerify(t, []byte(got.XmlFirmado), ""); !ok {
			t.Errorf("xmlsec1: %s", out)
		}
	})
	t.Run("numbers follow in order", func(t *testing.T) {
		if n := e.emit(ticketRequest("emit-2")).Nro; n != 2 {
			t.Errorf("second number %d, want 2", n)
		}
	})
	t.Run("a retry answers the same CFE", func(t *testing.T) {
		if again := e.emit(ticketRequest("emit-1")); again != got {
			t.Errorf("retry %+v\nfirst %+v", again, got)
		}
	})
	t.Run("a uuid reused for another body is a conflict", func(t *testing.T) {
		body := ticketRequest("emit-1")
		body["adenda"] = "otra"
		rej := e.do("POST", "/api/v1/comprobante/emitir", body, "X-API-Key", keyAlfa).expect(t, http.StatusConflict).rejection(t)
		if rej.CodRespuesta != "02" {
			t.Errorf("CodRespuesta %q", rej.CodRespuesta)
		}
	})
	t.Run("a request breaking DGI's rules is named and consumes no number", func(t *testing.T) {
		body := ticketRequest("emit-bad")
		body["cfe"].(map[string]any)["detalles"] = []map[string]any{}
		rej := e.do("POST", "/api/v1/comprobante/emitir", body, "X-API-Key", keyAlfa).expect(t, http.StatusBadRequest).rejection(t)
		if rej.CodRespuesta != "01" || len(rej.Details) == 0 || !strings.HasPrefix(rej.Details[0].Campo, "cfe.detalles") {
			t.Errorf("rejection %+v", rej)
		}
		if n := e.emit(ticketRequest("emit-3")).Nro; n != 3 {
			t.Errorf("next number %d, want 3", n)
		}
	})
	t.Run("malformed JSON", func(t *testing.T) {
		rej := e.do("POST", "/api/v1/comprobante/emitir", `{"cfe":`, "X-API-Key", keyAlfa).expect(t, http.StatusBadRequest).rejection(t)
		if rej.CodRespuesta != "01" {
			t.Errorf("rejection %+v", rej)
		}
	})
	t.Run("a JWT names the company with idEmpresa", func(t *testing.T) {
		beto := bearer(e.login("beto", betoPassword).Token)
		e.do("POST", "/api/v1/comprobante/emitir", ticketRequest("beto-1"), beto...).expect(t, http.StatusBadRequest)
		var companies []auth.CompanyResponse
		e.do("GET", "/api/v1/usuario/empresas", nil, beto...).expect(t, http.StatusOK).decode(t, &companies)
		body := ticketRequest("beto-1")
		body["idEmpresa"] = strconv.FormatInt(companies[1].IdEmpresa, 10) // Beta, as a PHP client sends it
		var got issuing.ComprobanteResponse
		e.do("POST", "/api/v1/comprobante/emitir", body, beto...).expect(t, http.StatusOK).decode(t, &got)
		if !strings.Contains(got.DatosQR, rucBeta) || got.Nro != 1 {
			t.Errorf("Beta's first CFE: %+v", got)
		}
		// A key with another company's idEmpresa is 403.
		e.do("POST", "/api/v1/comprobante/emitir", body, "X-API-Key", keyAlfa).expect(t, http.StatusForbidden)
	})
	t.Run("the emitted CFE is listed", func(t *testing.T) {
		var d issuing.IssuedDetail
		e.do("GET", "/api/v1/cfeemitido/"+strconv.FormatInt(got.ID, 10), nil, "X-API-Key", keyAlfa).expect(t, http.StatusOK).decode(t, &d)
		if d.Origen != "emitido" || d.Total.String() != "415" || d.XmlFirmado != got.XmlFirmado || d.Adenda != "Gracias por su compra" {
			t.Errorf("detail %+v", d.IssuedSummary)
		}
	})
}

func decString(v any) string {
	if d, ok := v.(interface{ String() string }); ok && d != nil {
		return d.String()
	}
	return "<nil>"
}

func TestSignXML(t *testing.T) {
	t.Parallel()
	e := start(t)
	unsigned, err := cfe.MarshalXML(ticket(1, t0)) // serie A, number 1: replaced by the sandbox's
	if err != nil {
		t.Fatal(err)
	}
	var got issuing.ComprobanteResponse
	e.do("POST", "/api/v1/comprobante/firmarXml", issuing.SignXMLRequest{UUID: "xml-1", XML: string(unsigned)}, "X-API-Key", keyAlfa).
		expect(t, http.StatusOK).decode(t, &got)
	if got.CodRespuesta != "00" || got.Serie != "H" || got.Nro != 1 || got.TipoCfe != 101 {
		t.Fatalf("response %+v", got)
	}
	if out, ok := testtool.XMLSecVerify(t, []byte(got.XmlFirmado), ""); !ok {
		t.Errorf("xmlsec1: %s", out)
	}
	t.Run("another company's RUC", func(t *testing.T) {
		rej := e.do("POST", "/api/v1/comprobante/firmarXml", issuing.SignXMLRequest{UUID: "xml-2", XML: string(unsigned)}, "X-API-Key", keyBeta).
			expect(t, http.StatusBadRequest).rejection(t)
		if rej.CodRespuesta != "01" || len(rej.Details) != 1 || rej.Details[0].Campo != "Encabezado/Emisor/RUCEmisor" {
			t.Errorf("rejection %+v", rej)
		}
	})
	t.Run("not a CFE", func(t *testing.T) {
		rej := e.do("POST", "/api/v1/comprobante/firmarXml", issuing.SignXMLRequest{UUID: "xml-3", XML: "<x/>"}, "X-API-Key", keyAlfa).
			expect(t, http.StatusBadRequest).rejection(t)
		if rej.CodRespuesta != "01" {
			t.Errorf("rejection %+v", rej)
		}
	})
	t.Run("totals that do not add up", func(t *testing.T) {
		c := ticket(1, t0)
		*c.Totales.MntPagar = c.Totales.MntPagar.Add(*dec("1"))
		raw, _ := cfe.MarshalXML(c)
		e.do("POST", "/api/v1/comprobante/firmarXml", issuing.SignXMLRequest{UUID: "xml-4", XML: string(raw)}, "X-API-Key", keyAlfa).
			expect(t, http.StatusBadRequest)
	})
	t.Run("uuid and xml are required", func(t *testing.T) {
		rej := e.do("POST", "/api/v1/comprobante/firmarXml", map[string]string{}, "X-API-Key", keyAlfa).expect(t, http.StatusBadRequest).rejection(t)
		if len(rej.Details) != 2 || rej.Details[0].Campo != "uuid" || rej.Details[1].Campo != "xml" {
			t.Errorf("details %+v", rej.Details)
		}
	})
}
