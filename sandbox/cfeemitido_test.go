package sandbox_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/sandbox"
	"github.com/cfe-agent/cfe-agent/sandbox/auth"
	"github.com/cfe-agent/cfe-agent/sandbox/issuing"
)

// deliver records c (signed by agent) for Alfa and returns its hosted id.
func (e *env) deliver(uuid string, signedXML []byte) int64 {
	e.t.Helper()
	var got issuing.ComprobanteResponse
	e.do("POST", "/api/v1/comprobante/recibirFirmado", issuing.ReceiveRequest{UUID: uuid, XmlFirmado: string(signedXML)}, "X-API-Key", keyAlfa).
		expect(e.t, http.StatusOK).decode(e.t, &got)
	return got.ID
}

func TestIssued(t *testing.T) {
	t.Parallel()
	e := start(t)
	agent := agentSigner(t)
	// Signed on 1 and 2 March (Montevideo); the second is an e-Ticket credit note.
	day1 := time.Date(2026, time.March, 1, 23, 30, 0, 0, cfe.Montevideo) // 02:30 UTC on 2 March
	day2 := time.Date(2026, time.March, 2, 9, 0, 0, 0, cfe.Montevideo)
	id1 := e.deliver("u1", sign(t, agent, ticket(1, day1)).XML)
	nc := ticket(1, day2)
	nc.IdDoc.TipoCFE = cfe.ETicketNC
	nc.Referencias = []cfe.Referencia{{NroLinRef: 1, TpoDocRef: cfe.ETicket, Serie: "A", NroCFERef: 1}}
	id2 := e.deliver("u2", sign(t, agent, nc).XML)
	ana := bearer(e.login("ana", anaPassword).Token)
	carla := bearer(e.login("carla", carlaPassword).Token) // Beta only

	t.Run("get by id", func(t *testing.T) {
		var d issuing.IssuedDetail
		e.do("GET", "/api/v1/cfeemitido/"+strconv.FormatInt(id1, 10), nil, ana...).expect(t, http.StatusOK).decode(t, &d)
		if d.ID != id1 || d.TipoCfe != 101 || d.Nro != 1 || d.UUID != "u1" || d.Estado != "emitido" || d.Origen != "agente" ||
			d.Total.String() != "122" || d.IdCAE != "90269990000" || d.XmlFirmado == "" || !d.FechaFirma.Equal(day1) {
			t.Errorf("detail %+v", d.IssuedSummary)
		}
		e.do("GET", "/api/v1/cfeemitido/"+strconv.FormatInt(id1, 10), nil, "X-API-Key", keyAlfa).expect(t, http.StatusOK)
	})
	t.Run("another company's CFE is 403, a missing one 404", func(t *testing.T) {
		e.do("GET", "/api/v1/cfeemitido/"+strconv.FormatInt(id1, 10), nil, "X-API-Key", keyBeta).expect(t, http.StatusForbidden)
		e.do("GET", "/api/v1/cfeemitido/"+strconv.FormatInt(id1, 10), nil, carla...).expect(t, http.StatusForbidden)
		e.do("GET", "/api/v1/cfeemitido/999", nil, ana...).expect(t, http.StatusNotFound)
		e.do("GET", "/api/v1/comprobante/getByIdCfeEmitido?idCfeEmitido=999", nil, ana...).expect(t, http.StatusNotFound)
		e.do("GET", "/api/v1/comprobante/getByIdCfeEmitido?idCfeEmitido="+strconv.FormatInt(id1, 10), nil, carla...).expect(t, http.StatusForbidden)
	})
	t.Run("getByIdCfeEmitido answers the §2.3 shape", func(t *testing.T) {
		var c issuing.ComprobanteResponse
		e.do("GET", "/api/v1/comprobante/getByIdCfeEmitido?idCfeEmitido="+strconv.FormatInt(id2, 10), nil, ana...).expect(t, http.StatusOK).decode(t, &c)
		if c.ID != id2 || c.TipoCfe != 102 || c.CodRespuesta != "00" || c.XmlFirmado == "" {
			t.Errorf("%+v", c)
		}
		e.do("GET", "/api/v1/comprobante/getByIdCfeEmitido?idCfeEmitido=x", nil, ana...).expect(t, http.StatusBadRequest)
	})
	search := func(t *testing.T, query string, auth []string) []int64 {
		t.Helper()
		var list []sandbox.IssuedSummary
		e.do("GET", "/api/v1/cfeemitido/buscar?"+query, nil, auth...).expect(t, http.StatusOK).decode(t, &list)
		ids := []int64{}
		for _, s := range list {
			ids = append(ids, s.ID)
		}
		return ids
	}
	t.Run("search", func(t *testing.T) {
		for _, c := range []struct {
			query string
			want  []int64
		}{
			{"", []int64{id1, id2}},
			{"tipoFiltro=0", []int64{id1, id2}},
			{"tipoFiltro=102", []int64{id2}},
			{"tipoFiltro=111", []int64{}},
			// Dates are the signing day in Montevideo, bounds included.
			{"fechaFirmaDesde=2026-03-01&fechaFirmaHasta=2026-03-01", []int64{id1}},
			{"fechaFirmaDesde=2026-03-02", []int64{id2}},
			{"fechaFirmaHasta=2026-02-28", []int64{}},
		} {
			if got := search(t, c.query, []string{"X-API-Key", keyAlfa}); !equalIDs(got, c.want) {
				t.Errorf("%q: %v, want %v", c.query, got, c.want)
			}
		}
		if got := search(t, "", []string{"X-API-Key", keyBeta}); len(got) != 0 {
			t.Errorf("Beta sees %v", got)
		}
	})
	t.Run("search rejects bad filters", func(t *testing.T) {
		b := e.do("GET", "/api/v1/cfeemitido/buscar?tipoFiltro=999&fechaFirmaDesde=2026-3-1&fechaFirmaHasta=2026-03-01", nil, ana...).expect(t, http.StatusBadRequest).errBody(t)
		if len(b.Details) != 2 || b.Details[0].Campo != "tipoFiltro" || b.Details[1].Campo != "fechaFirmaDesde" {
			t.Errorf("details %+v", b.Details)
		}
		b = e.do("GET", "/api/v1/cfeemitido/buscar?fechaFirmaDesde=2026-03-02&fechaFirmaHasta=2026-03-01", nil, ana...).expect(t, http.StatusBadRequest).errBody(t)
		if len(b.Details) != 1 || b.Details[0].Campo != "fechaFirmaHasta" {
			t.Errorf("details %+v", b.Details)
		}
	})
	t.Run("search and idEmpresa", func(t *testing.T) {
		var companies []auth.CompanyResponse
		e.do("GET", "/api/v1/usuario/empresas", nil, ana...).expect(t, http.StatusOK).decode(t, &companies)
		alfa := strconv.FormatInt(companies[0].IdEmpresa, 10)
		if got := search(t, "idEmpresa="+alfa, []string{"X-API-Key", keyAlfa}); !equalIDs(got, []int64{id1, id2}) {
			t.Errorf("with the key's own idEmpresa: %v", got)
		}
		// A key with another company's idEmpresa: 403 (interface §5.2 rule 3).
		e.do("GET", "/api/v1/cfeemitido/buscar?idEmpresa="+alfa, nil, "X-API-Key", keyBeta).expect(t, http.StatusForbidden)
		e.do("GET", "/api/v1/cfeemitido/buscar?idEmpresa="+alfa, nil, carla...).expect(t, http.StatusForbidden)
		e.do("GET", "/api/v1/cfeemitido/buscar?idEmpresa=abc", nil, ana...).expect(t, http.StatusBadRequest)
	})
	t.Run("marcar-aceptado", func(t *testing.T) {
		path := "/api/v1/cfeemitido/" + strconv.FormatInt(id1, 10) + "/marcar-aceptado"
		e.do("POST", path, nil, "X-API-Key", keyBeta).expect(t, http.StatusForbidden)
		var s sandbox.IssuedSummary
		e.do("POST", path, nil, "X-API-Key", keyAlfa).expect(t, http.StatusOK).decode(t, &s)
		if s.Estado != "aceptado" || s.AceptadoEn == nil || !s.AceptadoEn.Equal(t0) {
			t.Errorf("summary %+v", s)
		}
		e.clock.Advance(time.Minute)
		e.do("POST", path, nil, ana...).expect(t, http.StatusOK).decode(t, &s)
		if !s.AceptadoEn.Equal(t0) {
			t.Errorf("marking again moved the time to %v", s.AceptadoEn)
		}
		e.do("POST", "/api/v1/cfeemitido/999/marcar-aceptado", nil, ana...).expect(t, http.StatusNotFound)
	})
}

func equalIDs(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
