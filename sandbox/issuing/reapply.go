package issuing

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/issuer"
	"github.com/cfe-agent/cfe-agent/sandbox/auth"
	"github.com/cfe-agent/cfe-agent/sandbox/data"
	"github.com/cfe-agent/cfe-agent/sandbox/web"
)

// Re-applying an own collection (POST /api/v1/comprobante/reaplicarReferencia).
//
// DGI's rules (Formato de los CFE v24, docs/sandbox.md has the reading): an
// own collection is an e-Ticket or e-Factura with IndCobPropia = 1 whose
// lines carry IndFact 6 or 7, and its zone F must reference the CFEs it
// collects. A signed CFE is never modified: it is corrected by issuing
// another. So a collection whose money belongs to other documents (a wrong
// reference, an advance payment whose invoice now exists, an invoice that
// was annulled) is re-applied in two CFEs, both through the issuing path
// that anular uses:
//
//  1. the collection's cancellation, exactly as anular makes it (interface
//     §4.4.1 rule 4: same type, IndCobPropia 1, IndFact 7, referencing the
//     collection) — skipped when the collection was already annulled;
//  2. a new collection with the same receptor, currency, lines and totals,
//     dated fecha, whose references are the CFEs named in the request.

// ReapplyRequest is the body of POST /api/v1/comprobante/reaplicarReferencia.
type ReapplyRequest struct {
	IdCfeReferencia int64   `json:"idCfeReferencia"` // the collection, by hosted id
	Referencias     []int64 `json:"referencias"`     // the CFEs it now collects, by hosted id
	Fecha           string  `json:"fecha,omitempty"` // YYYY-MM-DD; today in Montevideo when empty
}

// ReapplyResponse is the §2.3 answer of the new collection with, in
// Anulacion, the §2.3 answer of the collection's cancellation.
type ReapplyResponse struct {
	ComprobanteResponse
	Anulacion ComprobanteResponse `json:"Anulacion"`
}

func reapplyUUID(id int64) string { return reapplyUUIDPrefix + strconv.FormatInt(id, 10) }

// HandleReapply is POST /api/v1/comprobante/reaplicarReferencia: it re-applies a collection. Every check that can refuse the
// request (the collection, each referenced CFE, the fecha, and DGI's rules
// on both CFEs to issue) runs before the first number is taken. A retry of
// the same request answers the same two CFEs; a retry after the
// cancellation was issued but the new collection was not (the service
// failed in between) issues only the new collection.
func (rc *Receipts) HandleReapply(w http.ResponseWriter, r *http.Request) {
	var req ReapplyRequest
	if err := web.DecodeJSON(r, &req); err != nil {
		writeRejection(rc.log, w, r, err)
		return
	}
	p := auth.PrincipalOf(r)
	fecha, err := rc.checkReapplyRequest(req)
	if err != nil {
		writeRejection(rc.log, w, r, err)
		return
	}
	orig, err := visibleCFE(rc.db, p, req.IdCfeReferencia)
	if cfe.ErrorCode(err) == cfe.ENOTFOUND {
		err = &cfe.Error{Code: cfe.ENOTFOUND, Respuesta: cfe.RespRechazoValidacion, Message: msgNoCFE}
	}
	if err != nil {
		writeRejection(rc.log, w, r, err)
		return
	}
	targets, err := rc.reapplyTargets(p, orig, req.Referencias)
	if err != nil {
		writeRejection(rc.log, w, r, err)
		return
	}
	resp, err := rc.reapply(r.Context(), orig, targets, fecha, req.Fecha)
	if err != nil {
		writeRejection(rc.log, w, r, err)
		return
	}
	web.WriteJSON(w, http.StatusOK, resp)
}

// checkReapplyRequest checks the request's own fields and returns its fecha.
func (rc *Receipts) checkReapplyRequest(req ReapplyRequest) (cfe.Date, error) {
	var fields []cfe.FieldError
	if req.IdCfeReferencia <= 0 {
		fields = append(fields, cfe.FieldError{Campo: "idCfeReferencia", Mensaje: msgBadReference})
	}
	switch n := len(req.Referencias); {
	case n == 0:
		fields = append(fields, cfe.FieldError{Campo: "referencias", Mensaje: "indique el id de al menos un CFE que la cobranza cobra"})
	case n > maxReferences:
		fields = append(fields, cfe.FieldError{Campo: "referencias", Mensaje: fmt.Sprintf(
			"una cobranza referencia como máximo %d CFE (DGI, zona F); emita otra cobranza para el resto", maxReferences)})
	}
	seen := map[int64]bool{}
	for i, id := range req.Referencias {
		campo := fmt.Sprintf("referencias[%d]", i)
		switch {
		case id <= 0:
			fields = append(fields, cfe.FieldError{Campo: campo, Mensaje: "debe ser el id (número mayor que cero) de un CFE emitido"})
		case seen[id]:
			fields = append(fields, cfe.FieldError{Campo: campo, Mensaje: fmt.Sprintf("el CFE id %d ya está referenciado", id)})
		case id == req.IdCfeReferencia:
			fields = append(fields, cfe.FieldError{Campo: campo, Mensaje: "una cobranza no puede referenciarse a sí misma"})
		}
		seen[id] = true
	}
	today := cfe.DateOf(rc.now().In(cfe.Montevideo))
	fecha := today
	if f := strings.TrimSpace(req.Fecha); f != "" {
		var err error
		if fecha, err = cfe.ParseDate(f); err != nil {
			fields = append(fields, cfe.FieldError{Campo: "fecha", Mensaje: "debe ser una fecha AAAA-MM-DD"})
		} else if fecha.After(today) {
			fields = append(fields, cfe.FieldError{Campo: "fecha", Mensaje: "no puede ser posterior a hoy (" + today.String() + ")"})
		}
	}
	return fecha, web.Invalid(fields...)
}

