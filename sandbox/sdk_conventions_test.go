package sandbox_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/sandbox/issuing"
)

// hostedNamesCreditNote is a credit note of e-Ticket H-nro as production
// integrations of the hosted service (and the vendor's PHP SDK) send it:
// idEmpresa 0, empty arrays for unused objects, {} complementoFiscal, the
// hosted names of payment means and references, and the fields DGI has no
// place for.
func hostedNamesCreditNote(uuid string, nro int64) map[string]any {
	return map[string]any{
		"uuid": uuid, "idEmpresa": 0, "codComercio": "", "codTerminal": "", "adenda": "", "destinatariosPdf": "",
		"origen": "3", "esAppMovil": 0, "idComprobanteGuardado": 0, "idVendedor": 0, "idCaja": nil,
		"registrarComprobanteInterno": 1,
		"cfe": map[string]any{
			"idDoc":  map[string]any{"tipoCfe": 102, "formaPago": 1},
			"emisor": []any{}, "totales": []any{}, "complementoFiscal": map[string]any{}, "receptor": []any{},
			"detalles": []map[string]any{{"numeroLineaDetalle": 1, "indicadorFacturacion": 3,
				"nombreItem": "Devolución yerba", "unidadMedida": "kg", "cantidad": 1, "precioUnitario": "122.00"}},
			"mediosPago": []map[string]any{{"numeroLineaMedioPago": 1, "idMedioPago": 3, "glosaMedioPago": "Tarjeta de débito",
				"ordenMedioPago": 1, "valorPago": "148.84", "tipoMonedaMedioPago": "UYU", "tipoCambioMedioPago": 1,
				"idCuentaBanco": 12, "titular": "Titular Ignorado", "nomDoc": "1234", "proveedorPos": "ProveedorIgnorado"}},
			"referencias": []map[string]any{{"numeroLineaReferencia": 1, "tipoDocumentoReferencia": 101,
				"serieFacturaReferencia": "H", "numeroFacturaReferencia": nro, "fechaFacturaReferencia": today,
				"tipoMonedaCfeReferencia": "UYU", "razonReferencia": "Devolución de mercadería"}},
			"descuentosRecargosGlobales": []any{}, "subTotalesInfo": []any{},
		},
	}
}

// checkHostedNames checks that a signed CFE carries the DGI fields the hosted
// names map to, and none of the ignored values, and that it is XSD-valid and
// verifies.
func checkHostedNames(t *testing.T, signed []byte, nro int64) {
	t.Helper()
	testtool.MustValidateXSD(t, testtool.XSD(t, "CFEDGI.xsd"), signed)
	if out, ok := testtool.XMLSecVerify(t, signed, ""); !ok {
		t.Errorf("xmlsec1: %s", out)
	}
	xml := string(signed)
	for _, want := range []string{"<NroLinMP>1</NroLinMP>", "<CodMP>3</CodMP>", "<GlosaMP>Tarjeta de débito</GlosaMP>",
		"<OrdenMP>1</OrdenMP>", "<NroLinRef>1</NroLinRef>", "<TpoDocRef>101</TpoDocRef>", "<Serie>H</Serie>",
		"<NroCFERef>" + strconv.FormatInt(nro, 10) + "</NroCFERef>", "<RazonRef>Devolución de mercadería</RazonRef>",
		"<FechaCFEref>" + today + "</FechaCFEref>", "<UniMed>kg</UniMed>"} {
		if !strings.Contains(xml, want) {
			t.Errorf("the signed XML lacks %s", want)
		}
	}
	for _, ignored := range []string{"Titular Ignorado", "ProveedorIgnorado", "Compl_Fiscal"} {
		if strings.Contains(xml, ignored) {
			t.Errorf("the signed XML carries %q", ignored)
		}
	}
	doc, err := cfe.ParseXML(signed)
	if err != nil {
		t.Fatal(err)
	}
	// 122.00 net at the basic rate: 148.84 to pay, all by debit card.
	if len(doc.MediosPago) != 1 || doc.Totales.MntPagar == nil || !doc.MediosPago[0].ValorPago.Equal(*doc.Totales.MntPagar) ||
		doc.MediosPago[0].ValorPago.StringFixed(2) != "148.84" {
		t.Errorf("payment means %+v, want one of the 148.84 to pay", doc.MediosPago)
	}
}

