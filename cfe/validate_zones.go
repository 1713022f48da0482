package cfe

import (
	"fmt"
	"slices"
	"strings"

	"github.com/shopspring/decimal"
)

// Rules of zones B to F: lines, global discounts and surcharges, payment
// means, informative subtotals and references.

// indicatorRule explains why a billing indicator is not admitted in the type.
func indicatorRule(ind int, info TypeInfo, admitted []int, where string) string {
	switch ind {
	case indRebajaRemito:
		return "el indicador 8 (ítem a rebajar de un remito ya emitido) solo se admite en e-Remito y e-Remito de Exportación"
	case indAnulaResg:
		return "el indicador 9 (ítem a anular de un resguardo) solo se admite en e-Resguardo"
	case indBoletaNoContrib, indBoletaMinimo, indBoletaIMEBA, indCompraME:
		if info.Element != ElemBoleta {
			return fmt.Sprintf("el indicador %d solo se admite en e-Boleta de entrada y sus notas", ind)
		}
	}
	return fmt.Sprintf("indicador de facturación %d no admitido en %s de %s (admitidos: %s)", ind, where, info.Name, joinInts(admitted))
}

// indicatorBans applies the rules that forbid indicators whatever the type:
// MntBruto 3 excludes the taxed ones (V24 B-C4, D-C7). The ban of an
// exonerated CAE (G-C5 1) depends on the range and is in caeRules.
func (v *validator) indicatorBans(campo string, ind int) {
	switch {
	case v.c.IdDoc.MntBruto == 3 && slices.Contains([]int{1, 2, 3, 4, 11, 12}, ind):
		v.add(campo, "con montoBruto 3 (IVA mínimo o Monotributo) no se admiten los indicadores 1, 2, 3, 4, 11 ni 12")
	case v.c.IdDoc.IndCompraMEReventa != 0 && ind != indCompraME:
		v.add(campo, "en una compra de moneda extranjera para reventa solo se admite el indicador 17")
	case ind == indCompraME && v.c.IdDoc.IndCompraMEReventa == 0:
		v.add(campo, "el indicador 17 exige idDoc.indicadorCompraMonedaExtranjera 1 o 2")
	}
}

func (v *validator) items() {
	items := v.c.Items
	switch {
	case len(items) == 0:
		v.add("cfe.detalles", "debe haber al menos una línea de detalle")
	case len(items) > v.info.MaxLines:
		v.add("cfe.detalles", "como máximo %d líneas en %s (tiene %d)", v.info.MaxLines, v.info.Name, len(items))
	}
	for i := range items {
		v.item(i, &items[i])
	}
	for _, ref := range []struct {
		ind  int
		what string
	}{
		{indRebajaRemito, "las líneas con indicador 8 rebajan un remito ya emitido: se debe referenciar ese remito"},
		{indAnulaResg, "las líneas con indicador 9 anulan un resguardo: se debe referenciar ese resguardo"},
	} {
		if len(v.c.Referencias) == 0 && slices.ContainsFunc(items, func(it Item) bool { return it.IndFact == ref.ind }) {
			v.add("cfe.referencias", "%s", ref.what)
		}
	}
}

