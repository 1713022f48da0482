package sandbox_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/sandbox/dgi"
	"github.com/cfe-agent/cfe-agent/sandbox/issuing"
)

// receiveTicket delivers Alfa's e-Ticket A-nro, signed at signedAt by an
// agent, and returns the service's answer.
func (e *env) receiveTicket(t *testing.T, nro int64, signedAt time.Time) *resp {
	t.Helper()
	signed := sign(t, agentSigner(t), ticket(nro, signedAt))
	req := issuing.ReceiveRequest{UUID: fmt.Sprintf("7a1f0b8e-0000-4000-8000-%012d", nro), XmlFirmado: string(signed.XML)}
	return e.do("POST", "/api/v1/comprobante/recibirFirmado", req, "X-API-Key", keyAlfa)
}

func annulledBody(desde, hasta int64, at time.Time) map[string]any {
	return map[string]any{"tipoCfe": 101, "serie": "A", "desde": desde, "hasta": hasta, "motivo": "skipped-block",
		"detalle": "bloque del diario saltado", "fechaAnulacion": at.Format(time.RFC3339)}
}

// TestAnnulled_Register: POST /api/v1/numerosanulados records a range once
// (the same range again changes nothing and says so), refuses a range that
// overlaps another one or an issued CFE, naming it, refuses bad fields
// without recording anything, and a CFE whose number is annulled is refused
// afterwards. Ranges are the company's own.
func TestAnnulled_Register(t *testing.T) {
	t.Parallel()
	e := start(t)
	at := t0.Add(-time.Hour)
	e.receiveTicket(t, 1, at).expect(t, http.StatusOK)

	var got dgi.AnnulledResponse
	e.do("POST", "/api/v1/numerosanulados", annulledBody(5, 9, at), "X-API-Key", keyAlfa).expect(t, http.StatusOK).decode(t, &got)
	if !got.Registrado || got.Desde != 5 || got.Hasta != 9 || got.Motivo != "skipped-block" || got.FechaResumen.String() != "2026-03-02" {
		t.Fatalf("first registration: %+v", got)
	}
	e.do("POST", "/api/v1/numerosanulados", annulledBody(5, 9, at.Add(time.Minute)), "X-API-Key", keyAlfa).expect(t, http.StatusOK).decode(t, &got)
	if got.Registrado || !got.FechaAnulacion.Equal(at) {
		t.Fatalf("the same range again: %+v, want registrado false and the first fechaAnulacion %s", got, at)
	}

	for _, c := range []struct {
		desde, hasta int64
		want         string
	}{
		{8, 12, "se superponen con los números 5 a 9"},
		{9, 9, "se superponen con los números 5 a 9"},
		{1, 3, "el número A-1 del tipo 101 ya es un CFE emitido"},
	} {
		r := e.do("POST", "/api/v1/numerosanulados", annulledBody(c.desde, c.hasta, at), "X-API-Key", keyAlfa).expect(t, http.StatusConflict)
		if msg := r.errBody(t).Error; !strings.Contains(msg, c.want) {
			t.Errorf("%d-%d: %q, want it to say %q", c.desde, c.hasta, msg, c.want)
		}
	}
	bad := annulledBody(20, 10, at.Add(48*time.Hour))
	bad["serie"], bad["tipoCfe"], bad["motivo"] = "a", 999, ""
	fields := map[string]bool{}
	for _, f := range e.do("POST", "/api/v1/numerosanulados", bad, "X-API-Key", keyAlfa).expect(t, http.StatusBadRequest).errBody(t).Details {
		fields[f.Campo] = true
	}
	for _, f := range []string{"tipoCfe", "serie", "hasta", "motivo", "fechaAnulacion"} {
		if !fields[f] {
			t.Errorf("the refusal does not name %s: %v", f, fields)
		}
	}
	e.do("POST", "/api/v1/numerosanulados", annulledBody(1, 1, at)).expect(t, http.StatusUnauthorized)

	var list []dgi.AnnulledRange
	e.do("GET", "/api/v1/numerosanulados?fechaDesde=2026-03-02&fechaHasta=2026-03-02", nil, "X-API-Key", keyAlfa).expect(t, http.StatusOK).decode(t, &list)
	if len(list) != 1 || list[0].Desde != 5 || list[0].Hasta != 9 {
		t.Fatalf("Alfa's ranges: %+v, want only 5-9", list)
	}
	e.do("GET", "/api/v1/numerosanulados?fechaDesde=2026-03-03", nil, "X-API-Key", keyAlfa).expect(t, http.StatusOK).decode(t, &list)
	if len(list) != 0 {
		t.Fatalf("Alfa's ranges from the next day: %+v, want none", list)
	}
	e.do("GET", "/api/v1/numerosanulados", nil, "X-API-Key", keyBeta).expect(t, http.StatusOK).decode(t, &list)
	if len(list) != 0 {
		t.Fatalf("Beta sees %+v of Alfa's ranges", list)
	}

	// An annulled number can never be signed afterwards.
	r := e.receiveTicket(t, 7, at).expect(t, http.StatusConflict)
	if !strings.Contains(string(r.body), "está anulado") {
		t.Fatalf("a CFE with an annulled number: %s", r.body)
	}
	e.receiveTicket(t, 10, at).expect(t, http.StatusOK)
}
