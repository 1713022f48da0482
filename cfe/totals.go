package cfe

import (
	"slices"
	"strings"

	"github.com/shopspring/decimal"
)

// Totals follow DGI's formulas (Formato de los CFE v24, zone A C110-C130, item
// amount B-C24 and global adjustments D-C6/D-C7); docs/dgi-rules.md quotes them.
//
// Rounding. DGI writes every amount with exactly two decimals (MontoType,
// fractionDigits 2) and its text states no rounding rule. We therefore round
// each amount that a formula produces with more decimals, once, to two
// decimals, half away from zero (commercial half-up for positive amounts):
//   - MontoItem = round(Cantidad × PrecioUnitario − DescuentoMonto + RecargoMnt):
//     a quantity (3 decimals) times a price (6 decimals) has up to 9 decimals;
//   - an item percentage (DescuentoPct/RecargoPct) becomes an amount
//     round(base × pct / 100) before it enters any sum, because that amount is
//     what the document shows (C13 must exist when C12 does);
//   - sums of rounded amounts are exact and are not rounded again;
//   - IVA = round(net × rate / 100) on the rounded net: C121 = C116 × C119 and
//     C122 = C117 × C120, whatever MntBruto says;
//   - MntBruto 1 (lines include IVA): net = round(gross / (1 + rate/100))
//     (C116/C117: "el resultado anterior se debe dividir por (1 + tasa … IVA
//     vigente)") and IVA = round(net × rate/100) as above, so that C124 =
//     (C112:C118) + (C121:C123) holds as DGI writes it. net + IVA may then
//     differ from the gross the lines add up to by one cent (≈18 % of amounts
//     at 22 %, ≈9 % at 10 %): DGI's formulas define the total, not the lines.
//
// Global adjustments (zone D). ValorDR (D-C6) is "Monto del descuento o
// recargo", an amount with two decimals, and C112-C118 and C129 add or
// subtract ∑ D-C6 itself. So ValorDR is always an amount, also with TpoDR 2
// (D-C3 "%"), which then only says that the amount derives from a percentage:
// a request's percentage (tipo 2) is converted by globalPercentAmount before
// the document is built.

// TaxConfig holds the tax settings that come from configuration, not from the request.
type TaxConfig struct {
	IVATasaBasica decimal.Decimal // basic IVA rate in percent (22 since 2011-10-01, V24 table B)
	IVATasaMin    decimal.Decimal // minimum IVA rate in percent (10)
	// TopeUI is the net amount in UI above which an e-Ticket must identify its
	// receptor (V24 table E: 5 000 UI since 2022-11-01).
	TopeUI decimal.Decimal
	// ValorUI is the value of one UI in pesos at the close of the previous
	// calendar year (V24 table E); profiles update it every January.
	ValorUI decimal.Decimal
}

// DefaultTaxConfig returns DGI's rates and threshold in force (22 %, 10 %,
// 5 000 UI) and, as ValorUI, 6.4208 pesos: INE's value for 2025-12-22, the
// closest to the 2025 year-end that could be verified. Profiles should set the
// value of 31 December of the previous year.
func DefaultTaxConfig() TaxConfig {
	return TaxConfig{
		IVATasaBasica: decimal.NewFromInt(22),
		IVATasaMin:    decimal.NewFromInt(10),
		TopeUI:        decimal.NewFromInt(5000),
		ValorUI:       decimal.RequireFromString("6.4208"),
	}
}

// Billing indicators (IndFact, V24 B-C4) with a name in the code.
const (
	indExento          = 1
	indTasaMin         = 2
	indTasaBasica      = 3
	indOtraTasa        = 4
	indGratuito        = 5 // free delivery; in an e-Remito de Exportación, a line of unit price 0
	indNoFact          = 6 // non-billable
	indNoFactNeg       = 7 // non-billable negative
	indRebajaRemito    = 8 // e-Remito and e-Remito de Exportación: item deducted from a remito issued
	indAnulaResg       = 9 // e-Resguardo: item annulled
	indExport          = 10
	indPercibido       = 11
	indSuspenso        = 12
	indBoletaNoContrib = 13
	indBoletaMinimo    = 14
	indBoletaIMEBA     = 15
	indVentaMinimo     = 16
	indCompraME        = 17
)

