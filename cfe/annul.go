package cfe

import (
	"fmt"
	"strconv"
	"time"
)

// A CFE accepted by DGI stays valid for ever: it is cancelled by issuing a
// counter-receipt that references it (Res. DGI 798/2012 num. 12). This file
// holds the rules that derive that counter-receipt from the original.

// Reasons written in RazonRef of the counter-receipt's reference.
const (
	razonAnulacion          = "Anulación"
	razonAnulacionCobranza  = "Anulación de cobranza"
	razonReversionAnulacion = "Reversión de anulación de cobranza"
)

// CounterReceipt derives, from an issued CFE, the unsigned counter-receipt that
// cancels it. Numbering (Serie, Nro), CAEData and TmstFirma are left zero for
// the issuer to fill; FchEmis is fecha. The original is never modified.
//
// The rules (seed interface §4.4.1; DGI Formato de los CFE v24):
//
//  1. A document with credit and debit notes (e-Ticket, e-Factura, their
//     cuenta ajena forms, e-Factura Exportación, e-Boleta de entrada) is
//     cancelled by the credit note of its family: 101→102, 111→112, 121→122,
//     131→132, 141→142, 151→152, with the same emitter, receptor, currency,
//     lines, global adjustments and totals (a note's amounts are positive; its
//     type gives the sign).
//  2. A credit note is cancelled by the debit note of its family and a debit
//     note by the credit note (102↔103, 112↔113, 122↔123, 132↔133, 142↔143,
//     152↔153).
//  3. An e-Remito (181), e-Remito de Exportación (124) or e-Resguardo (182) is
//     cancelled by a correction of the same type whose lines carry IndFact 8
//     (item deducted; remitos) or 9 (item annulled; resguardo). A line that
//     already deducts or annuls turns back into an ordinary line (no IndFact,
//     or 5 for a line of unit price 0 in an e-Remito de Exportación), so that
//     a correction can itself be cancelled.
//  4. An own collection (IndCobPropia = 1: e-Ticket, e-Factura and their cuenta
//     ajena forms) is cancelled by a document of the same type that keeps
//     IndCobPropia = 1 and reports each line with IndFact 7 (non-billable
//     negative), so MontoNF is negative.
//  5. When the original is itself the cancellation of a collection (all its
//     lines IndFact 7), its lines come back with IndFact 6 and MontoNF is
//     positive. In general an own-collection line 6 becomes 7 and 7 becomes 6.
//
// Under rules 3 to 5 the totals are recomputed from the flipped lines with
// ComputeTotals (signed: MontoNF, MntTotal, retentions), at the IVA rates the
// original declares; under rules 1 and 2 they are the original's.
//
// Every counter-receipt carries a single reference, to the original (its type,
// series, number and FchEmis as FechaCFEref); the original's own references
// are not carried over.
//
// A contingency receipt (2xx, a paper CFC) is cancelled by the ELECTRONIC
// counter-receipt of the same rule (201→102, 202→103, 281→181, a 201 collection
// by a 101): this program issues electronic CFEs only, and a CFC is a paper
// form printed under a contingency CAE.
//
// The counter-receipt has no due date (FchVenc) and no NroInterno; everything
// else in the original (payment means, informative subtotals, Adenda, zone K)
// is copied.
//
// It returns an EINVALID *Error naming the field and rule when the original
// was not issued (no series or no number), has no lines, has an unknown type,
// breaks the own-collection rules, or carries a line indicator its type does
// not allow; and when fecha is missing, not a date, or before the original's
// FchEmis.
func CounterReceipt(orig *CFE, fecha Date) (*CFE, error) {
	const op = "cfe.CounterReceipt"
	if orig == nil {
		return nil, Invalid(op, FieldError{Campo: "comprobante", Mensaje: "no se indicó el comprobante a anular"})
	}
	info, ok := orig.Type().Info()
	if !ok {
		return nil, Invalid(op, FieldError{Campo: "TipoCFE",
			Mensaje: fmt.Sprintf("el tipo de CFE %d no existe; no se puede anular", int(orig.Type()))})
	}
	a, errs := planAnnulment(orig, info)
	errs = append(errs, checkAnnullable(orig, fecha)...)

	c := orig.Clone()
	if a.flip != nil {
		errs = append(errs, a.flip.lines(c.Items)...)
	}
	if len(errs) > 0 {
		return nil, Invalid(op, errs...)
	}

	c.TmstFirma = time.Time{}
	c.CAEData = CAEData{}
	c.IdDoc.TipoCFE = a.tipo
	c.IdDoc.Serie, c.IdDoc.Nro, c.IdDoc.NroInterno = "", 0, ""
	c.IdDoc.FchEmis = fecha
	c.IdDoc.FchVenc = nil
	fch := orig.IdDoc.FchEmis
	c.Referencias = []Referencia{{
		NroLinRef:   1,
		TpoDocRef:   orig.Type(),
		Serie:       orig.IdDoc.Serie,
		NroCFERef:   orig.IdDoc.Nro,
		RazonRef:    a.razon,
		FechaCFEref: &fch,
	}}
	if a.flip != nil {
		t, err := ComputeTotals(c, taxOf(orig.Totales))
		if err != nil {
			return nil, err
		}
		c.Totales = t
	}
	return c, nil
}

