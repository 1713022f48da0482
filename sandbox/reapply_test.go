package sandbox_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/sandbox/issuing"
)

const reapplyPath = "/api/v1/comprobante/reaplicarReferencia"

// reapplyOK re-applies with auth and parses both CFEs of the answer.
func (e *env) reapplyOK(req issuing.ReapplyRequest, auth ...string) (issuing.ReapplyResponse, *cfe.CFE, *cfe.CFE) {
	e.t.Helper()
	if len(auth) == 0 {
		auth = []string{"X-API-Key", keyAlfa}
	}
	var got issuing.ReapplyResponse
	e.do("POST", reapplyPath, req, auth...).expect(e.t, http.StatusOK).decode(e.t, &got)
	coll, err := cfe.ParseXML([]byte(got.XmlFirmado))
	if err != nil {
		e.t.Fatal(err)
	}
	canc, err := cfe.ParseXML([]byte(got.Anulacion.XmlFirmado))
	if err != nil {
		e.t.Fatal(err)
	}
	return got, coll, canc
}

// facturaTo is an e-Factura of one line at the basic rate to the
// receptor of RUC ruc.
func facturaTo(uuid, ruc string) map[string]any {
	receptor := map[string]any{}
	for k, v := range dgiReceptor {
		receptor[k] = v
	}
	receptor["documento"] = ruc
	return map[string]any{"uuid": uuid, "cfe": map[string]any{
		"idDoc":    map[string]any{"tipoCfe": 111, "formaPago": 2, "montoBruto": 1},
		"receptor": receptor,
		"detalles": []map[string]any{{"indicadorFacturacion": 3, "nombreItem": "Yerba mate 1 kg", "cantidad": 4, "precioUnitario": "152.50"}},
	}}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// lineIndicators returns the IndFact of each line.
func lineIndicators(c *cfe.CFE) []int {
	var out []int
	for _, it := range c.Items {
		out = append(out, it.IndFact)
	}
	return out
}

func TestReapply(t *testing.T) {
	t.Parallel()
	e := start(t)
	t1, t2 := e.emit(ticketRequest("ra-t1")), e.emit(ticketRequest("ra-t2"))
	body := collectionRequest("ra-c1")
	body["adenda"] = "Recibo de caja 77"
	coll := e.emit(body)

	var first issuing.ReapplyResponse
	t.Run("the collection is annulled and issued again with the new references", func(t *testing.T) {
		got, next, canc := e.reapplyOK(issuing.ReapplyRequest{IdCfeReferencia: coll.ID, Referencias: []int64{t1.ID, t2.ID}, Fecha: today})
		first = got
		// 1. The cancellation, as anular makes it (§4.4.1 rule 4).
		if got.Anulacion.TipoCfe != 101 || canc.IdDoc.IndCobPropia != 1 || len(canc.Referencias) != 1 ||
			canc.Referencias[0].NroCFERef != coll.Nro || canc.Referencias[0].TpoDocRef != cfe.ETicket {
			t.Errorf("cancellation %d, IndCobPropia %d, references %+v", got.Anulacion.TipoCfe, canc.IdDoc.IndCobPropia, canc.Referencias)
		}
		if f := lineIndicators(canc); len(f) != 1 || f[0] != 7 || decString(canc.Totales.MontoNF) != "-500" {
			t.Errorf("cancellation lines %v, MontoNF %s", f, decString(canc.Totales.MontoNF))
		}
		// 2. The new collection: same type, lines and amounts, the new references.
		if got.TipoCfe != 101 || got.CodRespuesta != "00" || next.IdDoc.IndCobPropia != 1 || next.IdDoc.FchEmis.String() != today {
			t.Errorf("new collection %+v, IndCobPropia %d", got.ComprobanteResponse, next.IdDoc.IndCobPropia)
		}
		if f := lineIndicators(next); len(f) != 1 || f[0] != 6 || next.Items[0].NomItem != "Cobranza e-Factura A-1" ||
			decString(next.Totales.MontoNF) != "500" || decString(next.Totales.MntPagar) != "500" {
			t.Errorf("new collection lines %v %q, MontoNF %s, MntPagar %s", f, next.Items[0].NomItem, decString(next.Totales.MontoNF), decString(next.Totales.MntPagar))
		}
		if len(next.Referencias) != 2 {
			t.Fatalf("references %+v", next.Referencias)
		}
		for i, want := range []issuing.ComprobanteResponse{t1, t2} {
			r := next.Referencias[i]
			if r.NroLinRef != i+1 || r.TpoDocRef != cfe.ETicket || r.Serie != "H" || r.NroCFERef != want.Nro || r.FechaCFEref == nil || r.FechaCFEref.String() != today {
				t.Errorf("reference %d: %+v, want 101 H-%d of %s", i+1, r, want.Nro, today)
			}
		}
		// Numbers follow in order: the cancellation, then the new collection.
		if got.Anulacion.Nro != coll.Nro+1 || got.Nro != coll.Nro+2 {
			t.Errorf("numbers %d and %d after %d", got.Anulacion.Nro, got.Nro, coll.Nro)
		}
		for _, x := range []string{got.XmlFirmado, got.Anulacion.XmlFirmado} {
			testtool.MustValidateXSD(t, testtool.XSD(t, "CFEDGI.xsd"), []byte(x))
			if out, ok := testtool.XMLSecVerify(t, []byte(x), ""); !ok {
				t.Errorf("xmlsec1: %s", out)
			}
		}
		var d issuing.IssuedDetail
		e.do("GET", "/api/v1/cfeemitido/"+itoa(got.Anulacion.ID), nil, "X-API-Key", keyAlfa).expect(t, http.StatusOK).decode(t, &d)
		if d.Anula != coll.ID {
			t.Errorf("the cancellation's record annuls %d, want %d", d.Anula, coll.ID)
		}
		var nd issuing.IssuedDetail
		e.do("GET", "/api/v1/cfeemitido/"+itoa(got.ID), nil, "X-API-Key", keyAlfa).expect(t, http.StatusOK).decode(t, &nd)
		if nd.Adenda != "Recibo de caja 77" || nd.Anula != 0 {
			t.Errorf("the new collection's record: adenda %q, anula %d", nd.Adenda, nd.Anula)
		}
	})
	t.Run("a retry answers the same CFEs, other references are a conflict", func(t *testing.T) {
		before := e.issuedCount()
		again, _, _ := e.reapplyOK(issuing.ReapplyRequest{IdCfeReferencia: coll.ID, Referencias: []int64{t1.ID, t2.ID}, Fecha: today})
		if again.ID != first.ID || again.Anulacion.ID != first.Anulacion.ID || e.issuedCount() != before {
			t.Errorf("retry %d/%d, first %d/%d", again.ID, again.Anulacion.ID, first.ID, first.Anulacion.ID)
		}
		// The same CFEs in another order are the same request.
		reordered, _, _ := e.reapplyOK(issuing.ReapplyRequest{IdCfeReferencia: coll.ID, Referencias: []int64{t2.ID, t1.ID}, Fecha: today})
		if reordered.ID != first.ID || e.issuedCount() != before {
			t.Errorf("a retry with the references reordered got %d, want %d", reordered.ID, first.ID)
		}
		rej := e.do("POST", reapplyPath, issuing.ReapplyRequest{IdCfeReferencia: coll.ID, Referencias: []int64{t1.ID}, Fecha: today}, "X-API-Key", keyAlfa).
			expect(t, http.StatusConflict).rejection(t)
		if !strings.Contains(rej.Error, "id "+itoa(first.ID)) {
			t.Errorf("conflict %q should name the collection that re-applied it", rej.Error)
		}
	})
	t.Run("the new collection can be re-applied in turn, with a JWT", func(t *testing.T) {
		got, next, canc := e.reapplyOK(issuing.ReapplyRequest{IdCfeReferencia: first.ID, Referencias: []int64{t2.ID}}, bearer(e.login("ana", anaPassword).Token)...)
		if canc.Referencias[0].NroCFERef != first.Nro || len(next.Referencias) != 1 || next.Referencias[0].NroCFERef != t2.Nro || got.ID == first.ID {
			t.Errorf("second re-application: cancellation refs %+v, refs %+v", canc.Referencias, next.Referencias)
		}
	})
	t.Run("an annulled collection is issued again without a second cancellation", func(t *testing.T) {
		c2 := e.emit(collectionRequest("ra-c2"))
		canc, _ := e.annulOK(c2.ID, today)
		got, _, _ := e.reapplyOK(issuing.ReapplyRequest{IdCfeReferencia: c2.ID, Referencias: []int64{t1.ID}})
		if got.Anulacion.ID != canc.ID || got.Nro != canc.Nro+1 {
			t.Errorf("Anulacion %d (want anular's %d), new number %d after %d", got.Anulacion.ID, canc.ID, got.Nro, canc.Nro)
		}
	})
	t.Run("a collection whose cancellation was reverted is a conflict", func(t *testing.T) {
		c3 := e.emit(collectionRequest("ra-c3"))
		canc, _ := e.annulOK(c3.ID, today)
		rev, _ := e.annulOK(canc.ID, today)
		rej := e.do("POST", reapplyPath, issuing.ReapplyRequest{IdCfeReferencia: c3.ID, Referencias: []int64{t1.ID}}, "X-API-Key", keyAlfa).
			expect(t, http.StatusConflict).rejection(t)
		if !strings.Contains(rej.Error, "id "+itoa(rev.ID)) {
			t.Errorf("conflict %q should name the reversion %d", rej.Error, rev.ID)
		}
		// The cancellation itself is not a collection to re-apply.
		e.do("POST", reapplyPath, issuing.ReapplyRequest{IdCfeReferencia: canc.ID, Referencias: []int64{t1.ID}}, "X-API-Key", keyAlfa).expectInvalid(t, "idCfeReferencia")
	})
}

func TestReapply_Refusals(t *testing.T) {
	t.Parallel()
	e := start(t)
	t1 := e.emit(ticketRequest("rr-t1"))
	coll := e.emit(collectionRequest("rr-c1"))
	otherColl := e.emit(collectionRequest("rr-c2"))
	t2 := e.emit(ticketRequest("rr-t2"))
	credit, _ := e.annulOK(t2.ID, today)
	betaColl := e.do("POST", "/api/v1/comprobante/emitir", collectionRequest("rr-beta"), "X-API-Key", keyBeta).expect(t, http.StatusOK)
	var beta issuing.ComprobanteResponse
	betaColl.decode(t, &beta)
	factura := e.emit(facturaTo("rr-f1", "214844360018"))
	otherFactura := e.emit(facturaTo("rr-f2", rucBeta))
	facturaColl := collectionRequest("rr-fc")
	facturaColl["cfe"].(map[string]any)["idDoc"] = map[string]any{"tipoCfe": 111, "formaPago": 1, "indicadorCobranzaPropia": 1}
	facturaColl["cfe"].(map[string]any)["receptor"] = facturaTo("", "214844360018")["cfe"].(map[string]any)["receptor"]
	fColl := e.emit(facturaColl)
	before := e.issuedCount()

	for _, c := range []struct {
		name  string
		req   issuing.ReapplyRequest
		campo string
	}{
		{"no collection id", issuing.ReapplyRequest{Referencias: []int64{t1.ID}}, "idCfeReferencia"},
		{"no references", issuing.ReapplyRequest{IdCfeReferencia: coll.ID}, "referencias"},
		{"41 references", issuing.ReapplyRequest{IdCfeReferencia: coll.ID, Referencias: make([]int64, 41)}, "referencias"},
		{"a repeated reference", issuing.ReapplyRequest{IdCfeReferencia: coll.ID, Referencias: []int64{t1.ID, t1.ID}}, "referencias[1]"},
		{"itself", issuing.ReapplyRequest{IdCfeReferencia: coll.ID, Referencias: []int64{coll.ID}}, "referencias[0]"},
		{"a bad fecha", issuing.ReapplyRequest{IdCfeReferencia: coll.ID, Referencias: []int64{t1.ID}, Fecha: "02/03/2026"}, "fecha"},
		{"a future fecha", issuing.ReapplyRequest{IdCfeReferencia: coll.ID, Referencias: []int64{t1.ID}, Fecha: "2026-03-03"}, "fecha"},
		{"a fecha before the collection", issuing.ReapplyRequest{IdCfeReferencia: coll.ID, Referencias: []int64{t1.ID}, Fecha: "2026-03-01"}, "fecha"},
		{"not a collection", issuing.ReapplyRequest{IdCfeReferencia: t1.ID, Referencias: []int64{factura.ID}}, "idCfeReferencia"},
		{"an unknown reference", issuing.ReapplyRequest{IdCfeReferencia: coll.ID, Referencias: []int64{9999}}, "referencias[0]"},
		{"a collection as reference", issuing.ReapplyRequest{IdCfeReferencia: coll.ID, Referencias: []int64{otherColl.ID}}, "referencias[0]"},
		{"a credit note as reference", issuing.ReapplyRequest{IdCfeReferencia: coll.ID, Referencias: []int64{credit.ID}}, "referencias[0]"},
		{"an annulled reference", issuing.ReapplyRequest{IdCfeReferencia: coll.ID, Referencias: []int64{t2.ID}}, "referencias[0]"},
		{"another receptor's e-Factura", issuing.ReapplyRequest{IdCfeReferencia: fColl.ID, Referencias: []int64{factura.ID, otherFactura.ID}}, "referencias[1]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := e.do("POST", reapplyPath, c.req, "X-API-Key", keyAlfa)
			r.expectInvalid(t, c.campo)
			if rej := r.rejection(t); rej.CodRespuesta != "01" {
				t.Errorf("CodRespuesta %q, want 01", rej.CodRespuesta)
			}
		})
	}
	t.Run("an e-Factura collection of the same receptor is accepted", func(t *testing.T) {
		got, next, _ := e.reapplyOK(issuing.ReapplyRequest{IdCfeReferencia: fColl.ID, Referencias: []int64{factura.ID}})
		if got.TipoCfe != 111 || next.Receptor == nil || next.Receptor.DocRecep != "214844360018" {
			t.Errorf("new collection %d to %+v", got.TipoCfe, next.Receptor)
		}
		before += 2
	})
	t.Run("403 for another company's collection or reference, 404 for none", func(t *testing.T) {
		e.do("POST", reapplyPath, issuing.ReapplyRequest{IdCfeReferencia: beta.ID, Referencias: []int64{t1.ID}}, "X-API-Key", keyAlfa).expect(t, http.StatusForbidden).rejection(t)
		e.do("POST", reapplyPath, issuing.ReapplyRequest{IdCfeReferencia: coll.ID, Referencias: []int64{beta.ID}}, "X-API-Key", keyAlfa).expect(t, http.StatusForbidden).rejection(t)
		e.do("POST", reapplyPath, issuing.ReapplyRequest{IdCfeReferencia: coll.ID, Referencias: []int64{t1.ID}}, bearer(e.login("carla", carlaPassword).Token)...).
			expect(t, http.StatusForbidden)
		e.do("POST", reapplyPath, issuing.ReapplyRequest{IdCfeReferencia: 9999, Referencias: []int64{t1.ID}}, "X-API-Key", keyAlfa).expect(t, http.StatusNotFound).rejection(t)
		e.do("POST", reapplyPath, issuing.ReapplyRequest{IdCfeReferencia: coll.ID, Referencias: []int64{t1.ID}}).expect(t, http.StatusUnauthorized)
		e.do("POST", reapplyPath, `{"idCfeReferencia":`, "X-API-Key", keyAlfa).expectInvalid(t, "")
	})
	t.Run("a refusal issues nothing", func(t *testing.T) {
		if n := e.issuedCount(); n != before {
			t.Errorf("%d CFEs listed, want %d", n, before)
		}
		// e-Tickets 1 to 4 were issued before the refusals: the next two numbers are 5 and 6.
		got, _, _ := e.reapplyOK(issuing.ReapplyRequest{IdCfeReferencia: coll.ID, Referencias: []int64{t1.ID}})
		if got.Anulacion.Nro != 5 || got.Nro != 6 {
			t.Errorf("numbers %d and %d, want 5 and 6", got.Anulacion.Nro, got.Nro)
		}
	})
}

