package cfe

import (
	"strings"
	"testing"
)

// realNamesBody is an e-Ticket credit note as production integrations of the
// hosted service send it: the hosted names of payment means and references,
// the top-level fields the agent ignores, and the names DGI has no place for.
const realNamesBody = `{
  "uuid": "nc-real-1", "idEmpresa": 0, "origen": "3", "registrarComprobanteInterno": 1,
  "cfe": {
    "idDoc": {"tipoCfe": 102, "fechaEmision": "2026-11-23", "formaPago": 1},
    "emisor": [], "totales": [], "complementoFiscal": {},
    "detalles": [{"numeroLineaDetalle": 1, "indicadorFacturacion": 3, "nombreItem": "Devolución yerba",
      "unidadMedida": "kg", "cantidad": 1, "precioUnitario": 150}],
    "mediosPago": [
      {"numeroLineaMedioPago": 1, "idMedioPago": 3, "glosaMedioPago": "Tarjeta de débito", "ordenMedioPago": 1,
       "valorPago": "100.00", "tipoMonedaMedioPago": "UYU", "tipoCambioMedioPago": 1, "idCuentaBanco": 12,
       "titular": "Juan Pérez", "nomDoc": "1234", "proveedorPos": "Geocom"},
      {"numeroLinea": 2, "codigo": 1, "glosa": "Efectivo", "valor": 83}],
    "referencias": [
      {"numeroLineaReferencia": 1, "tipoDocumentoReferencia": 101, "serieFacturaReferencia": "A",
       "numeroFacturaReferencia": 41, "fechaFacturaReferencia": "2026-11-20", "tipoMonedaCfeReferencia": "UYU",
       "razonReferencia": "Devolución de mercadería"}]
  }
}`

func TestDecodeRequest_realNames(t *testing.T) {
	req, err := DecodeRequest(strings.NewReader(realNamesBody))
	if err != nil {
		t.Fatalf("%v\n%s", err, describeFields(ErrorFields(err)))
	}
	if req.CFE.ComplementoFiscal != nil {
		t.Error("complementoFiscal {} on an e-Ticket credit note must read as absent")
	}
	c, err := issue(req)
	if err != nil {
		t.Fatalf("%v\n%s", err, describeFields(ErrorFields(err)))
	}
	mp := c.MediosPago
	if len(mp) != 2 {
		t.Fatalf("%d payment means, want 2", len(mp))
	}
	if m := mp[0]; m.NroLinMP != 1 || m.CodMP != 3 || m.GlosaMP != "Tarjeta de débito" || m.OrdenMP != 1 || !m.ValorPago.Equal(dec("100")) {
		t.Errorf("hosted names mapped to %+v", m)
	}
	if m := mp[1]; m.NroLinMP != 2 || m.CodMP != 1 || m.GlosaMP != "Efectivo" || !m.ValorPago.Equal(dec("83")) {
		t.Errorf("today's names mapped to %+v", m)
	}
	if len(c.Referencias) != 1 {
		t.Fatalf("%d references, want 1", len(c.Referencias))
	}
	r := c.Referencias[0]
	if r.NroLinRef != 1 || r.TpoDocRef != ETicket || r.Serie != "A" || r.NroCFERef != 41 || r.FechaCFEref.String() != "2026-11-20" ||
		r.RazonRef != "Devolución de mercadería" {
		t.Errorf("reference mapped to %+v", r)
	}
	if c.Items[0].UniMed != "kg" {
		t.Errorf("unidadMedida %q", c.Items[0].UniMed)
	}
}

func TestDecodeRequest_realNamesStayStrict(t *testing.T) {
	tests := []struct{ name, cfe, campo, fragment string }{
		{"a typo of a hosted name", `{"mediosPago": [{"valorPagos": 1}]}`, "cfe.mediosPago[0].valorPagos", "campo desconocido"},
		{"an ignored name elsewhere", `{"referencias": [{"titular": "x"}]}`, "cfe.referencias[0].titular", "campo desconocido"},
		{"both names of one field", `{"mediosPago": [{"glosa": "a", "glosaMedioPago": "b"}]}`, "cfe.mediosPago[0].glosaMedioPago", "otro nombre de glosa"},
		{"a hosted name of the wrong type", `{"referencias": [{"numeroFacturaReferencia": "41"}]}`, "cfe.referencias[0].numeroFacturaReferencia", "número entero"},
		{"a hosted date that is no date", `{"referencias": [{"fechaFacturaReferencia": "20/11/2026"}]}`, "cfe.referencias[0].fechaFacturaReferencia", "AAAA-MM-DD"},
		{"registrarComprobanteInterno inside cfe", `{"registrarComprobanteInterno": 1}`, "cfe.registrarComprobanteInterno", "campo desconocido"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeRequest(strings.NewReader(`{"cfe": ` + tt.cfe + `}`))
			wantField(t, err, tt.campo, tt.fragment)
		})
	}
}

