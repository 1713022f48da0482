package localapi_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// TestSignCFE_AdendaLimit signs over real HTTP with the real issuer and
// store: an Adenda of 1 MB minus the rest of the request is refused with 01
// naming adenda and consumes no number; one at the limit is signed as
// number 1.
func TestSignCFE_AdendaLimit(t *testing.T) {
	a := startAgent(t, now.AddDate(0, -1, 0))
	withAdenda := func(uuid, adenda string) string {
		return strings.Replace(ticket(uuid), `"adenda":"Mesa 4"`, `"adenda":"`+adenda+`"`, 1)
	}

	for _, size := range []int{cfe.MaxAdenda + 1, 1000 * 1000} {
		status, b := a.sign(t, withAdenda("venta-adenda-larga", strings.Repeat("x", size)))
		r := signResponse(t, b)
		if status != http.StatusOK || r.CodigoRespuesta != "01" || len(r.Errores) != 1 || r.Errores[0].Campo != "adenda" ||
			!strings.Contains(r.Errores[0].Mensaje, "como máximo 10000 caracteres") {
			t.Fatalf("Adenda of %d characters: status %d, answer %s %q %+v; want 200 with 01 naming adenda",
				size, status, r.CodigoRespuesta, r.MensajeRespuesta, r.Errores)
		}
	}
	status, b := a.sign(t, withAdenda("venta-adenda-limite", strings.Repeat("ñ", cfe.MaxAdenda)))
	if r := signResponse(t, b); status != http.StatusOK || r.CodigoRespuesta != "00" || r.Numero != 1 {
		t.Fatalf("Adenda at the limit: status %d, answer %s %q number %d; want 00 with number 1 (the refusals consumed none)",
			status, r.CodigoRespuesta, r.MensajeRespuesta, r.Numero)
	}
}
