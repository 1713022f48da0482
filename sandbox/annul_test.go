package sandbox_test

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/sandbox/issuing"
)

// annul posts the form of POST /api/v1/comprobante/anular with Alfa's key.
func (e *env) annul(id, fecha string) *resp {
	e.t.Helper()
	form := url.Values{"idCfeReferencia": {id}, "fecha": {fecha}}.Encode()
	req := e.do("POST", "/api/v1/comprobante/anular", form, "Content-Type", "application/x-www-form-urlencoded", "X-API-Key", keyAlfa)
	return req
}

func (e *env) annulOK(id int64, fecha string) (issuing.ComprobanteResponse, *cfe.CFE) {
	e.t.Helper()
	var got issuing.ComprobanteResponse
	e.annul(strconv.FormatInt(id, 10), fecha).expect(e.t, http.StatusOK).decode(e.t, &got)
	doc, err := cfe.ParseXML([]byte(got.XmlFirmado))
	if err != nil {
		e.t.Fatal(err)
	}
	if got.CodRespuesta != "00" {
		e.t.Errorf("CodRespuesta %q", got.CodRespuesta)
	}
	return got, doc
}

// today is t0's date in Montevideo.
const today = "2026-03-02"

// dgiReceptor is a receptor identified by RUC (DGI's own).
var dgiReceptor = map[string]any{"tipoDocumento": 2, "codigoPais": "UY", "documento": "214844360018",
	"razonSocial": "Dirección General Impositiva", "direccion": "Fernández Crespo 1534", "ciudad": "Montevideo", "departamento": "Montevideo"}

func remitoRequest(uuid string) map[string]any {
	return map[string]any{"uuid": uuid, "cfe": map[string]any{
		"idDoc":    map[string]any{"tipoCfe": 181, "tipoTraslado": 1},
		"receptor": dgiReceptor,
		"detalles": []map[string]any{{"nombreItem": "Cajas de yerba 1 kg", "cantidad": 40, "unidadMedida": "caja"}},
	}}
}

// collectionRequest is an own collection (IndCobPropia 1) of 500.00 for
// e-Factura A-1: one non-billable line (IndFact 6), so MontoNF = 500.00 and
// the amount to pay is 500.00.
func collectionRequest(uuid string) map[string]any {
	return map[string]any{"uuid": uuid, "cfe": map[string]any{
		"idDoc":       map[string]any{"tipoCfe": 101, "formaPago": 1, "indicadorCobranzaPropia": 1},
		"detalles":    []map[string]any{{"indicadorFacturacion": 6, "nombreItem": "Cobranza e-Factura A-1", "cantidad": 1, "precioUnitario": "500.00"}},
		"referencias": []map[string]any{{"numeroLinea": 1, "tipoCfe": 111, "serie": "A", "numero": 1, "fecha": "2026-02-20"}},
	}}
}

func TestAnnul_Rules(t *testing.T) {
	t.Parallel()
	e := start(t)
	ref := func(t *testing.T, doc *cfe.CFE, typ cfe.Type, nro int64) {
		t.Helper()
		if len(doc.Referencias) != 1 || doc.Referencias[0].TpoDocRef != typ || doc.Referencias[0].Serie != "H" || doc.Referencias[0].NroCFERef != nro {
			t.Errorf("references %+v, want only %d H-%d", doc.Referencias, typ, nro)
		}
	}
	indFacts := func(doc *cfe.CFE) []int {
		var out []int
		for _, it := range doc.Items {
			out = append(out, it.IndFact)
		}
		return out
	}

	ticket := e.emit(ticketRequest("t-1"))
	var credit issuing.ComprobanteResponse
	t.Run("1: an e-Ticket is annulled by its credit note", func(t *testing.T) {
		got, doc := e.annulOK(ticket.ID, today)
		if got.TipoCfe != 102 || got.Serie != "H" || got.Nro != 1 || doc.IdDoc.FchEmis.String() != today {
			t.Errorf("counter-receipt %d %s-%d of %v", got.TipoCfe, got.Serie, got.Nro, doc.IdDoc.FchEmis)
		}
		ref(t, doc, cfe.ETicket, ticket.Nro)
		if s := decString(doc.Totales.MntPagar); s != "415" {
			t.Errorf("MntPagar %s, want the original's 415", s)
		}
		credit = got
	})
	t.Run("2: a credit note is annulled by a debit note", func(t *testing.T) {
		got, doc := e.annulOK(credit.ID, today)
		if got.TipoCfe != 103 || got.Nro != 1 {
			t.Errorf("counter-receipt %d %s-%d", got.TipoCfe, got.Serie, got.Nro)
		}
		ref(t, doc, cfe.ETicketNC, credit.Nro)
	})
	t.Run("3: an e-Remito is annulled by a correction of the same type", func(t *testing.T) {
		remito := e.emit(remitoRequest("r-1"))
		got, doc := e.annulOK(remito.ID, today)
		if got.TipoCfe != 181 || got.Nro != remito.Nro+1 {
			t.Errorf("counter-receipt %d %s-%d", got.TipoCfe, got.Serie, got.Nro)
		}
		ref(t, doc, cfe.ERemito, remito.Nro)
		if f := indFacts(doc); len(f) != 1 || f[0] != 8 {
			t.Errorf("line indicators %v, want [8] (item deducted)", f)
		}
	})
	var cancellation issuing.ComprobanteResponse
	t.Run("4: an own collection is annulled by the same type with IndFact 7", func(t *testing.T) {
		coll := e.emit(collectionRequest("c-1"))
		got, doc := e.annulOK(coll.ID, today)
		if got.TipoCfe != 101 || doc.IdDoc.IndCobPropia != 1 {
			t.Errorf("counter-receipt %d, IndCobPropia %d", got.TipoCfe, doc.IdDoc.IndCobPropia)
		}
		ref(t, doc, cfe.ETicket, coll.Nro)
		if f := indFacts(doc); len(f) != 1 || f[0] != 7 {
			t.Errorf("line indicators %v, want [7]", f)
		}
		if s := decString(doc.Totales.MontoNF); s != "-500" {
			t.Errorf("MontoNF %s, want -500", s)
		}
		cancellation = got
	})
	t.Run("5: annulling that cancellation reports IndFact 6 and a positive MontoNF", func(t *testing.T) {
		got, doc := e.annulOK(cancellation.ID, today)
		if got.TipoCfe != 101 || doc.IdDoc.IndCobPropia != 1 {
			t.Errorf("counter-receipt %d, IndCobPropia %d", got.TipoCfe, doc.IdDoc.IndCobPropia)
		}
		ref(t, doc, cfe.ETicket, cancellation.Nro)
		if f := indFacts(doc); len(f) != 1 || f[0] != 6 {
			t.Errorf("line indicators %v, want [6]", f)
		}
		if s := decString(doc.Totales.MontoNF); s != "500" {
			t.Errorf("MontoNF %s, want 500", s)
		}
	})
	t.Run("the records link both ways", func(t *testing.T) {
		var d issuing.IssuedDetail
		e.do("GET", "/api/v1/cfeemitido/"+strconv.FormatInt(credit.ID, 10), nil, "X-API-Key", keyAlfa).expect(t, http.StatusOK).decode(t, &d)
		if d.Anula != ticket.ID || d.TipoCfe != 102 {
			t.Errorf("credit note record %+v", d.IssuedSummary)
		}
	})
}