// reapplyTargets reads the referenced CFEs: each must be the caller's (403
// otherwise), of the collection's company, a sale document or debit note
// that can be collected, not annulled and, when the collection names its
// receptor, addressed to the same receptor.
func (rc *Receipts) reapplyTargets(p *auth.Principal, orig *data.CFERecord, ids []int64) ([]*data.CFERecord, error) {
	coll, err := cfe.ParseXML(orig.XML)
	if err != nil {
		return nil, err
	}
	out := make([]*data.CFERecord, 0, len(ids))
	var fields []cfe.FieldError
	for i, id := range ids {
		campo := fmt.Sprintf("referencias[%d]", i)
		rec, err := visibleCFE(rc.db, p, id)
		switch {
		case cfe.ErrorCode(err) == cfe.ENOTFOUND:
			fields = append(fields, cfe.FieldError{Campo: campo, Mensaje: fmt.Sprintf("el CFE id %d no existe", id)})
			continue
		case err != nil:
			return nil, err
		case rec.Company != orig.Company:
			fields = append(fields, cfe.FieldError{Campo: campo, Mensaje: "el CFE es de otra empresa que la cobranza"})
			continue
		}
		doc, err := cfe.ParseXML(rec.XML)
		if err != nil {
			return nil, err
		}
		if msg := collectable(coll, rec, doc); msg != "" {
			fields = append(fields, cfe.FieldError{Campo: campo, Mensaje: fmt.Sprintf("el CFE id %d (%s %s-%d) %s", id, rec.Type.Name(), rec.Serie, rec.Nro, msg)})
			continue
		}
		out = append(out, rec)
	}
	return out, web.Invalid(fields...)
}

// collectable says why doc (record rec) cannot be collected by coll, or "".
func collectable(coll *cfe.CFE, rec *data.CFERecord, doc *cfe.CFE) string {
	info, _ := rec.Type.Info()
	switch {
	case doc.IdDoc.IndCobPropia != 0:
		return "es una cobranza propia: una cobranza referencia los comprobantes que cobra"
	case info.Kind == cfe.KindCreditNote ||
		(info.Element != cfe.ElemTicket && info.Element != cfe.ElemFactura && info.Element != cfe.ElemFacturaExp):
		return "no se cobra: una cobranza referencia e-Tickets, e-Facturas o sus notas de débito"
	case rec.CancelledBy != 0:
		return fmt.Sprintf("fue anulado por el CFE id %d", rec.CancelledBy)
	case coll.Receptor != nil && receptorID(coll.Receptor) != "" && (doc.Receptor == nil || receptorID(doc.Receptor) != receptorID(coll.Receptor)):
		return "no es del mismo receptor que la cobranza (" + receptorID(coll.Receptor) + ")"
	}
	return ""
}

// receptorID identifies a receptor by document type and number ("" when
// it has no document).
func receptorID(r *cfe.Receptor) string {
	doc := r.DocRecep + r.DocRecepExt
	if doc == "" {
		return ""
	}
	return strconv.Itoa(r.TipoDocRecep) + ":" + doc
}