// TestEmit_HostedConventions: the conventions of real callers of the hosted
// service, accepted by emitir.
func TestEmit_HostedConventions(t *testing.T) {
	t.Parallel()
	e := start(t)
	issued := e.emit(ticketRequest("conv-t-1"))

	t.Run("hosted names with a key and idEmpresa 0", func(t *testing.T) {
		got := e.emit(hostedNamesCreditNote("conv-nc-1", issued.Nro))
		if got.TipoCfe != 102 || got.CodRespuesta != "00" {
			t.Fatalf("response %+v", got)
		}
		checkHostedNames(t, []byte(got.XmlFirmado), issued.Nro)
	})
	t.Run("idEmpresa 0 with a JWT of one company", func(t *testing.T) {
		var got issuing.ComprobanteResponse
		body := ticketRequest("conv-t-2")
		body["idEmpresa"] = 0
		e.do("POST", "/api/v1/comprobante/emitir", body, bearer(e.login("ana", anaPassword).Token)...).
			expect(t, http.StatusOK).decode(t, &got)
		if !strings.Contains(got.DatosQR, rucAlfa) {
			t.Errorf("not Alfa's: %+v", got)
		}
	})
	t.Run("idEmpresa 0 is absent: a user of two companies must name one", func(t *testing.T) {
		body := ticketRequest("conv-t-3")
		body["idEmpresa"] = 0
		b := e.do("POST", "/api/v1/comprobante/emitir", body, bearer(e.login("beto", betoPassword).Token)...).
			expect(t, http.StatusBadRequest).errBody(t)
		if len(b.Details) != 1 || b.Details[0].Campo != "idEmpresa" {
			t.Errorf("details %+v", b.Details)
		}
	})
	t.Run("a negative idEmpresa is refused", func(t *testing.T) {
		body := ticketRequest("conv-t-4")
		body["idEmpresa"] = -1
		e.do("POST", "/api/v1/comprobante/emitir", body, "X-API-Key", keyAlfa).expect(t, http.StatusBadRequest)
	})
	t.Run("an unknown field is still refused and consumes nothing", func(t *testing.T) {
		body := hostedNamesCreditNote("conv-nc-2", issued.Nro)
		body["cfe"].(map[string]any)["mediosPago"].([]map[string]any)[0]["valorPagado"] = 1
		rej := e.do("POST", "/api/v1/comprobante/emitir", body, "X-API-Key", keyAlfa).expect(t, http.StatusBadRequest).rejection(t)
		if len(rej.Details) != 1 || rej.Details[0].Campo != "cfe.mediosPago[0].valorPagado" || rej.Details[0].Mensaje != "campo desconocido" {
			t.Errorf("details %+v", rej.Details)
		}
		if n := e.emit(ticketRequest("conv-t-5")).Nro; n != issued.Nro+2 {
			t.Errorf("next e-Ticket %d, want %d: the refused request consumed a number", n, issued.Nro+2)
		}
	})
	t.Run("previsualizar takes the same body and consumes no number", func(t *testing.T) {
		next := e.emit(ticketRequest("conv-t-6")).Nro
		r := e.do("POST", "/api/v1/comprobante/previsualizar", hostedNamesCreditNote("conv-nc-prev", issued.Nro), "X-API-Key", keyAlfa).
			expect(t, http.StatusOK)
		shows(t, pdfTool(t, "pdftotext", r.body), []string{previewMark, "Devolución yerba"}, nil)
		if n := e.emit(ticketRequest("conv-t-7")).Nro; n != next+1 {
			t.Errorf("e-Ticket after the preview got %d, want %d", n, next+1)
		}
	})
	t.Run("firmarXml and the PDF take idEmpresa 0", func(t *testing.T) {
		e.do("POST", "/api/v1/cfeemitido/pdf", map[string]any{"uuid": "conv-t-1", "idEmpresa": 0}, "X-API-Key", keyAlfa).
			expect(t, http.StatusOK)
		unsigned, err := cfe.MarshalXML(ticket(1, t0))
		if err != nil {
			t.Fatal(err)
		}
		e.do("POST", "/api/v1/comprobante/firmarXml", map[string]any{"uuid": "conv-xml-1", "xml": string(unsigned), "idEmpresa": 0},
			"X-API-Key", keyAlfa).expect(t, http.StatusOK)
	})
}

