package issuer_test

import (
	"context"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// TestIssuer_RefusesCodesOutsideDGIsLists is issue 14's reproduction 3
// through the real issuer and store: codes DGI's XSD does not list are refused
// with 01 naming the field, no number is consumed, and the next good request
// of the serie takes number 1.
func TestIssuer_RefusesCodesOutsideDGIsLists(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		typ   cfe.Type
		set   func(body map[string]any)
		campo string
	}{
		{"tipoMoneda ZZZ", cfe.ETicket, func(b map[string]any) {
			cfeOf(b)["totales"] = map[string]any{"tipoMoneda": "ZZZ", "tipoCambio": "40"}
		}, "cfe.totales.tipoMoneda"},
		{"tipoMoneda XYZ", cfe.EFactura, func(b map[string]any) {
			cfeOf(b)["totales"] = map[string]any{"tipoMoneda": "XYZ", "tipoCambio": "40"}
		}, "cfe.totales.tipoMoneda"},
		{"receptor codigoPais ZZ", cfe.EFactura, func(b map[string]any) {
			cfeOf(b)["receptor"] = map[string]any{"tipoDocumento": 4, "codigoPais": "ZZ", "documentoExt": "123456",
				"razonSocial": "Cliente", "direccion": "Calle 1", "ciudad": "Ciudad", "pais": "Zeta"}
		}, "cfe.receptor.codigoPais"},
		{"complementoFiscal codigoPais QQ", cfe.ETicketCtaAjena, func(b map[string]any) {
			cfeOf(b)["complementoFiscal"] = map[string]any{"tipoDocumento": 4, "codigoPais": "QQ",
				"documento": "123456", "nombre": "Mandante SA"}
		}, "cfe.complementoFiscal.codigoPais"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			ctx := context.Background()
			before, err := h.db.RangeStatus(ctx, cfe.DateOf(testNow))
			if err != nil {
				t.Fatal(err)
			}
			var body map[string]any
			if err := json.Unmarshal([]byte(requestJSON(tt.typ, uuidFor(tt.typ, 1))), &body); err != nil {
				t.Fatal(err)
			}
			tt.set(body)
			b, _ := json.Marshal(body)
			_, err = h.iss.Issue(ctx, decode(t, string(b)))
			if cfe.RespuestaOf(err) != cfe.RespRechazoValidacion || cfe.ErrorCode(err) != cfe.EINVALID {
				t.Fatalf("got %v (%q), want a refusal 01", err, cfe.RespuestaOf(err))
			}
			if !slices.ContainsFunc(cfe.ErrorFields(err), func(f cfe.FieldError) bool { return f.Campo == tt.campo }) {
				t.Fatalf("no error names %s: %v", tt.campo, cfe.ErrorFields(err))
			}
			after, err := h.db.RangeStatus(ctx, cfe.DateOf(testNow))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(before, after) {
				t.Fatalf("the refusal changed the store's ranges:\n%+v\n%+v", before, after)
			}
			if _, err := h.db.FindByUUID(ctx, uuidFor(tt.typ, 1)); cfe.ErrorCode(err) != cfe.ENOTFOUND {
				t.Fatalf("the refused uuid is stored (err %v)", err)
			}
			// The same receipt with the code corrected signs as number 1.
			res, err := h.iss.Issue(ctx, decode(t, requestJSON(tt.typ, uuidFor(tt.typ, 2))))
			if err != nil {
				t.Fatal(err)
			}
			if res.Issued.Nro != 1 {
				t.Fatalf("the next CFE took number %d, want 1", res.Issued.Nro)
			}
			testtool.MustValidateXSD(t, testtool.XSD(t, "CFEDGI.xsd"), res.Issued.XML)
		})
	}
}

func cfeOf(body map[string]any) map[string]any { return body["cfe"].(map[string]any) }

// TestIssuer_RefusesWhatBuildXMLCannotWriteBeforeNumbering: a value the XML
// builder cannot write (an empty telephone) used to fail after a number was
// reserved, answering 99; it is the caller's mistake and is refused with 01
// before numbering. Found by TestIssuer_Property.
func TestIssuer_RefusesWhatBuildXMLCannotWriteBeforeNumbering(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	body := strings.Replace(requestJSON(cfe.ETicket, uuidFor(cfe.ETicket, 1)), `"idDoc":`,
		`"emisor":{"telefonos":["","29001234"]},"idDoc":`, 1)
	_, err := h.iss.Issue(ctx, decode(t, body))
	if cfe.RespuestaOf(err) != cfe.RespRechazoValidacion {
		t.Fatalf("got %v (%q), want a refusal 01", err, cfe.RespuestaOf(err))
	}
	if f := cfe.ErrorFields(err); len(f) != 1 || f[0].Campo != "cfe.emisor.telefonos[0]" {
		t.Fatalf("fields %v, want cfe.emisor.telefonos[0]", f)
	}
	res, err := h.iss.Issue(ctx, decode(t, requestJSON(cfe.ETicket, uuidFor(cfe.ETicket, 2))))
	if err != nil || res.Issued.Nro != 1 {
		t.Fatalf("next CFE: %v, want number 1", err)
	}
}