func (v *validator) item(i int, it *Item) {
	at := func(field string) string { return itemPath(i, field) }
	if it.NroLinDet != i+1 {
		v.add(at("numeroLineaDetalle"), "debe ser %d: las líneas se numeran en orden desde 1", i+1)
	}
	v.itemIndicator(i, it)
	v.itemRetentions(i, it)
	if v.fam == ElemResguardo {
		if len(it.RetencPercep) == 0 {
			v.add(at("retencionesPercepciones"), "obligatorio en e-Resguardo: al menos una retención o percepción")
		}
		if it.NomItem != "" || it.DscItem != "" || it.UniMed != "" || it.NCM != "" || len(it.CodItem) > 0 || it.IndAgenteResp != "" ||
			!it.Cantidad.IsZero() || !it.PrecioUnitario.IsZero() || !it.MontoItem.IsZero() || hasAdjustments(it) {
			v.add(at(""), "en e-Resguardo las líneas solo llevan indicadorFacturacion (9 o nada) y retencionesPercepciones")
		}
		return
	}
	v.text(at("nombreItem"), it.NomItem, 80, true)
	v.text(at("descripcion"), it.DscItem, 1000, false)
	v.text(at("unidadMedida"), it.UniMed, 4, true)
	if it.NCM != "" && !v.exportFamily() {
		v.notHere(at("ncm"))
	}
	v.text(at("ncm"), it.NCM, 20, false)
	v.itemCodes(i, it)
	if it.IndAgenteResp != "" {
		switch {
		case v.fam != ElemTicket && v.fam != ElemFactura && v.fam != ElemBoleta:
			v.notHere(at("indicadorAgenteResponsable"))
		case it.IndAgenteResp != "R" && it.IndAgenteResp != "A":
			v.add(at("indicadorAgenteResponsable"), "R (responsable por el producto o servicio) o A (por un concepto asociado)")
		case len(it.RetencPercep) == 0:
			v.add(at("retencionesPercepciones"), "obligatorio cuando la línea indica agente o responsable")
		}
	}
	v.decimal(at("cantidad"), it.Cantidad, quantity)
	if v.fam == ElemRemito {
		if !it.PrecioUnitario.IsZero() || !it.MontoItem.IsZero() || hasAdjustments(it) {
			v.add(at("precioUnitario"), "no corresponde en e-Remito: sus líneas no llevan precio, descuentos ni recargos")
		}
		return
	}
	v.decimal(at("precioUnitario"), it.PrecioUnitario, unitPrice)
	switch it.IndFact {
	case indGratuito:
		if !it.PrecioUnitario.IsZero() {
			v.add(at("precioUnitario"), "debe ser 0 en una entrega gratuita (indicador 5)")
		}
	case indRebajaRemito: // ≥ 0, checked above
	default:
		if !it.PrecioUnitario.IsPositive() {
			v.add(at("precioUnitario"), "debe ser mayor que 0 (0 solo con indicador 5, entrega gratuita)")
		}
	}
	v.itemAdjustments(i, it)
	v.decimal(at("montoItem"), it.MontoItem, signedAmount)
	if want := lineAmount(it); !it.MontoItem.Equal(want) {
		v.add(at("montoItem"), "no coincide con cantidad × precio unitario − descuento + recargo = %s", want.StringFixed(2))
	}
}

// itemIndicator checks a line's IndFact against its type and the document.
func (v *validator) itemIndicator(i int, it *Item) {
	campo := itemPath(i, "indicadorFacturacion")
	admitted := itemIndicators[v.fam]
	switch ind := it.IndFact; {
	case ind == 0:
		if v.priced() && v.fam != ElemRemitoExp {
			v.add(campo, "obligatorio en %s (admitidos: %s)", v.info.Name, joinInts(admitted))
		}
		return
	case !slices.Contains(admitted, ind):
		v.add(campo, "%s", indicatorRule(ind, v.info, admitted, "las líneas"))
		return
	}
	v.indicatorBans(campo, it.IndFact)
	if v.c.IdDoc.IndCobPropia == 1 && it.IndFact != indNoFact && it.IndFact != indNoFactNeg {
		v.add(campo, "en una cobranza propia todas las líneas llevan indicador 6 o 7")
	}
	recep := 0
	if v.c.Receptor != nil {
		recep = v.c.Receptor.TipoDocRecep
	}
	switch {
	case it.IndFact == indBoletaNoContrib && recep == 2:
		v.add(campo, "el indicador 13 (vendedor no contribuyente) no admite un vendedor identificado con RUC")
	case (it.IndFact == indBoletaMinimo || it.IndFact == indBoletaIMEBA) && recep != 2:
		v.add(campo, "el indicador %d exige un vendedor identificado con RUC (receptor.tipoDocumento 2)", it.IndFact)
	}
}

var itemCodeTypes = []string{"GTIN8", "GTIN12", "GTIN13", "GTIN14", "PLU", "INT1", "INT2", "ARCE"}