// itemIndicators lists the IndFact values each type element admits on its
// lines (XSD 1.44.2 enumerations, V24 B-C4).
var itemIndicators = map[Element][]int{
	ElemTicket:     {1, 2, 3, 4, 5, 6, 7, 10, 11, 12, 16},
	ElemFactura:    {1, 2, 3, 4, 5, 6, 7, 10, 11, 12, 16},
	ElemFacturaExp: {5, 6, 7, 10},
	ElemRemito:     {8},
	ElemRemitoExp:  {5, 8},
	ElemResguardo:  {9},
	ElemBoleta:     {5, 6, 7, 12, 13, 14, 15, 17},
}

// globalIndicators lists the IndFactDR values each type element admits on its
// global discounts and surcharges (zone D). A missing element has no zone D.
var globalIndicators = map[Element][]int{
	ElemTicket:     {1, 2, 3, 4, 6, 7, 10, 11, 12, 16},
	ElemFactura:    {1, 2, 3, 4, 6, 7, 10, 11, 12, 16},
	ElemFacturaExp: {6, 7, 10},
	ElemBoleta:     {6, 7, 12, 13, 14, 15, 17},
}

// creditCodePrefix marks retention codes of DGI form 2181, "créditos fiscales",
// totalled apart in MntTotCredFisc (V24 A-C125.1).
const creditCodePrefix = "2181"

func isCreditCode(code string) bool { return strings.HasPrefix(code, creditCodePrefix) }

var hundred = decimal.NewFromInt(100)

// round2 rounds an amount to cents, half away from zero.
func round2(d decimal.Decimal) decimal.Decimal { return d.Round(2) }

// percentOf returns round(base × pct / 100).
func percentOf(base, pct decimal.Decimal) decimal.Decimal {
	return round2(base.Mul(pct).Div(hundred))
}

// itemDiscount returns the line's discount amount: DescuentoMonto, or the
// amount its DescuentoPct gives on Cantidad × PrecioUnitario.
func itemDiscount(it *Item) decimal.Decimal {
	return itemAdjustment(it, it.DescuentoMonto, it.DescuentoPct)
}

// itemSurcharge is itemDiscount for RecargoMnt and RecargoPct.
func itemSurcharge(it *Item) decimal.Decimal {
	return itemAdjustment(it, it.RecargoMnt, it.RecargoPct)
}

func itemAdjustment(it *Item, amount, pct *decimal.Decimal) decimal.Decimal {
	switch {
	case amount != nil:
		return *amount
	case pct != nil:
		return percentOf(it.Cantidad.Mul(it.PrecioUnitario), *pct)
	}
	return decimal.Zero
}

// lineAmount is B-C24: Cantidad × PrecioUnitario − DescuentoMonto + RecargoMnt,
// rounded to cents; zero for a free delivery (IndFact 5).
func lineAmount(it *Item) decimal.Decimal {
	if it.IndFact == indGratuito {
		return decimal.Zero
	}
	gross := it.Cantidad.Mul(it.PrecioUnitario)
	return round2(gross.Sub(itemDiscount(it)).Add(itemSurcharge(it)))
}

// globalAmount is the signed effect of a zone D line on its indicator's
// bucket: −ValorDR for a discount (D), +ValorDR for a surcharge (R), whatever
// TpoDR says (D-C6 is an amount; see the package's notes on zone D).
func globalAmount(g *GlobalAdjust) decimal.Decimal {
	if g.TpoMovDR == "D" {
		return g.ValorDR.Neg()
	}
	return g.ValorDR
}

// globalPercentAmount returns the ValorDR of a global discount or surcharge
// given as pct percent (TpoDR 2) on the lines of indicator ind:
// round(Σ B-C24 of those lines × pct / 100). The base is the lines only, not
// other global adjustments, so the order of zone D does not matter.
func globalPercentAmount(items []Item, ind int, pct decimal.Decimal) decimal.Decimal {
	base := decimal.Zero
	for i := range items {
		if items[i].IndFact == ind {
			base = base.Add(lineAmount(&items[i]))
		}
	}
	return percentOf(base, pct)
}