// taxOf returns the tax configuration whose IVA rates are the ones t declares,
// DGI's rates in force standing in for those it does not. The lines of a
// recomputed counter-receipt (non-billable, remito or resguardo lines) take no
// IVA today; the original's rates keep its totals right should that change.
func taxOf(t Totales) TaxConfig {
	tax := DefaultTaxConfig()
	if t.IVATasaBasica != nil && t.IVATasaBasica.IsPositive() {
		tax.IVATasaBasica = *t.IVATasaBasica
	}
	if t.IVATasaMin != nil && t.IVATasaMin.IsPositive() {
		tax.IVATasaMin = *t.IVATasaMin
	}
	return tax
}

// annulment is how one CFE is cancelled.
type annulment struct {
	tipo  Type   // type of the counter-receipt
	razon string // RazonRef of its reference
	flip  *flip  // nil when lines and totals are copied as they are (notes)
}

// planAnnulment chooses the rule that cancels orig.
func planAnnulment(orig *CFE, info TypeInfo) (annulment, []FieldError) {
	// The counter-receipt is electronic even when the original is a contingency receipt.
	base, _ := electronicCode(info.Code).Info()
	if orig.IdDoc.IndCobPropia != 0 {
		return planCollection(orig, base)
	}
	if base.Kind == KindDocument {
		if n, ok := base.Code.CreditNoteOf(); ok {
			return annulment{tipo: n, razon: razonAnulacion}, nil
		}
	} else if n, ok := base.Code.OppositeNote(); ok {
		return annulment{tipo: n, razon: razonAnulacion}, nil
	}
	// No notes in the family: a correction of the same type.
	var f *flip
	switch base.Element {
	case ElemRemito:
		f = &remitoFlip
	case ElemRemitoExp:
		f = &remitoExpFlip
	case ElemResguardo:
		f = &resguardoFlip
	default:
		// Unreachable while every other family has notes in the type table.
		return annulment{}, []FieldError{{Campo: "TipoCFE",
			Mensaje: fmt.Sprintf("el tipo de CFE %d (%s) no se puede anular", int(info.Code), info.Name)}}
	}
	return annulment{tipo: base.Code, razon: razonAnulacion, flip: f}, nil
}

// planCollection is rules 4 and 5: an own collection, or the cancellation of one.
func planCollection(orig *CFE, base TypeInfo) (annulment, []FieldError) {
	var errs []FieldError
	if orig.IdDoc.IndCobPropia != 1 {
		errs = append(errs, FieldError{Campo: "IndCobPropia",
			Mensaje: fmt.Sprintf("valor %d inválido: solo se admite 1 (cobranza)", orig.IdDoc.IndCobPropia)})
	}
	if !collectsOwn(base.Code) {
		errs = append(errs, FieldError{Campo: "IndCobPropia",
			Mensaje: "solo un e-Ticket o una e-Factura (101, 111, 131, 141) documentan una cobranza propia"})
	}
	if len(orig.DscRcgGlobal) > 0 {
		errs = append(errs, FieldError{Campo: "DscRcgGlobal",
			Mensaje: "una cobranza propia no admite descuentos ni recargos globales"})
	}
	razon := razonReversionAnulacion
	for _, it := range orig.Items {
		if it.IndFact != indNoFactNeg {
			razon = razonAnulacionCobranza
			break
		}
	}
	return annulment{tipo: base.Code, razon: razon, flip: &collectionFlip}, errs
}