func (v *validator) itemCodes(i int, it *Item) {
	if len(it.CodItem) > 5 {
		v.add(itemPath(i, "codigosItem"), "como máximo 5 códigos por línea")
	}
	for j, ci := range it.CodItem {
		at := func(field string) string { return fmt.Sprintf("%s[%d].%s", itemPath(i, "codigosItem"), j, field) }
		if !slices.Contains(itemCodeTypes, ci.TpoCod) {
			v.add(at("tipo"), "tipo de código no admitido (admitidos: %s)", strings.Join(itemCodeTypes, ", "))
		}
		v.text(at("codigo"), ci.Cod, 35, true)
		if n, gtin := gtinLengths[ci.TpoCod]; gtin && ci.Cod != "" && !validGTIN(ci.Cod, n) {
			v.add(at("codigo"), "código %s inválido: %d dígitos con dígito verificador GS1 correcto", ci.TpoCod, n)
		}
	}
}

func hasAdjustments(it *Item) bool {
	return it.DescuentoPct != nil || it.DescuentoMonto != nil || len(it.SubDescuento) > 0 ||
		it.RecargoPct != nil || it.RecargoMnt != nil || len(it.SubRecargo) > 0
}

// itemAdjustments checks a line's discount and surcharge (B-C12 to B-C19).
func (v *validator) itemAdjustments(i int, it *Item) {
	if !hasAdjustments(it) {
		return
	}
	if v.fam == ElemRemitoExp {
		v.add(itemPath(i, "descuentoMonto"), "no corresponde en %s: sus líneas no llevan descuentos ni recargos", v.info.Name)
		return
	}
	for _, a := range []struct {
		name    string
		pct     *decimal.Decimal
		amount  *decimal.Decimal
		parts   []SubAdjust
		partsAt string
	}{
		{"descuento", it.DescuentoPct, it.DescuentoMonto, it.SubDescuento, "subDescuentos"},
		{"recargo", it.RecargoPct, it.RecargoMnt, it.SubRecargo, "subRecargos"},
	} {
		v.optDecimal(itemPath(i, a.name+"Porcentaje"), a.pct, percentage)
		v.optDecimal(itemPath(i, a.name+"Monto"), a.amount, signedAmount)
		if a.pct != nil && a.amount == nil {
			v.add(itemPath(i, a.name+"Monto"), "obligatorio cuando se informa %sPorcentaje", a.name)
		}
		if len(a.parts) > 5 {
			v.add(itemPath(i, a.partsAt), "como máximo 5 partes")
		}
		for j, s := range a.parts {
			at := fmt.Sprintf("%s[%d]", itemPath(i, a.partsAt), j)
			v.oneOf(at+".tipo", s.Tipo, 1, 2)
			if s.Tipo == 0 {
				v.add(at+".tipo", "obligatorio: 1 ($) o 2 (%%)")
			}
			v.decimal(at+".valor", s.Val, signedAmount)
		}
	}
}

// itemRetentions checks a line's retentions and perceptions (B-C20 to B-C23).
func (v *validator) itemRetentions(i int, it *Item) {
	if len(it.RetencPercep) == 0 {
		return
	}
	campo := itemPath(i, "retencionesPercepciones")
	switch v.fam {
	case ElemTicket, ElemFactura, ElemBoleta, ElemResguardo:
	default:
		v.add(campo, "no corresponde en %s: no documenta retenciones ni percepciones", v.info.Name)
		return
	}
	if len(it.RetencPercep) > 5 {
		v.add(campo, "como máximo 5 retenciones o percepciones por línea")
	}
	if v.fam != ElemResguardo && it.IndAgenteResp == "" {
		// V24 B, table of retentions: "Restantes CFE: Si utiliza tabla, entonces debe existir B-C6".
		v.add(itemPath(i, "indicadorAgenteResponsable"), "obligatorio cuando la línea tiene retenciones o percepciones: R (responsable por el producto o servicio) o A (por un concepto asociado)")
	}
	for j, r := range it.RetencPercep {
		at := fmt.Sprintf("%s[%d].", campo, j)
		switch {
		case r.CodRet == "":
			v.add(at+"codigo", "obligatorio: código DGI de retención o percepción (formulario y línea, por ejemplo 2183211)")
		case len(r.CodRet) > 8 || !allDigits(r.CodRet) || digitsValue(strings.TrimLeft(r.CodRet, "0")) == 0:
			v.add(at+"codigo", "código inválido: hasta 8 dígitos, mayor que 0")
		case v.fam == ElemBoleta && isCreditCode(r.CodRet):
			v.add(at+"codigo", "los créditos fiscales (2181xxx) no se admiten en e-Boleta de entrada")
		}
		v.optDecimal(at+"tasa", r.Tasa, percentage)
		switch {
		case r.MntSujetoaRet == nil && v.fam == ElemResguardo:
			v.add(at+"montoSujeto", "obligatorio en e-Resguardo")
		case r.MntSujetoaRet != nil && !r.MntSujetoaRet.IsPositive():
			v.add(at+"montoSujeto", "debe ser mayor que 0")
		}
		v.optDecimal(at+"montoSujeto", r.MntSujetoaRet, amount)
		v.text(at+"informacionAdicional", r.InfoAdicionalRet, 150, false)
		if !r.ValRetPerc.IsPositive() {
			v.add(at+"valor", "debe ser mayor que 0")
		}
		v.decimal(at+"valor", r.ValRetPerc, amount)
	}
}