func TestAnnul_Errors(t *testing.T) {
	t.Parallel()
	e := start(t)
	body := ticketRequest("t-1")
	body["cfe"].(map[string]any)["idDoc"].(map[string]any)["fechaEmision"] = "2026-02-27"
	orig := e.emit(body)
	id := strconv.FormatInt(orig.ID, 10)

	for _, bad := range []string{"", "abc", "0", "-4", "1.5"} {
		t.Run("idCfeReferencia "+strconv.Quote(bad), func(t *testing.T) {
			rej := e.annul(bad, today).expect(t, http.StatusBadRequest).rejection(t)
			if rej.MensajeRespuesta != "Id de CFE referencia invalido" || rej.CodRespuesta != "01" {
				t.Errorf("rejection %+v", rej)
			}
		})
	}
	t.Run("an id no CFE has", func(t *testing.T) {
		rej := e.annul("999", today).expect(t, http.StatusNotFound).rejection(t)
		if rej.MensajeRespuesta != "CFE no existe" {
			t.Errorf("rejection %+v", rej)
		}
	})
	t.Run("another company's CFE", func(t *testing.T) {
		form := url.Values{"idCfeReferencia": {id}, "fecha": {today}}.Encode()
		e.do("POST", "/api/v1/comprobante/anular", form, "Content-Type", "application/x-www-form-urlencoded", "X-API-Key", keyBeta).
			expect(t, http.StatusForbidden)
	})
	for name, c := range map[string]struct{ fecha, msg string }{
		"a malformed fecha":                {"02/03/2026", "AAAA-MM-DD"},
		"a fecha before the CFE's FchEmis": {"2026-02-26", "anterior a la fecha de emisión del CFE (2026-02-27)"},
		"a fecha after today (Montevideo)": {"2026-03-03", "posterior a hoy (2026-03-02)"},
	} {
		t.Run(name, func(t *testing.T) {
			rej := e.annul(id, c.fecha).expect(t, http.StatusBadRequest).rejection(t)
			if len(rej.Details) != 1 || rej.Details[0].Campo != "fecha" || !strings.Contains(rej.Details[0].Mensaje, c.msg) || rej.CodRespuesta != "01" {
				t.Errorf("rejection %+v", rej)
			}
		})
	}
	t.Run("nothing was numbered by the rejections", func(t *testing.T) {
		got, _ := e.annulOK(orig.ID, "2026-02-28")
		if got.Nro != 1 {
			t.Errorf("first credit note numbered %d", got.Nro)
		}
		again, _ := e.annulOK(orig.ID, "2026-02-28")
		if again.ID != got.ID || again.Nro != got.Nro {
			t.Errorf("a repeated annulment issued another counter-receipt: %+v", again)
		}
		rej := e.annul(id, today).expect(t, http.StatusConflict).rejection(t)
		if !strings.Contains(rej.MensajeRespuesta, "ya fue anulado por el CFE id "+strconv.FormatInt(got.ID, 10)) {
			t.Errorf("rejection %+v", rej)
		}
	})
}