// buckets accumulates amounts per billing indicator and remembers which
// indicators occur, so that only the totals that apply are set.
type buckets struct {
	sum     map[int]decimal.Decimal
	present map[int]bool
}

func (b *buckets) add(ind int, amount decimal.Decimal) {
	b.sum[ind] = b.sum[ind].Add(amount)
	b.present[ind] = true
}

// total returns the sum over inds and whether any of them occurs.
func (b *buckets) total(inds ...int) (decimal.Decimal, bool) {
	sum, ok := decimal.Zero, false
	for _, i := range inds {
		sum = sum.Add(b.sum[i])
		ok = ok || b.present[i]
	}
	return sum, ok
}

// ComputeTotals returns zone A's totals (C110-C130) of c computed with DGI's
// formulas from its lines (zone B) and global adjustments (zone D). Only the
// totals that apply to c's type and content are set; the others are nil.
//
// Three values are inputs, not results, and are read from c.Totales: the
// currency (TpoMoneda), its exchange rate (TpoCambio), and MntIVAOtra, the IVA
// at "otra tasa" or on fictitious amounts, which no configured rate gives
// (required when a line carries IndFact 4).
//
// Lines and global adjustments without an indicator, and global adjustments of
// a type that has no zone D, add to no total: Validate rejects them.
//
// It returns EINVALID when the totals cannot be computed: an unknown type, a
// line or global adjustment whose indicator the type does not admit, or a
// missing MntIVAOtra. It returns EINTERNAL when tax has no positive IVA rate.
func ComputeTotals(c *CFE, tax TaxConfig) (Totales, error) {
	const op = "cfe.ComputeTotals"
	info, ok := c.Type().Info()
	if !ok {
		return Totales{}, Invalid(op, FieldError{"cfe.idDoc.tipoCfe", "tipo de CFE desconocido"})
	}
	if !tax.IVATasaBasica.IsPositive() || !tax.IVATasaMin.IsPositive() {
		return Totales{}, &Error{Code: EINTERNAL, Op: op, Message: "la configuración de tasas de IVA no es válida"}
	}
	fam := info.Element
	t := Totales{CantLinDet: len(c.Items)}
	if fam == ElemRemito {
		return t, nil // e-Remito totals are CantLinDet only
	}
	t.TpoMoneda, t.TpoCambio = c.Totales.TpoMoneda, c.Totales.TpoCambio

	var probs problems
	b := buckets{sum: map[int]decimal.Decimal{}, present: map[int]bool{}}
	if fam != ElemResguardo {
		admitted := itemIndicators[fam]
		for i := range c.Items {
			it := &c.Items[i]
			if it.IndFact != 0 && !slices.Contains(admitted, it.IndFact) {
				probs.add(itemPath(i, "indicadorFacturacion"), "%s", indicatorRule(it.IndFact, info, admitted, "las líneas"))
				continue
			}
			b.add(it.IndFact, lineAmount(it))
		}
	}
	if admitted, zoneD := globalIndicators[fam]; zoneD {
		for i := range c.DscRcgGlobal {
			g := &c.DscRcgGlobal[i]
			switch {
			case g.IndFactDR == 0:
				continue // Validate asks for it
			case !slices.Contains(admitted, g.IndFactDR):
				probs.add(globalPath(i, "indicadorFacturacion"), "%s", indicatorRule(g.IndFactDR, info, admitted, "descuentos o recargos globales"))
				continue
			}
			b.add(g.IndFactDR, globalAmount(g))
		}
	}

	switch fam {
	case ElemTicket, ElemFactura:
		probs = append(probs, t.setDomestic(c, tax, &b)...)
	case ElemFacturaExp:
		expo, _ := b.total(indExport)
		t.MntExpoyAsim, t.MntTotal = ptr(expo), ptr(expo)
	case ElemRemitoExp:
		// A-C113 for 124: the lines minus the lines that deduct a remito already issued.
		all, _ := b.total(indGratuito, 0)
		deducted, _ := b.total(indRebajaRemito)
		t.MntExpoyAsim, t.MntTotal = ptr(all.Sub(deducted)), ptr(all.Sub(deducted))
		return t, probs.err(op)
	case ElemBoleta:
		t.MntNoGrv = setIf(b.total(indBoletaNoContrib, indBoletaMinimo, indBoletaIMEBA, indCompraME))
		t.MntIVaenSusp = setIf(b.total(indSuspenso))
		t.MntTotal = ptr(sumOf(t.MntNoGrv, t.MntIVaenSusp))
	}
	t.setRetentions(c, fam)
	if fam == ElemResguardo {
		return t, probs.err(op)
	}
	// C129: non-billable lines (6) minus negative non-billable lines (7).
	nf, okNF := b.total(indNoFact)
	neg, okNeg := b.total(indNoFactNeg)
	if okNF || okNeg || c.IdDoc.IndCobPropia == 1 {
		t.MontoNF = ptr(nf.Sub(neg))
	}
	t.MntPagar = ptr(t.amountToPay(c))
	return t, probs.err(op)
}