// checkAnnullable checks what every annulment needs of the original and the date.
func checkAnnullable(orig *CFE, fecha Date) []FieldError {
	var errs []FieldError
	if orig.IdDoc.Serie == "" {
		errs = append(errs, FieldError{Campo: "Serie", Mensaje: "el comprobante a anular no tiene serie: no fue emitido"})
	}
	if orig.IdDoc.Nro <= 0 {
		errs = append(errs, FieldError{Campo: "Nro", Mensaje: "el comprobante a anular no tiene número: no fue emitido"})
	}
	if len(orig.Items) == 0 {
		errs = append(errs, FieldError{Campo: "Detalle", Mensaje: "el comprobante a anular no tiene líneas de detalle"})
	}
	switch {
	case fecha.IsZero():
		errs = append(errs, FieldError{Campo: "fecha", Mensaje: "es obligatoria (AAAA-MM-DD)"})
	case DateOf(fecha.Time(time.UTC)) != fecha:
		errs = append(errs, FieldError{Campo: "fecha", Mensaje: fmt.Sprintf("%s no es una fecha existente", fecha)})
	case fecha.Before(orig.IdDoc.FchEmis):
		errs = append(errs, FieldError{Campo: "fecha", Mensaje: fmt.Sprintf(
			"no puede ser anterior a la fecha de emisión del comprobante que anula (%s)", orig.IdDoc.FchEmis)})
	}
	return errs
}

// flip turns the lines of a document into the lines of the same-type
// correction that cancels it; CounterReceipt then recomputes the totals.
type flip struct {
	doc     string                 // the document, as error messages name it
	allowed string                 // the IndFact values it admits, as error messages list them
	line    func(Item) (int, bool) // the opposite IndFact; false when the line's own is not admitted
}

// lines flips every line in place and reports each line whose indicator the
// document does not admit.
func (f *flip) lines(items []Item) []FieldError {
	var errs []FieldError
	for i := range items {
		ind, ok := f.line(items[i])
		if !ok {
			found := "ninguno"
			if items[i].IndFact != 0 {
				found = strconv.Itoa(items[i].IndFact)
			}
			errs = append(errs, FieldError{Campo: fmt.Sprintf("Item[%d].IndFact", i+1), Mensaje: fmt.Sprintf(
				"%s solo admite indicador de facturación %s (la línea tiene %s)", f.doc, f.allowed, found)})
			continue
		}
		items[i].IndFact = ind
	}
	return errs
}

var (
	collectionFlip = flip{
		doc: "una cobranza propia", allowed: "6 o 7",
		line: func(it Item) (int, bool) { return swapIndFact(it.IndFact, indNoFact, indNoFactNeg) },
	}
	remitoFlip = flip{
		doc: "un e-Remito", allowed: "8 o ninguno",
		line: func(it Item) (int, bool) { return swapIndFact(it.IndFact, 0, indRebajaRemito) },
	}
	remitoExpFlip = flip{
		doc: "un e-Remito de Exportación", allowed: "5, 8 o ninguno",
		line: func(it Item) (int, bool) {
			switch it.IndFact {
			case 0, indGratuito:
				return indRebajaRemito, true
			case indRebajaRemito:
				if it.PrecioUnitario.IsZero() {
					return indGratuito, true
				}
				return 0, true
			}
			return 0, false
		},
	}
	resguardoFlip = flip{
		doc: "un e-Resguardo", allowed: "9 o ninguno",
		line: func(it Item) (int, bool) { return swapIndFact(it.IndFact, 0, indAnulaResg) },
	}
)

// swapIndFact returns b for a and a for b, and false for any other indicator.
func swapIndFact(ind, a, b int) (int, bool) {
	switch ind {
	case a:
		return b, true
	case b:
		return a, true
	}
	return 0, false
}
