package localapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// Reproductions 1, 4 and 5 of the fiscal-integrity issue over real HTTP: text
// that is not UTF-8 as sent, and uuids over the hosted service's 64
// characters, are refused with 01 naming the field, and consume no number.
func TestSignCFE_RealParts_RefusedBeforeNumbering(t *testing.T) {
	a := startAgent(t, now.AddDate(0, -1, 0))
	tests := []struct {
		name, body string
		status     int
		campo      string
	}{
		{"Latin-1 bytes FF FE in an item name", strings.Replace(ticket("venta-utf8-1"), "Yerba mate", "Yerba \xff\xfe mate", 1),
			http.StatusBadRequest, "cfe.detalles[0].nombreItem"},
		{"a lone surrogate in the adenda", strings.Replace(ticket("venta-utf8-2"), "Mesa 4", `Mesa \ud800`, 1),
			http.StatusBadRequest, "adenda"},
		{"a uuid of 300 characters", ticket(strings.Repeat("a", 300)), http.StatusOK, "uuid"},
		{"a uuid of 100 characters", ticket(strings.Repeat("b", 100)), http.StatusOK, "uuid"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, body := a.sign(t, tc.body)
			r := signResponse(t, body)
			if status != tc.status || r.CodigoRespuesta != cfe.RespRechazoValidacion {
				t.Fatalf("status %d answer %s, want %d with 01", status, body, tc.status)
			}
			if len(r.Errores) != 1 || r.Errores[0].Campo != tc.campo {
				t.Fatalf("errores %+v, want one naming %s", r.Errores, tc.campo)
			}
		})
	}
	status, body := a.sign(t, ticket(strings.Repeat("c", cfe.MaxUUIDLen)))
	if r := signResponse(t, body); status != http.StatusOK || r.CodigoRespuesta != cfe.RespOK || r.Numero != 1 {
		t.Fatalf("the first good e-Ticket: status %d answer %s, want 00 with number 1", status, body)
	}
}