// setDomestic sets the totals of the e-Ticket and e-Factura families: one
// total per tax treatment, the IVA on the taxed nets, and MntTotal (C124).
func (t *Totales) setDomestic(c *CFE, tax TaxConfig, b *buckets) problems {
	gross := c.IdDoc.MntBruto == 1
	t.MntNoGrv = setIf(b.total(indExento, indVentaMinimo))
	t.MntExpoyAsim = setIf(b.total(indExport))
	t.MntImpuestoPerc = setIf(b.total(indPercibido))
	t.MntIVaenSusp = setIf(b.total(indSuspenso))
	if amount, ok := b.total(indTasaMin); ok {
		t.MntNetoIvaTasaMin, t.MntIVATasaMin = netAndIVA(amount, tax.IVATasaMin, gross)
		t.IVATasaMin = ptr(tax.IVATasaMin)
	}
	if amount, ok := b.total(indTasaBasica); ok {
		t.MntNetoIVATasaBasica, t.MntIVATasaBasica = netAndIVA(amount, tax.IVATasaBasica, gross)
		t.IVATasaBasica = ptr(tax.IVATasaBasica)
	}
	var probs problems
	if amount, ok := b.total(indOtraTasa); ok {
		t.MntNetoIVAOtra = ptr(amount)
		if c.Totales.MntIVAOtra == nil {
			probs.add("cfe.totales.montoIvaOtraTasa", "obligatorio cuando hay líneas con indicador de facturación 4 (IVA a otra tasa o sobre fictos): no se puede calcular con las tasas configuradas")
		} else {
			t.MntIVAOtra = ptr(*c.Totales.MntIVAOtra)
		}
	}
	t.MntTotal = ptr(sumOf(t.MntNoGrv, t.MntExpoyAsim, t.MntImpuestoPerc, t.MntIVaenSusp,
		t.MntNetoIvaTasaMin, t.MntNetoIVATasaBasica, t.MntNetoIVAOtra,
		t.MntIVATasaMin, t.MntIVATasaBasica, t.MntIVAOtra))
	return probs
}

// netAndIVA returns the net amount and its IVA for a bucket taxed at rate
// (percent). With gross set the bucket includes IVA (MntBruto 1) and the net
// is the bucket divided by 1 + rate; the IVA is always net × rate.
func netAndIVA(amount, rate decimal.Decimal, gross bool) (net, iva *decimal.Decimal) {
	if gross {
		n := amount.DivRound(decimal.NewFromInt(1).Add(rate.Div(hundred)), 2)
		return ptr(n), ptr(percentOf(n, rate))
	}
	return ptr(amount), ptr(percentOf(amount, rate))
}