// TestAnnul_JSONBody: anular takes its form's fields as JSON too.
func TestAnnul_JSONBody(t *testing.T) {
	t.Parallel()
	e := start(t)
	first := e.emit(ticketRequest("json-a-1"))
	second := e.emit(ticketRequest("json-a-2"))

	var byJSON issuing.ComprobanteResponse
	e.do("POST", "/api/v1/comprobante/anular", map[string]any{"idCfeReferencia": first.ID, "fecha": today}, "X-API-Key", keyAlfa).
		expect(t, http.StatusOK).decode(t, &byJSON)
	if byJSON.TipoCfe != 102 || byJSON.CodRespuesta != "00" {
		t.Fatalf("response %+v", byJSON)
	}
	t.Run("the form repeats the same annulment: the same counter-receipt", func(t *testing.T) {
		var byForm issuing.ComprobanteResponse
		e.annul(strconv.FormatInt(first.ID, 10), today).expect(t, http.StatusOK).decode(t, &byForm)
		if byForm.ID != byJSON.ID || byForm.XmlFirmado != byJSON.XmlFirmado {
			t.Errorf("the form got %d, JSON %d", byForm.ID, byJSON.ID)
		}
	})
	t.Run("idCfeReferencia as text", func(t *testing.T) {
		var got issuing.ComprobanteResponse
		e.do("POST", "/api/v1/comprobante/anular", map[string]any{"idCfeReferencia": strconv.FormatInt(second.ID, 10), "fecha": today},
			"X-API-Key", keyAlfa).expect(t, http.StatusOK).decode(t, &got)
		if got.ID == byJSON.ID || got.TipoCfe != 102 {
			t.Errorf("response %+v", got)
		}
	})
	for _, tt := range []struct{ name, body, campo string }{
		{"an unknown field", `{"idCfeReferencia": 1, "fecha": "` + today + `", "motivo": "x"}`, "motivo"},
		{"a fractional id", `{"idCfeReferencia": 1.5, "fecha": "` + today + `"}`, "idCfeReferencia"},
		{"an id that is no number", `{"idCfeReferencia": "uno", "fecha": "` + today + `"}`, "idCfeReferencia"},
		{"a date of another form", `{"idCfeReferencia": 1, "fecha": "02/03/2026"}`, "fecha"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rej := e.do("POST", "/api/v1/comprobante/anular", tt.body, "X-API-Key", keyAlfa).expect(t, http.StatusBadRequest).rejection(t)
			if len(rej.Details) != 1 || rej.Details[0].Campo != tt.campo {
				t.Errorf("details %+v, want one on %s", rej.Details, tt.campo)
			}
		})
	}
	t.Run("a form body still works with its own content type", func(t *testing.T) {
		form := url.Values{"idCfeReferencia": {"abc"}, "fecha": {today}}.Encode()
		e.do("POST", "/api/v1/comprobante/anular", form, "Content-Type", "application/x-www-form-urlencoded", "X-API-Key", keyAlfa).
			expect(t, http.StatusBadRequest)
	})
}
