package localapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// hostedNamesCreditNote is a credit note of e-Ticket A-1 with the hosted
// service's conventions: idEmpresa 0, empty arrays for unused objects, {}
// complementoFiscal, the names production integrations send for payment
// means and references, and the fields DGI has no place for.
const hostedNamesCreditNote = `{
  "uuid": "nc-nombres-1", "idEmpresa": 0, "codComercio": "", "codTerminal": "", "adenda": "", "destinatariosPdf": "",
  "origen": "3", "esAppMovil": 0, "idComprobanteGuardado": 0, "idVendedor": 0, "idCaja": null,
  "registrarComprobanteInterno": 1,
  "cfe": {
    "idDoc": {"tipoCfe": 102, "formaPago": 1},
    "emisor": [], "totales": [], "receptor": [], "complementoFiscal": {},
    "detalles": [{"numeroLineaDetalle": 1, "indicadorFacturacion": 3, "nombreItem": "Devolución yerba",
      "unidadMedida": "kg", "cantidad": 1, "precioUnitario": "122.00"}],
    "mediosPago": [{"numeroLineaMedioPago": 1, "idMedioPago": 3, "glosaMedioPago": "Tarjeta de débito",
      "ordenMedioPago": 1, "valorPago": "148.84", "tipoMonedaMedioPago": "UYU", "tipoCambioMedioPago": 1,
      "idCuentaBanco": 12, "titular": "Titular Ignorado", "nomDoc": "1234", "proveedorPos": "ProveedorIgnorado"}],
    "referencias": [{"numeroLineaReferencia": 1, "tipoDocumentoReferencia": 101, "serieFacturaReferencia": "A",
      "numeroFacturaReferencia": 1, "fechaFacturaReferencia": "2026-05-14", "tipoMonedaCfeReferencia": "UYU",
      "razonReferencia": "Devolución de mercadería"}],
    "descuentosRecargosGlobales": [], "subTotalesInfo": []
  }
}`

// TestSignCFE_HostedNames: /sign-cfe takes the body production clients of
// the hosted service send, and the signed CFE carries the DGI fields their
// names map to.
func TestSignCFE_HostedNames(t *testing.T) {
	a := startAgent(t, now.AddDate(0, -1, 0))
	err := a.db.PutRange(context.Background(), cfe.CAERange{RUC: testRUC, Type: cfe.ETicketNC, Serie: "A", DNro: 1, HNro: 100,
		CAEID: "90260000124", Autorizado: date(2026, 1, 5), Vencimiento: date(2027, 3, 31), Source: "manual"})
	if err != nil {
		t.Fatal(err)
	}
	if status, b := a.sign(t, ticket("venta-nombres")); status != http.StatusOK {
		t.Fatalf("the e-Ticket: HTTP %d %s", status, b)
	}

	t.Run("an unknown name is refused and consumes no number", func(t *testing.T) {
		typo := strings.Replace(hostedNamesCreditNote, `"glosaMedioPago"`, `"glosaMedioDePago"`, 1)
		status, b := a.sign(t, typo)
		r := signResponse(t, b)
		if status != http.StatusBadRequest || r.CodigoRespuesta != cfe.RespRechazoValidacion ||
			len(r.Errores) != 1 || r.Errores[0].Campo != "cfe.mediosPago[0].glosaMedioDePago" {
			t.Fatalf("HTTP %d %s, want 01 naming the unknown field", status, b)
		}
	})

	status, b := a.sign(t, hostedNamesCreditNote)
	r := signResponse(t, b)
	if status != http.StatusOK || r.CodigoRespuesta != cfe.RespOK || r.TipoCFE != 102 || r.Numero != 1 {
		t.Fatalf("HTTP %d %s, want the credit note signed as A-1", status, b)
	}
	xml := r.XMLFirmado
	testtool.MustValidateXSD(t, testtool.XSD(t, "CFEDGI.xsd"), []byte(xml))
	if out, ok := testtool.XMLSecVerify(t, []byte(xml), ""); !ok {
		t.Fatalf("xmlsec1 rejects the signature:\n%s", out)
	}
	for name, want := range map[string]string{
		"NroLinMP": "1", "CodMP": "3", "GlosaMP": "Tarjeta de débito", "OrdenMP": "1", "ValorPago": "148.84",
		"NroLinRef": "1", "TpoDocRef": "101", "NroCFERef": "1", "RazonRef": "Devolución de mercadería",
		"FechaCFEref": "2026-05-14", "UniMed": "kg", "MntPagar": "148.84",
	} {
		if got := element(t, xml, name); got != want {
			t.Errorf("<%s> = %q, want %q", name, got, want)
		}
	}
	for _, ignored := range []string{"Titular Ignorado", "ProveedorIgnorado", "Compl_Fiscal"} {
		if strings.Contains(xml, ignored) {
			t.Errorf("the signed XML carries %q", ignored)
		}
	}
}