// setRetentions accumulates the retentions and perceptions of the lines per
// code (C127/C128: lines with IndFact 9 subtract) and splits their sum into
// MntTotRetenido (codes other than 2181xxx) and MntTotCredFisc (2181xxx).
func (t *Totales) setRetentions(c *CFE, fam Element) {
	switch fam {
	case ElemTicket, ElemFactura, ElemBoleta, ElemResguardo:
	default:
		return
	}
	var codes []string
	byCode := map[string]decimal.Decimal{}
	for i := range c.Items {
		it := &c.Items[i]
		for _, r := range it.RetencPercep {
			v := r.ValRetPerc
			if it.IndFact == indAnulaResg {
				v = v.Neg()
			}
			if _, seen := byCode[r.CodRet]; !seen {
				codes = append(codes, r.CodRet)
			}
			byCode[r.CodRet] = byCode[r.CodRet].Add(v)
		}
	}
	var retained, credit decimal.Decimal
	var anyRetained, anyCredit bool
	for _, code := range codes {
		v := byCode[code]
		t.RetencPercep = append(t.RetencPercep, RetPerc{CodRet: code, ValRetPerc: v})
		if isCreditCode(code) {
			credit, anyCredit = credit.Add(v), true
		} else {
			retained, anyRetained = retained.Add(v), true
		}
	}
	if anyRetained || fam == ElemResguardo {
		t.MntTotRetenido = ptr(retained)
	}
	if anyCredit {
		t.MntTotCredFisc = ptr(credit)
	}
}

// amountToPay is C130: MntTotal + MntTotRetenido + MontoNF, or for an e-Boleta
// whose lines include IMEBA (MntBruto 2) MntTotal − MntTotRetenido + MontoNF.
// A negative result is kept: DGI admits it (or 0) and the request may say 0.
func (t *Totales) amountToPay(c *CFE) decimal.Decimal {
	retained := valueOf(t.MntTotRetenido)
	if isBoleta(c.Type()) && c.IdDoc.MntBruto == 2 {
		retained = retained.Neg()
	}
	return valueOf(t.MntTotal).Add(retained).Add(valueOf(t.MontoNF))
}

func isBoleta(t Type) bool {
	i, ok := t.Info()
	return ok && i.Element == ElemBoleta
}

func ptr(d decimal.Decimal) *decimal.Decimal { return &d }

func valueOf(d *decimal.Decimal) decimal.Decimal {
	if d == nil {
		return decimal.Zero
	}
	return *d
}

// setIf returns a pointer to sum when ok, nil otherwise.
func setIf(sum decimal.Decimal, ok bool) *decimal.Decimal {
	if !ok {
		return nil
	}
	return &sum
}

func sumOf(ds ...*decimal.Decimal) decimal.Decimal {
	s := decimal.Zero
	for _, d := range ds {
		s = s.Add(valueOf(d))
	}
	return s
}

// totalField ties an amount of Totales to its request name.
type totalField struct {
	json string
	get  func(*Totales) *decimal.Decimal
}

var (
	fieldMntNoGrv             = totalField{"montoNoGravado", func(t *Totales) *decimal.Decimal { return t.MntNoGrv }}
	fieldMntExpoyAsim         = totalField{"montoExportacion", func(t *Totales) *decimal.Decimal { return t.MntExpoyAsim }}
	fieldMntImpuestoPerc      = totalField{"montoImpuestoPercibido", func(t *Totales) *decimal.Decimal { return t.MntImpuestoPerc }}
	fieldMntIVaenSusp         = totalField{"montoIvaSuspenso", func(t *Totales) *decimal.Decimal { return t.MntIVaenSusp }}
	fieldMntNetoIvaTasaMin    = totalField{"montoNetoIvaTasaMinima", func(t *Totales) *decimal.Decimal { return t.MntNetoIvaTasaMin }}
	fieldMntNetoIVATasaBasica = totalField{"montoNetoIvaTasaBasica", func(t *Totales) *decimal.Decimal { return t.MntNetoIVATasaBasica }}
	fieldMntNetoIVAOtra       = totalField{"montoNetoIvaOtraTasa", func(t *Totales) *decimal.Decimal { return t.MntNetoIVAOtra }}
	fieldIVATasaMin           = totalField{"tasaIvaMinima", func(t *Totales) *decimal.Decimal { return t.IVATasaMin }}
	fieldIVATasaBasica        = totalField{"tasaIvaBasica", func(t *Totales) *decimal.Decimal { return t.IVATasaBasica }}
	fieldMntIVATasaMin        = totalField{"montoIvaTasaMinima", func(t *Totales) *decimal.Decimal { return t.MntIVATasaMin }}
	fieldMntIVATasaBasica     = totalField{"montoIvaTasaBasica", func(t *Totales) *decimal.Decimal { return t.MntIVATasaBasica }}
	fieldMntIVAOtra           = totalField{"montoIvaOtraTasa", func(t *Totales) *decimal.Decimal { return t.MntIVAOtra }}
	fieldMntTotal             = totalField{"montoTotal", func(t *Totales) *decimal.Decimal { return t.MntTotal }}
	fieldMntTotRetenido       = totalField{"montoRetenido", func(t *Totales) *decimal.Decimal { return t.MntTotRetenido }}
	fieldMntTotCredFisc       = totalField{"montoCreditoFiscal", func(t *Totales) *decimal.Decimal { return t.MntTotCredFisc }}
	fieldMontoNF              = totalField{"montoNoFacturable", func(t *Totales) *decimal.Decimal { return t.MontoNF }}
	fieldMntPagar             = totalField{"montoPagar", func(t *Totales) *decimal.Decimal { return t.MntPagar }}
)

