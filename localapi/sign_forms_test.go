package localapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/shopspring/decimal"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// remito is the e-Remito of examples/e-remito.json with uuid, and totals
// when totales is not empty.
func remito(uuid, totales string) string {
	if totales != "" {
		totales = `, "totales": ` + totales
	}
	return `{"uuid": "` + uuid + `", "cfe": {"idDoc": {"tipoCfe": 181, "tipoTraslado": 1},
		"receptor": {"tipoDocumento": 2, "codigoPais": "UY", "documento": "214844360018",
			"razonSocial": "Dirección General Impositiva", "direccion": "Fernández Crespo 1534",
			"ciudad": "Montevideo", "departamento": "Montevideo"},
		"detalles": [{"nombreItem": "Resma A4 500 hojas", "cantidad": 10, "unidadMedida": "un"}]` + totales + `}}`
}

// TestSignCFE_RefusedForms: over HTTP, on the real issuer, store and signer,
// each value form the description refuses, a line of quantity 0 and an
// e-Remito with a currency answer 01 naming the field; nothing is stored and
// no number is used: the counters of both ranges are where they were, and
// the next good e-Ticket and e-Remito each get number 1.
func TestSignCFE_RefusedForms(t *testing.T) { // not parallel: startServer sets TZ
	a := startAgent(t, now.AddDate(0, -1, 0))
	ctx := context.Background()
	err := a.db.PutRange(ctx, cfe.CAERange{RUC: testRUC, Type: cfe.ERemito, Serie: "A", DNro: 1, HNro: 100,
		CAEID: "90260000124", Autorizado: date(2026, 1, 5), Vencimiento: date(2027, 3, 31), Source: "manual"})
	if err != nil {
		t.Fatal(err)
	}
	ticketLine := `{"indicadorFacturacion":3,"nombreItem":"Yerba mate 1 kg","cantidad":2,"precioUnitario":150}`
	withLine := func(uuid, line string) string {
		return strings.Replace(ticket(uuid), ticketLine, line, 1)
	}
	withCFE := func(uuid, extra string) string {
		return strings.Replace(ticket(uuid), `"detalles":`, extra+`, "detalles":`, 1)
	}
	if withLine("x", "X") == ticket("x") {
		t.Fatal("ticket() no longer has the line this test replaces")
	}
	tests := []struct {
		name, body, campo string
		status            int // 400: the decoder refuses the body; 200: the mapping refuses the request
	}{
		{"quantity 1e3 as text", withLine("f-01", `{"indicadorFacturacion":3,"nombreItem":"Yerba","cantidad":"1e3","precioUnitario":150}`), "cfe.detalles[0].cantidad", 400},
		{"quantity +5 as text", withLine("f-02", `{"indicadorFacturacion":3,"nombreItem":"Yerba","cantidad":"+5","precioUnitario":150}`), "cfe.detalles[0].cantidad", 400},
		{"price .5 as text", withLine("f-03", `{"indicadorFacturacion":3,"nombreItem":"Yerba","cantidad":2,"precioUnitario":".5"}`), "cfe.detalles[0].precioUnitario", 400},
		{"price 150. as text", withLine("f-04", `{"indicadorFacturacion":3,"nombreItem":"Yerba","cantidad":2,"precioUnitario":"150."}`), "cfe.detalles[0].precioUnitario", 400},
		{"price with a space", withLine("f-05", `{"indicadorFacturacion":3,"nombreItem":"Yerba","cantidad":2,"precioUnitario":" 150"}`), "cfe.detalles[0].precioUnitario", 400},
		{"discount as {}", withLine("f-06", `{"indicadorFacturacion":3,"nombreItem":"Yerba","cantidad":2,"precioUnitario":150,"descuentoMonto":{}}`), "cfe.detalles[0].descuentoMonto", 400},
		{"payment 3e2 as text", withCFE("f-07", `"mediosPago":[{"idMedioPago":1,"valorPago":"3e2"}]`), "cfe.mediosPago[0].valorPago", 400},
		{"total as []", withCFE("f-08", `"totales":{"montoTotal":[]}`), "cfe.totales.montoTotal", 400},
		{"receptor as text", withCFE("f-09", `"receptor":"Juan"`), "cfe.receptor", 400},
		{"receptor as [{}]", withCFE("f-10", `"receptor":[{}]`), "cfe.receptor", 400},
		{"a line as []", withLine("f-11", `[]`), "cfe.detalles[0]", 400},
		{"idDoc as []", strings.Replace(ticket("f-12"), `"idDoc":{"tipoCfe":101,"formaPago":1,"montoBruto":1}`, `"idDoc":[]`, 1), "cfe.idDoc", 400},
		{"quantity 0", withLine("f-13", `{"indicadorFacturacion":3,"nombreItem":"Yerba","cantidad":0,"precioUnitario":150}`), "cfe.detalles[0].cantidad", 200},
		{"quantity -0 as text", withLine("f-14", `{"indicadorFacturacion":3,"nombreItem":"Yerba","cantidad":"-0","precioUnitario":150}`), "cfe.detalles[0].cantidad", 200},
		{"quantity 0.000 as text", withLine("f-15", `{"indicadorFacturacion":3,"nombreItem":"Yerba","cantidad":"0.000","precioUnitario":150}`), "cfe.detalles[0].cantidad", 200},
		{"quantity 0e3", withLine("f-16", `{"indicadorFacturacion":5,"nombreItem":"Yerba","cantidad":0e3,"precioUnitario":0}`), "cfe.detalles[0].cantidad", 200},
		{"e-Remito in dollars", remito("f-17", `{"tipoMoneda":"USD","tipoCambio":"40"}`), "cfe.totales.tipoMoneda", 200},
		{"e-Remito's exchange rate", remito("f-18", `{"tipoMoneda":"USD","tipoCambio":"40"}`), "cfe.totales.tipoCambio", 200},
		{"e-Remito in pesos", remito("f-19", `{"tipoMoneda":"UYU"}`), "cfe.totales.tipoMoneda", 200},
		{"e-Remito with a quantity of 0", strings.Replace(remito("f-20", ""), `"cantidad": 10`, `"cantidad": "0.000"`, 1), "cfe.detalles[0].cantidad", 200},
	}
	counters := func() []cfe.RangeUse {
		t.Helper()
		st, err := a.db.RangeStatus(ctx, cfe.DateOf(now))
		if err != nil || len(st) != 2 {
			t.Fatalf("range status %+v, %v: want the e-Ticket and e-Remito ranges", st, err)
		}
		return st
	}
	before := counters()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, b := a.sign(t, tt.body)
			r := signResponse(t, b)
			named := false
			for _, f := range r.Errores {
				named = named || f.Campo == tt.campo
			}
			if status != tt.status || r.CodigoRespuesta != cfe.RespRechazoValidacion || !named || r.Numero != 0 || r.XMLFirmado != "" {
				t.Errorf("HTTP %d %s: want %d with 01 naming %s and nothing signed", status, b, tt.status, tt.campo)
			}
		})
	}
	after := counters()
	for i := range before {
		if before[i].Used != after[i].Used || before[i].Skipped != after[i].Skipped || before[i].Remaining != after[i].Remaining {
			t.Errorf("range %s %s: used %d skipped %d remaining %d before, %d %d %d after the refused requests",
				before[i].Range.Type, before[i].Range.Serie, before[i].Used, before[i].Skipped, before[i].Remaining,
				after[i].Used, after[i].Skipped, after[i].Remaining)
		}
	}
	for _, tt := range tests {
		uuid := tt.body[strings.Index(tt.body, `"f-`)+1 : strings.Index(tt.body, `"f-`)+5]
		if _, err := a.db.FindByUUID(ctx, uuid); cfe.ErrorCode(err) != cfe.ENOTFOUND {
			t.Errorf("%s: a refused request was stored (%v)", uuid, err)
		}
	}

	// The canonical forms sign, with their exact values, and take the first
	// numbers: none was used by the refusals.
	status, b := a.sign(t, withLine("ok-1", `{"indicadorFacturacion":3,"nombreItem":"Yerba","cantidad":"2","precioUnitario":1.5e2}`))
	r := signResponse(t, b)
	if status != http.StatusOK || r.CodigoRespuesta != cfe.RespOK || r.Numero != 1 ||
		!decimal.RequireFromString(element(t, r.XMLFirmado, "MntPagar")).Equal(decimal.NewFromInt(300)) {
		t.Fatalf("HTTP %d %s: want e-Ticket A-1 of 300", status, b)
	}
	status, b = a.sign(t, remito("ok-2", `{"cantidadLineasDetalle":1}`))
	if r := signResponse(t, b); status != http.StatusOK || r.CodigoRespuesta != cfe.RespOK || r.TipoCFE != cfe.ERemito || r.Numero != 1 {
		t.Fatalf("HTTP %d %s: want e-Remito A-1", status, b)
	}
}
