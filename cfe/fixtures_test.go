package cfe

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
)

// testEmisor is the company of the tests: DGI's test RUC, as in DGI's examples.
var testEmisor = Emisor{
	RUCEmisor:    "219999830019",
	RznSoc:       "DGI-RUC PRUEBA CEDE",
	CdgDGISucur:  1,
	DomFiscal:    "Av. Daniel Fernández Crespo 1534",
	Ciudad:       "Montevideo",
	Departamento: "Montevideo",
}

var testSignedAt = time.Date(2026, 11, 23, 10, 30, 0, 0, Montevideo)

func testParams() IssueParams {
	return IssueParams{Emisor: testEmisor, Tax: DefaultTaxConfig(), SignedAt: testSignedAt}
}

func dec(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func decp(s string) *decimal.Decimal { d := dec(s); return &d }

func datep(s string) *Date {
	d, err := ParseDate(s)
	if err != nil {
		panic(err)
	}
	return &d
}

// receptorRUC is a company identified by RUC (DGI's own).
func receptorRUC() *RequestReceptor {
	return &RequestReceptor{TipoDocumento: 2, CodigoPais: "UY", Documento: "214844360018",
		RazonSocial: "Dirección General Impositiva", Direccion: "Fernández Crespo 1534",
		Ciudad: "Montevideo", Departamento: "Montevideo"}
}

// receptorForeign is a foreign buyer of an export.
func receptorForeign() *RequestReceptor {
	return &RequestReceptor{RazonSocial: "Importadora del Plata SA", Direccion: "Av. Corrientes 1234",
		Ciudad: "Buenos Aires", Departamento: "CABA", Pais: "Argentina"}
}

// validRequest returns a request of type t that passes ToCFE and Validate:
// the smallest receipt that type admits, with what the type requires.
func validRequest(t Type) *Request {
	info, ok := t.Info()
	if !ok {
		panic("validRequest: unknown type")
	}
	c := &RequestCFE{IdDoc: RequestIdDoc{TipoCfe: t, FechaEmision: datep("2026-11-23")}}
	line := RequestDetalle{IndicadorFacturacion: indTasaBasica, NombreItem: "Yerba mate 1 kg",
		Cantidad: decp("2"), PrecioUnitario: decp("150")}
	switch info.Element {
	case ElemTicket:
		c.IdDoc.FormaPago = 1
	case ElemFactura:
		c.IdDoc.FormaPago = 2
		c.Receptor = receptorRUC()
	case ElemFacturaExp:
		c.IdDoc.FormaPago = 1
		c.IdDoc.ClausulaVenta, c.IdDoc.ModalidadVenta, c.IdDoc.ViaTransporte = "FOB", 1, 1
		c.Receptor = receptorForeign()
		c.Totales = &RequestTotales{TipoMoneda: "USD", TipoCambio: decp("40.125")}
		line.IndicadorFacturacion = indExport
	case ElemRemitoExp:
		c.IdDoc.TipoTraslado, c.IdDoc.ModalidadVenta, c.IdDoc.ViaTransporte = 1, 1, 3
		c.Receptor = receptorForeign()
		line.IndicadorFacturacion = 0
	case ElemRemito:
		c.IdDoc.TipoTraslado = 1
		c.Receptor = receptorRUC()
		line.IndicadorFacturacion, line.PrecioUnitario = 0, nil
	case ElemResguardo:
		c.Receptor = receptorRUC()
		line = RequestDetalle{RetencionesPercepciones: []RequestRetencion{
			{Codigo: "1146171", Tasa: decp("12"), MontoSujeto: decp("10000"), Valor: dec("1200")}}}
	case ElemBoleta:
		c.IdDoc.FormaPago = 1
		c.Receptor = &RequestReceptor{TipoDocumento: 3, CodigoPais: "UY", Documento: "12345672",
			RazonSocial: "Juan Pérez", Direccion: "Ruta 5 km 100", Ciudad: "Durazno"}
		line.IndicadorFacturacion = indBoletaNoContrib
	}
	c.Detalles = []RequestDetalle{line}
	if info.IsNote() {
		c.Referencias = []RequestReferencia{{TipoCfe: info.Base, Serie: "A", Numero: 1, Razon: "Devolución"}}
	}
	if b := info.Base; b == ETicketCtaAjena || b == EFacturaCtaAjena {
		c.ComplementoFiscal = &RequestComplementoFiscal{TipoDocumento: 2, CodigoPais: "UY",
			Documento: "214844360018", Nombre: "Mandante SA"}
	}
	return &Request{UUID: "0b6f3c1e-8f43-4c52-9a57-3f0ad1a1c001", CFE: c}
}

// issue maps r and validates the result, as the issuer does.
func issue(r *Request) (*CFE, error) {
	c, err := r.ToCFE(testParams())
	if err != nil {
		return nil, err
	}
	return c, Validate(c, DefaultTaxConfig())
}

// wantField fails unless err is an EINVALID *Error with a FieldError on campo
// whose Mensaje contains fragment.
func wantField(t *testing.T, err error, campo, fragment string) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) || e.Code != EINVALID {
		t.Fatalf("want an EINVALID *Error, got %v", err)
	}
	for _, f := range e.Fields {
		if f.Campo == campo && strings.Contains(f.Mensaje, fragment) {
			return
		}
	}
	t.Fatalf("no field error %q containing %q; got:\n%s", campo, fragment, describeFields(e.Fields))
}

func describeFields(fs []FieldError) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString("  " + f.Campo + ": " + f.Mensaje + "\n")
	}
	return b.String()
}