func (v *validator) globals() {
	gs := v.c.DscRcgGlobal
	if len(gs) == 0 {
		return
	}
	admitted, zoneD := globalIndicators[v.fam]
	switch {
	case !zoneD:
		v.add("cfe.descuentosRecargosGlobales", "no corresponde en %s", v.info.Name)
		return
	case v.c.IdDoc.IndCobPropia == 1:
		v.add("cfe.descuentosRecargosGlobales", "no se admiten descuentos ni recargos globales en una cobranza propia")
	case len(gs) > 20:
		v.add("cfe.descuentosRecargosGlobales", "como máximo 20 líneas")
	}
	for i := range gs {
		g := &gs[i]
		at := func(field string) string { return globalPath(i, field) }
		if g.NroLinDR != i+1 {
			v.add(at("numeroLinea"), "debe ser %d: las líneas se numeran en orden desde 1", i+1)
		}
		if g.TpoMovDR != "D" && g.TpoMovDR != "R" {
			v.add(at("tipoMovimiento"), "obligatorio: D (descuento) o R (recargo)")
		}
		if g.TpoDR != 1 && g.TpoDR != 2 {
			v.add(at("tipo"), "obligatorio: 1 (valor es un monto) o 2 (valor es un porcentaje)")
		}
		if g.CodDR < 0 || g.CodDR > 999 {
			v.add(at("codigo"), "de 0 a 999")
		}
		v.text(at("glosa"), g.GlosaDR, 50, true)
		if !g.ValorDR.IsPositive() {
			v.add(at("valor"), "debe ser mayor que 0 (el tipo de movimiento indica si descuenta o recarga)")
		}
		v.decimal(at("valor"), g.ValorDR, amount)
		switch {
		case g.IndFactDR == 0:
			v.add(at("indicadorFacturacion"), "obligatorio: el indicador de las líneas a las que se aplica (admitidos: %s)", joinInts(admitted))
		case !slices.Contains(admitted, g.IndFactDR):
			v.add(at("indicadorFacturacion"), "%s", indicatorRule(g.IndFactDR, v.info, admitted, "descuentos o recargos globales"))
		default:
			v.indicatorBans(at("indicadorFacturacion"), g.IndFactDR)
		}
	}
}

func (v *validator) payments() {
	ps := v.c.MediosPago
	if len(ps) > 0 && v.remitoOrResguardo() {
		v.add("cfe.mediosPago", "no corresponde en %s", v.info.Name)
		return
	}
	if len(ps) > 40 {
		v.add("cfe.mediosPago", "como máximo 40 medios de pago")
	}
	for i, mp := range ps {
		at := func(field string) string { return paymentPath(i, field) }
		if mp.NroLinMP != i+1 {
			v.add(at("numeroLinea"), "debe ser %d: las líneas se numeran en orden desde 1", i+1)
		}
		if mp.CodMP < 0 || mp.CodMP > 999 {
			v.add(at("codigo"), "de 0 a 999")
		}
		v.text(at("glosa"), mp.GlosaMP, 50, true)
		if mp.OrdenMP < 0 || mp.OrdenMP > 99 {
			v.add(at("orden"), "de 0 a 99")
		}
		v.decimal(at("valor"), mp.ValorPago, signedAmount)
	}
}