// TestReservedUUIDs: a client's uuid cannot take the form of the uuids the
// sandbox gives its own counter-receipts and re-applied collections, and a
// refusal consumes no number.
func TestReservedUUIDs(t *testing.T) {
	t.Parallel()
	e := start(t)
	first := e.emit(ticketRequest("res-1"))
	unsigned, err := cfe.MarshalXML(ticket(1, t0))
	if err != nil {
		t.Fatal(err)
	}
	for _, uuid := range []string{"anulacion-" + itoa(first.ID), "reaplicacion-7"} {
		for _, c := range []struct {
			path string
			body any
		}{
			{"/api/v1/comprobante/emitir", ticketRequest(uuid)},
			{"/api/v1/comprobante/previsualizar", ticketRequest(uuid)},
			{"/api/v1/comprobante/firmarXml", map[string]any{"uuid": uuid, "xml": string(unsigned)}},
			{"/api/v1/comprobante/recibirFirmado", map[string]any{"uuid": uuid, "xmlFirmado": "<CFE/>"}},
		} {
			rej := e.do("POST", c.path, c.body, "X-API-Key", keyAlfa).expect(t, http.StatusBadRequest).rejection(t)
			if len(rej.Details) != 1 || rej.Details[0].Campo != "uuid" || !strings.Contains(rej.Details[0].Mensaje, "reserva") {
				t.Errorf("%s with uuid %s: %+v", c.path, uuid, rej.Details)
			}
		}
	}
	if n := e.emit(ticketRequest("res-2")).Nro; n != first.Nro+1 {
		t.Errorf("next e-Ticket %d, want %d: a refused request consumed a number", n, first.Nro+1)
	}
	// The counter-receipt of the first e-Ticket still gets its own uuid.
	canc, _ := e.annulOK(first.ID, today)
	if canc.TipoCfe != 102 {
		t.Errorf("annulment %+v", canc)
	}
}