// reapply issues the cancellation of orig (unless it exists) and the new
// collection referencing targets. sentFecha is the request's fecha as sent
// (empty when defaulted to today): a retry is the same request when it names
// the same CFEs, in any order, and the same fecha or none.
func (rc *Receipts) reapply(ctx context.Context, orig *data.CFERecord, targets []*data.CFERecord, fecha cfe.Date, sentFecha string) (*ReapplyResponse, error) {
	coll, err := cfe.ParseXML(orig.XML)
	if err != nil {
		return nil, err
	}
	if coll.IdDoc.IndCobPropia != 1 {
		return nil, reapplyInvalid("idCfeReferencia", fmt.Sprintf("el CFE id %d (%s %s-%d) no es una cobranza propia (IndCobPropia)", orig.ID, orig.Type.Name(), orig.Serie, orig.Nro))
	}
	if coll.Totales.MontoNF == nil || !coll.Totales.MontoNF.IsPositive() {
		return nil, reapplyInvalid("idCfeReferencia", fmt.Sprintf(
			"el CFE id %d es la anulación de una cobranza, no una cobranza: reaplique la cobranza que anula", orig.ID))
	}
	if fecha.Before(orig.FchEmis) {
		return nil, reapplyInvalid("fecha", "no puede ser anterior a la fecha de emisión de la cobranza ("+orig.FchEmis.String()+")")
	}
	ids := make([]int64, 0, len(targets))
	for _, t := range targets {
		ids = append(ids, t.ID)
	}
	slices.Sort(ids)
	idText := make([]string, len(ids))
	for i, id := range ids {
		idText[i] = strconv.FormatInt(id, 10)
	}
	hash := contentHash(strconv.FormatInt(orig.ID, 10), strings.Join(idText, ","), sentFecha)

	// A retry answers what the first request issued.
	prev, cancellation, err := rc.reapplied(orig)
	if err != nil {
		return nil, err
	}
	if prev != nil && cancellation == nil {
		// Only a damaged store has the new collection without the cancellation.
		return nil, fmt.Errorf("sandbox: collection %d re-applied by %d but not annulled", orig.ID, prev.ID)
	}
	if prev != nil {
		if prev.RequestHash != hash {
			return nil, &cfe.Error{Code: cfe.ECONFLICT, Respuesta: cfe.RespRechazoValidacion, Message: fmt.Sprintf(
				"la cobranza ya fue reaplicada por el CFE id %d: para cambiar sus referencias, reaplique ese CFE", prev.ID)}
		}
		return &ReapplyResponse{ComprobanteResponse: comprobanteResponse(prev), Anulacion: comprobanteResponse(cancellation)}, nil
	}
	if cancellation != nil && cancellation.CancelledBy != 0 {
		return nil, &cfe.Error{Code: cfe.ECONFLICT, Respuesta: cfe.RespRechazoValidacion, Message: fmt.Sprintf(
			"la anulación de esta cobranza fue revertida por el CFE id %d: reaplique ese CFE", cancellation.CancelledBy)}
	}

	next := newCollection(coll, targets, fecha)
	next.Adenda = orig.Adenda
	// DGI's rules on the new collection, before any number is taken.
	check := next.Clone()
	check.TmstFirma = rc.now().In(cfe.Montevideo).Truncate(time.Second)
	if err := cfe.Validate(check, cfe.DefaultTaxConfig()); err != nil {
		return nil, err
	}
	if cancellation == nil {
		if cancellation, err = rc.annul(ctx, orig, fecha); err != nil {
			return nil, err
		}
	}
	// The cancellation is issued: the new collection is issued even if the
	// client goes away now, and a failure still names the cancellation.
	ctx = context.WithoutCancel(ctx)
	rec, err := rc.sign(ctx, orig.Company, 0, func(ci *companyIssuer) (*issuer.Result, error) {
		return ci.iss.IssueCFE(ctx, reapplyUUID(orig.ID), hash, next)
	})
	if err != nil {
		return nil, &cfe.Error{Code: cfe.ErrorCode(err), Respuesta: cfe.RespuestaOf(err), Message: fmt.Sprintf(
			"se emitió la anulación de la cobranza (CFE id %d, %s %s-%d) pero no la nueva cobranza: repita la solicitud para emitirla",
			cancellation.ID, cancellation.Type.Name(), cancellation.Serie, cancellation.Nro), Err: err}
	}
	return &ReapplyResponse{ComprobanteResponse: comprobanteResponse(rec), Anulacion: comprobanteResponse(cancellation)}, nil
}

func reapplyInvalid(campo, msg string) error {
	return &cfe.Error{Code: cfe.EINVALID, Respuesta: cfe.RespRechazoValidacion, Message: campo + ": " + msg,
		Fields: []cfe.FieldError{{Campo: campo, Mensaje: msg}}}
}

// reapplied returns the collection that already re-applied orig, if any,
// and orig's cancellation, if any.
func (rc *Receipts) reapplied(orig *data.CFERecord) (prev, cancellation *data.CFERecord, err error) {
	err = rc.db.View(func(tx *bolt.Tx) error {
		var err error
		if prev, err = data.CFEByUUID(tx, orig.Company, reapplyUUID(orig.ID)); err != nil {
			return err
		}
		// Read again: a concurrent request may have annulled it since.
		cur, err := data.GetCFE(tx, orig.ID)
		if err != nil || cur.CancelledBy == 0 {
			return err
		}
		cancellation, err = data.GetCFE(tx, cur.CancelledBy)
		return err
	})
	return prev, cancellation, err
}

// newCollection is coll again, unsigned and unnumbered, dated fecha, whose
// references are targets.
func newCollection(coll *cfe.CFE, targets []*data.CFERecord, fecha cfe.Date) *cfe.CFE {
	c := coll.Clone()
	c.TmstFirma = time.Time{}
	c.CAEData = cfe.CAEData{}
	c.IdDoc.Serie, c.IdDoc.Nro, c.IdDoc.NroInterno = "", 0, ""
	c.IdDoc.FchEmis = fecha
	c.IdDoc.FchVenc = nil
	c.Referencias = make([]cfe.Referencia, len(targets))
	for i, t := range targets {
		fch := t.FchEmis
		c.Referencias[i] = cfe.Referencia{NroLinRef: i + 1, TpoDocRef: t.Type, Serie: t.Serie, NroCFERef: t.Nro,
			RazonRef: razonReaplicacion, FechaCFEref: &fch}
	}
	return c
}