// TestDecodeRequest_emptyComplementoFiscal: {} means absent only where the
// type has no zone K; on a sale on behalf of others it is still the
// (incomplete) zone, and the validator names what is missing.
func TestDecodeRequest_emptyComplementoFiscal(t *testing.T) {
	tests := []struct {
		typ    Type
		absent bool
	}{
		{ETicket, true}, {EFactura, true}, {EFacturaNC, true}, {ERemito, true}, {EResguardo, true},
		{ETicketCtaAjena, false}, {EFacturaCtaAjenaNC, false}, {EBoleta, false},
	}
	for _, tt := range tests {
		t.Run(tt.typ.String(), func(t *testing.T) {
			body := `{"cfe": {"idDoc": {"tipoCfe": ` + tt.typ.String() + `}, "complementoFiscal": {}}}`
			req, err := DecodeRequest(strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			if got := req.CFE.ComplementoFiscal == nil; got != tt.absent {
				t.Errorf("complementoFiscal absent = %v, want %v", got, tt.absent)
			}
		})
	}
	t.Run("a non-empty object is kept on any type", func(t *testing.T) {
		req, err := DecodeRequest(strings.NewReader(`{"cfe": {"idDoc": {"tipoCfe": 101}, "complementoFiscal": {"nombre": "X"}}}`))
		if err != nil {
			t.Fatal(err)
		}
		if req.CFE.ComplementoFiscal == nil {
			t.Fatal("dropped")
		}
		_, err = issue(req)
		wantField(t, err, "cfe.complementoFiscal", "solo corresponde")
	})
}

// TestToCFE_paymentCurrency: a payment line's currency and rate (hosted
// names, which DGI's zone E has no place for) must restate the CFE's own, or
// the amount would be signed in the wrong currency.
func TestToCFE_paymentCurrency(t *testing.T) {
	body := func(totales, pago string) string {
		return `{"uuid": "mp-1", "cfe": {"idDoc": {"tipoCfe": 101, "formaPago": 1}, ` + totales +
			`"detalles": [{"indicadorFacturacion": 3, "nombreItem": "Yerba", "cantidad": 1, "precioUnitario": 100}],
			"mediosPago": [{"glosaMedioPago": "Tarjeta", "valorPago": "122.00"` + pago + `}]}}`
	}
	tests := []struct {
		name, totales, pago, campo string
	}{
		{"pesos restated", ``, `, "tipoMonedaMedioPago": "UYU", "tipoCambioMedioPago": 1`, ""},
		{"a rate of 0 is not sent", ``, `, "tipoMonedaMedioPago": "UYU", "tipoCambioMedioPago": 0`, ""},
		{"dollars restated", `"totales": {"tipoMoneda": "USD", "tipoCambio": "39.125"}, `, `, "tipoMonedaMedioPago": "USD", "tipoCambioMedioPago": "39.125"`, ""},
		{"a dollar payment on a peso CFE", ``, `, "tipoMonedaMedioPago": "USD"`, "cfe.mediosPago[0].tipoMonedaMedioPago"},
		{"a peso payment on a dollar CFE", `"totales": {"tipoMoneda": "USD", "tipoCambio": "39.125"}, `, `, "tipoMonedaMedioPago": "UYU"`, "cfe.mediosPago[0].tipoMonedaMedioPago"},
		{"another rate", `"totales": {"tipoMoneda": "USD", "tipoCambio": "39.125"}, `, `, "tipoCambioMedioPago": 40`, "cfe.mediosPago[0].tipoCambioMedioPago"},
		{"a rate on a peso CFE", ``, `, "tipoCambioMedioPago": "39.125"`, "cfe.mediosPago[0].tipoCambioMedioPago"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := DecodeRequest(strings.NewReader(body(tt.totales, tt.pago)))
			if err != nil {
				t.Fatal(err)
			}
			_, err = req.ToCFE(testParams())
			if tt.campo == "" {
				if err != nil {
					t.Fatalf("%v\n%s", err, describeFields(ErrorFields(err)))
				}
				return
			}
			wantField(t, err, tt.campo, "del comprobante")
		})
	}
}