// totalFields lists the amounts of Totales that ComputeTotals gives, in DGI's order.
var totalFields = []totalField{
	fieldMntNoGrv, fieldMntExpoyAsim, fieldMntImpuestoPerc, fieldMntIVaenSusp,
	fieldMntNetoIvaTasaMin, fieldMntNetoIVATasaBasica, fieldMntNetoIVAOtra,
	fieldIVATasaMin, fieldIVATasaBasica, fieldMntIVATasaMin, fieldMntIVATasaBasica, fieldMntIVAOtra,
	fieldMntTotal, fieldMntTotRetenido, fieldMntTotCredFisc, fieldMontoNF, fieldMntPagar,
}

// compareTotals reports every total of declared that differs from computed.
// With partial set (a request), a total declared nil was not sent and is not
// compared, and a zero is accepted for a total that does not apply. Otherwise
// (a model) declared must carry exactly the computed totals.
func compareTotals(declared, computed Totales, partial bool) problems {
	var probs problems
	const p = "cfe.totales."
	for _, f := range totalFields {
		d, c := f.get(&declared), f.get(&computed)
		switch {
		case d == nil:
			if c != nil && !partial {
				probs.add(p+f.json, "falta: según las fórmulas de DGI debe ser %s", c.StringFixed(2))
			}
		case c == nil:
			if !partial || !d.IsZero() {
				probs.add(p+f.json, "no corresponde: ninguna línea de este comprobante lo genera")
			}
		case d.Equal(*c):
		case f.json == fieldMntPagar.json && c.IsNegative() && d.IsZero():
			// C130: DGI admits 0 when MntTotal + retentions + MontoNF is negative.
		default:
			probs.add(p+f.json, "no coincide con el total calculado según las fórmulas de DGI (%s)", c.StringFixed(2))
		}
	}
	if (!partial || declared.CantLinDet != 0) && declared.CantLinDet != computed.CantLinDet {
		probs.add(p+"cantidadLineasDetalle", "debe ser %d, la cantidad de líneas de detalle", computed.CantLinDet)
	}
	if !partial || declared.RetencPercep != nil {
		if !sameRetentions(declared.RetencPercep, computed.RetencPercep) {
			probs.add(p+"retencionesPercepciones", "no coincide con la suma por código de las retenciones y percepciones de las líneas (%s)", describeRetentions(computed.RetencPercep))
		}
	}
	return probs
}

// sameRetentions compares two lists of accumulated retentions as maps from
// code to value.
func sameRetentions(a, b []RetPerc) bool {
	if len(a) != len(b) {
		return false
	}
	want := make(map[string]decimal.Decimal, len(b))
	for _, r := range b {
		want[r.CodRet] = r.ValRetPerc
	}
	for _, r := range a {
		v, ok := want[r.CodRet]
		if !ok || !v.Equal(r.ValRetPerc) {
			return false
		}
		delete(want, r.CodRet)
	}
	return true
}

func describeRetentions(rs []RetPerc) string {
	if len(rs) == 0 {
		return "ninguna"
	}
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.CodRet + ": " + r.ValRetPerc.StringFixed(2)
	}
	return strings.Join(parts, ", ")
}