func (v *validator) subtotals() {
	ss := v.c.SubTotInfo
	if len(ss) > 20 {
		v.add("cfe.subTotalesInfo", "como máximo 20 subtotales")
	}
	for i, s := range ss {
		at := func(field string) string { return subtotalPath(i, field) }
		if s.NroSTI < 1 || s.NroSTI > 20 {
			v.add(at("numero"), "obligatorio: de 1 a 20")
		}
		v.text(at("glosa"), s.GlosaSTI, 40, true)
		if s.OrdenSTI < 0 || s.OrdenSTI > 99 {
			v.add(at("orden"), "de 0 a 99")
		}
		v.decimal(at("valor"), s.ValSubtotSTI, signedAmount)
	}
}

func (v *validator) references() {
	rs := v.c.Referencias
	switch {
	case len(rs) == 0 && v.info.IsNote():
		v.add("cfe.referencias", "obligatorio en %s: se debe referenciar el comprobante que se corrige", v.info.Name)
	case len(rs) == 0 && v.c.IdDoc.IndCobPropia == 1:
		v.add("cfe.referencias", "obligatorio en una cobranza propia: se deben referenciar los comprobantes que se cobran")
	case len(rs) > 40:
		v.add("cfe.referencias", "como máximo 40 referencias: para más comprobantes emita otro documento (no use indicadorGlobal)")
	}
	seen := map[refKey]int{}
	for i := range rs {
		r := &rs[i]
		at := func(field string) string { return referencePath(i, field) }
		if r.NroLinRef != i+1 {
			v.add(at("numeroLinea"), "debe ser %d: las líneas se numeran en orden desde 1", i+1)
		}
		v.oneOf(at("indicadorGlobal"), r.IndGlobal, 1)
		if r.IndGlobal == 1 {
			v.text(at("razon"), r.RazonRef, 90, true)
			if r.TpoDocRef != 0 || r.Serie != "" || r.NroCFERef != 0 {
				v.add(at("indicadorGlobal"), "con indicadorGlobal 1 no se informan tipoCfe, serie ni numero: la razón explica qué se referencia")
			}
		} else {
			if !r.TpoDocRef.Valid() {
				v.add(at("tipoCfe"), "obligatorio: el tipo de CFE referenciado (o indicadorGlobal 1 con la razón si no se puede identificar)")
			}
			if !ValidSerie(r.Serie) {
				v.add(at("serie"), "obligatoria: %s", serieRule)
			}
			if r.NroCFERef < 1 || r.NroCFERef > MaxNro {
				v.add(at("numero"), "obligatorio: de 1 a %d", MaxNro)
			}
			v.text(at("razon"), r.RazonRef, 90, false)
		}
		v.date(at("fecha"), r.FechaCFEref, firstCFEDate)
		if f := r.FechaCFEref; f != nil && !v.c.TmstFirma.IsZero() && f.After(DateOf(v.c.TmstFirma.In(Montevideo)).AddDays(60)) {
			v.add(at("fecha"), "no puede ser posterior en más de 60 días a la fecha de firma") // V24 F-C7
		}
		if r.IndGlobal != 1 && r.NroCFERef != 0 {
			// V25 F-C3 to F-C5: no other line references the same type, serie and number.
			key := refKey{r.TpoDocRef, r.Serie, r.NroCFERef}
			if j, dup := seen[key]; dup {
				v.add(at("numero"), "repite la referencia de la línea %d (%d %s-%d)", j+1, int(r.TpoDocRef), r.Serie, r.NroCFERef)
			} else {
				seen[key] = i
			}
		}
	}
}

// refKey identifies a referenced CFE.
type refKey struct {
	t     Type
	serie string
	nro   int64
}
