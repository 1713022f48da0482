package cfe

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/shopspring/decimal"
)

// MaxAdenda is the most characters (Unicode code points) an Adenda may have.
// DGI gives the Adenda no XSD type and no length; this limit is the agent's.
// The Adenda is printed after the CFE: 10 000 characters are about 210
// lines of a 48-column ticket or four A4 pages, far more than legends, a
// professional-secrecy receptor or a return policy take, and small enough
// that a receipt, its PDF and its stored copy stay small.
const MaxAdenda = 10000

// Validate checks c against DGI's business rules (Formato de los CFE v24, zones
// A to K, and the text limits of the XSDs in production, 1.43.5): the fields
// each type admits or requires, the billing indicators, the receptor's
// identification, references, check digits and limits, and that every total
// equals the one ComputeTotals gives.
//
// Serie and Nro are assigned from a CAE range after validation: they are
// checked only when set, and so are the rules that tie the document to its
// CAE (CheckCAE), which apply when c.CAEData carries a CAE number.
//
// It returns EINVALID with every failure as a FieldError whose Campo is the
// path of the request field (cfe.detalles[2].indicadorFacturacion), and
// EINTERNAL when tax is not a usable configuration.
func Validate(c *CFE, tax TaxConfig) error {
	const op = "cfe.Validate"
	info, ok := c.Type().Info()
	if !ok {
		return Invalid(op, FieldError{"cfe.idDoc.tipoCfe", "tipo de CFE desconocido"})
	}
	if !tax.TopeUI.IsPositive() || !tax.ValorUI.IsPositive() {
		return &Error{Code: EINTERNAL, Op: op, Message: "la configuración del tope de UI no es válida"}
	}
	computed, err := ComputeTotals(c, tax)
	if ErrorCode(err) == EINTERNAL {
		return err
	}
	v := &validator{c: c, tax: tax, info: info, fam: info.Element, totals: computed}
	v.probs = append(v.probs, ErrorFields(err)...)
	v.text("adenda", c.Adenda, MaxAdenda, false)
	v.idDoc()
	v.emisor(&v.c.Emisor, "cfe.emisor.")
	v.receptor()
	v.items()
	v.globals()
	v.payments()
	v.subtotals()
	v.references()
	v.complFiscal()
	if c.CAEData.CAEID != "" {
		v.caeRules(c.CAEData)
	}
	if err == nil {
		v.probs = append(v.probs, compareTotals(c.Totales, computed, false)...)
		v.totalsRules()
	}
	v.xsdFacets() // DGI's XSD facets, generated: dgifacets.go
	return v.probs.err(op)
}

// CheckCAE returns the rules that tie c to the CAE cae it would be numbered
// from (V24 G-C5 and A-C10), so that the issuer can check a range before it
// reserves a number from it:
//   - a special CAE of IVA mínimo, Monotributo or Monotributo MIDES (CAEEspecial
//     2, 3 or 4) requires montoBruto 3, and montoBruto 3 requires one of those
//     CAEs (A-C10: "Si G-C5=2, 3 o 4, A-C10 debe ser igual a 3, y viceversa
//     excepto para CFE ventas por cuenta ajena"); types without A-C10 (remitos,
//     e-Resguardo) and sales on behalf of others (131-143) are exempt;
//   - an exonerated CAE (CAEEspecial 1) admits no line or global adjustment
//     with indicator 2, 3, 4, 11 or 12 (G-C5).
//
// It returns nil when c may be numbered from cae, else EINVALID (Respuesta
// RespRechazoValidacion) naming the request fields, like Validate.
func CheckCAE(c *CFE, cae CAEData) error {
	info, ok := c.Type().Info()
	if !ok {
		return Invalid("cfe.CheckCAE", FieldError{"cfe.idDoc.tipoCfe", "tipo de CFE desconocido"})
	}
	v := &validator{c: c, info: info, fam: info.Element}
	v.caeRules(cae)
	return v.probs.err("cfe.CheckCAE")
}

// caeNames names the kinds of special CAE (G-C5) in messages.
var caeNames = map[int]string{1: "exonerado", 2: "IVA mínimo", 3: "Monotributo", 4: "Monotributo MIDES"}

// caeRules applies the rules of CheckCAE.
func (v *validator) caeRules(cae CAEData) {
	if cae.CAEEspecial == caeExonerado {
		banned := []int{indTasaMin, indTasaBasica, indOtraTasa, indPercibido, indSuspenso}
		const msg = "el rango CAE es especial de exonerado (CAEEspecial 1): no se admiten los indicadores 2, 3, 4, 11 ni 12"
		for i := range v.c.Items {
			if slices.Contains(banned, v.c.Items[i].IndFact) {
				v.add(itemPath(i, "indicadorFacturacion"), msg)
			}
		}
		for i := range v.c.DscRcgGlobal {
			if slices.Contains(banned, v.c.DscRcgGlobal[i].IndFactDR) {
				v.add(globalPath(i, "indicadorFacturacion"), msg)
			}
		}
	}
	special := cae.CAEEspecial >= 2 && cae.CAEEspecial <= maxCAEEspecial
	if (cae.CAEEspecial == 3 || cae.CAEEspecial == 4) && v.c.IdDoc.IVAalDia != 0 {
		// V24 A-C17 ("no corresponde que usen este campo"); V25 A-C17 "Si G-C5=3 o 4, no puede existir A-C17".
		v.add("cfe.idDoc.ivaAlDia", "no corresponde con un rango CAE especial de %s (CAEEspecial %d)", caeNames[cae.CAEEspecial], cae.CAEEspecial)
	}
	if special && v.cuentaAjena() {
		// V25 G-C5: "Si G-C5=2, 3 o 4: Tipo de CFE debe ser distinto de los comprobantes de venta por cuenta ajena".
		v.add("cfe.idDoc.tipoCfe", "%s no se emite con un rango CAE especial de %s (CAEEspecial %d): quien vende por cuenta ajena no puede ser de IVA mínimo ni Monotributo",
			v.info.Name, caeNames[cae.CAEEspecial], cae.CAEEspecial)
	}
	if v.remitoOrResguardo() || v.cuentaAjena() {
		return // no A-C10, or a sale on behalf of others (A-C10's exception; montoBruto 3 is refused by idDoc)
	}
	const campo = "cfe.idDoc.montoBruto"
	switch mb := v.c.IdDoc.MntBruto; {
	case special && mb != 3:
		v.add(campo, "debe ser 3: el rango CAE de %s es especial de %s (CAEEspecial %d) y sus líneas corresponden a ventas de un contribuyente de IVA mínimo o Monotributo",
			v.info.Name, caeNames[cae.CAEEspecial], cae.CAEEspecial)
	case !special && mb == 3:
		v.add(campo, "el valor 3 (IVA mínimo o Monotributo) solo corresponde con un rango CAE especial de IVA mínimo, Monotributo o Monotributo MIDES (CAEEspecial 2, 3 o 4); el rango CAE de %s no lo es",
			v.info.Name)
	}
}

// problems collects field errors; err returns them as one EINVALID error
// (nil when empty), without repeating an identical failure.
type problems []FieldError

func (p *problems) add(campo, format string, args ...any) {
	*p = append(*p, FieldError{Campo: campo, Mensaje: fmt.Sprintf(format, args...)})
}

func (p problems) err(op string) error {
	if len(p) == 0 {
		return nil
	}
	seen := make(map[FieldError]bool, len(p))
	unique := make([]FieldError, 0, len(p))
	for _, f := range p {
		if !seen[f] {
			seen[f] = true
			unique = append(unique, f)
		}
	}
	return Invalid(op, unique...)
}

// Paths of request fields, as the Campo of a FieldError.
func itemPath(i int, field string) string { return listPath("cfe.detalles", i, field) }
func globalPath(i int, field string) string {
	return listPath("cfe.descuentosRecargosGlobales", i, field)
}
func paymentPath(i int, field string) string   { return listPath("cfe.mediosPago", i, field) }
func referencePath(i int, field string) string { return listPath("cfe.referencias", i, field) }
func subtotalPath(i int, field string) string  { return listPath("cfe.subTotalesInfo", i, field) }

func listPath(list string, i int, field string) string {
	p := fmt.Sprintf("%s[%d]", list, i)
	if field != "" {
		p += "." + field
	}
	return p
}

type validator struct {
	c      *CFE
	tax    TaxConfig
	info   TypeInfo
	fam    Element
	totals Totales // as ComputeTotals gives them
	probs  problems
}

func (v *validator) add(campo, format string, args ...any) { v.probs.add(campo, format, args...) }

// notHere reports a field the type does not carry.
func (v *validator) notHere(campo string) { v.add(campo, "no corresponde en %s", v.info.Name) }

// text checks a text field's length in characters (as the XSD counts them)
// and, when required, that it is not empty.
func (v *validator) text(campo, s string, max int, required bool) {
	switch n := utf8.RuneCountInString(s); {
	case required && strings.TrimSpace(s) == "":
		v.add(campo, "obligatorio")
	case !validXMLText(s):
		v.add(campo, invalidChars)
	case n > max:
		v.add(campo, "como máximo %d caracteres (tiene %d)", max, n)
	}
}

const invalidChars = "contiene caracteres no admitidos (caracteres de control o UTF-8 inválido)"

// number describes a decimal field of DGI: digits before and after the point
// and whether it admits negatives.
type number struct {
	intDigits, decimals int32
	negative            bool
}

var (
	amount       = number{15, 2, false} // MontoType
	signedAmount = number{15, 2, true}  // Monto_admite_negType
	quantity     = number{14, 3, true}  // Cant_admite_negType
	unitPrice    = number{11, 6, false} // PrecioUnitarioType
	percentage   = number{3, 3, false}  // PctType (DGI's percentages are never negative)
)

// fits reports whether d has at most n's digits (the sign aside).
func (n number) fits(d decimal.Decimal) bool {
	return d.Equal(d.Truncate(n.decimals)) && d.Abs().Cmp(decimal.New(1, n.intDigits)) < 0
}

// decimal checks d against the digits and sign its DGI type admits.
func (v *validator) decimal(campo string, d decimal.Decimal, n number) {
	switch {
	case !n.negative && d.IsNegative():
		v.add(campo, "no puede ser negativo")
	case !d.Equal(d.Truncate(n.decimals)):
		v.add(campo, "como máximo %d decimales", n.decimals)
	case d.Abs().Cmp(decimal.New(1, n.intDigits)) >= 0:
		v.add(campo, "como máximo %d dígitos enteros", n.intDigits)
	}
}

func (v *validator) optDecimal(campo string, d *decimal.Decimal, n number) {
	if d != nil {
		v.decimal(campo, *d, n)
	}
}

// date checks that an optional date lies within the XSD's bounds.
func (v *validator) date(campo string, d *Date, from Date) {
	if d != nil && (d.Before(from) || d.After(lastDate)) {
		v.add(campo, "fuera del rango admitido por DGI (%s a %s)", from, lastDate)
	}
}

var (
	firstCFEDate = Date{2011, 10, 1}  // FechaType
	firstDate    = Date{2000, 1, 1}   // Fecha_d2000_Type
	lastDate     = Date{2050, 12, 31} // both
)

// oneOf checks an optional code against its admitted values (0 is absent).
func (v *validator) oneOf(campo string, got int, admitted ...int) {
	if got != 0 && !slices.Contains(admitted, got) {
		v.add(campo, "valor %d no admitido (admitidos: %s)", got, joinInts(admitted))
	}
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = itoa(int64(x))
	}
	return strings.Join(s, ", ")
}

// electronicCode returns the 1xx code of t (201 → 101), so that a rule
// written for a CFE reads the same for its contingency form.
func electronicCode(t Type) Type {
	if i, ok := t.Info(); ok && i.Contingency {
		return t - contingencyOffset
	}
	return t
}

func (v *validator) code() Type { return electronicCode(v.c.Type()) }

// collectsOwn reports whether t may document an own collection (IndCobPropia
// 1, V24 A-C20): an e-Ticket or e-Factura, own or on behalf of others, or its
// contingency form; never a note.
func collectsOwn(t Type) bool {
	switch electronicCode(t) {
	case ETicket, ETicketCtaAjena, EFactura, EFacturaCtaAjena:
		return true
	}
	return false
}

// cuentaAjena reports a sale on behalf of others (131-133, 141-143).
func (v *validator) cuentaAjena() bool {
	b := electronicCode(v.info.Base)
	return b == ETicketCtaAjena || b == EFacturaCtaAjena
}

// priced reports a family whose lines carry prices and amounts.
func (v *validator) priced() bool { return v.fam != ElemRemito && v.fam != ElemResguardo }

// exportFamily reports e-Factura de Exportación, its notes and e-Remito de Exportación.
func (v *validator) exportFamily() bool { return v.fam == ElemFacturaExp || v.fam == ElemRemitoExp }

// remitoOrResguardo reports the types without payment data (no FmaPago, no zone E).
func (v *validator) remitoOrResguardo() bool {
	return v.fam == ElemRemito || v.fam == ElemRemitoExp || v.fam == ElemResguardo
}

const serieRule = "serie inválida: una o dos letras mayúsculas A-Z (sin Ñ) o un dígito 1-9 seguido de una letra, por ejemplo A, AB o 1A"

func (v *validator) idDoc() {
	d := &v.c.IdDoc
	const p = "cfe.idDoc."
	if d.Serie != "" && !ValidSerie(d.Serie) {
		v.add(p+"serie", serieRule)
	}
	if d.Nro < 0 || d.Nro > MaxNro {
		v.add(p+"numero", "debe estar entre 1 y %d", MaxNro)
	}
	switch {
	case d.FchEmis.IsZero():
		v.add(p+"fechaEmision", "obligatoria")
	default:
		v.date(p+"fechaEmision", &d.FchEmis, firstCFEDate)
		if !v.c.TmstFirma.IsZero() && d.FchEmis.After(DateOf(v.c.TmstFirma.In(Montevideo)).AddDays(60)) {
			v.add(p+"fechaEmision", "no puede ser posterior en más de 60 días a la fecha de firma")
		}
	}
	if v.info.Contingency && !d.FchEmis.IsZero() && !v.c.TmstFirma.IsZero() && d.FchEmis.After(DateOf(v.c.TmstFirma.In(Montevideo))) {
		// The paper form was filled in before it is keyed in.
		v.add(p+"fechaEmision", "la fecha del formulario de contingencia (%s) no puede ser posterior a la de su ingreso (%s)", d.FchEmis, DateOf(v.c.TmstFirma.In(Montevideo)))
	}
	v.text(p+"numeroInterno", d.NroInterno, 50, false)
	v.text(p+"informacionAdicional", d.InfoAdicionalDoc, 150, false)

	if d.FchValor != nil && v.fam != ElemResguardo {
		v.add(p+"fechaValor", "solo corresponde a e-Resguardo")
	}
	v.date(p+"fechaValor", d.FchValor, firstCFEDate)
	if f := d.FchValor; f != nil && !d.FchEmis.IsZero() && (f.Year > d.FchEmis.Year || f.Year == d.FchEmis.Year && f.Month > d.FchEmis.Month) {
		// V25 A-C5.1: "AAAAMM de A-C5.1 debe ser ≤ AAAAMM de A-C5".
		v.add(p+"fechaValor", "no puede ser de un mes posterior al de fechaEmision")
	}
	if (d.PeriodoDesde != nil || d.PeriodoHasta != nil) && v.remitoOrResguardo() {
		v.notHere(p + "periodoDesde")
	}
	v.date(p+"periodoDesde", d.PeriodoDesde, firstCFEDate) // V24 A-C7: 01/10/2011 a 31/12/2050
	v.date(p+"periodoHasta", d.PeriodoHasta, firstDate)
	if d.PeriodoDesde != nil && d.PeriodoHasta != nil && d.PeriodoHasta.Before(*d.PeriodoDesde) {
		v.add(p+"periodoHasta", "no puede ser anterior a periodoDesde")
	}

	v.oneOf(p+"montoBruto", d.MntBruto, 1, 2, 3)
	switch {
	case d.MntBruto != 0 && v.remitoOrResguardo():
		v.notHere(p + "montoBruto")
	case d.MntBruto == 2 && v.fam != ElemBoleta:
		v.add(p+"montoBruto", "el valor 2 (IMEBA y adicionales incluidos) solo corresponde a e-Boleta de entrada")
	case d.MntBruto == 3 && v.cuentaAjena():
		// V25 K-C1: "Si A-C10=3, se rechaza el CFE" (the mandante's IVA mínimo sales use indicator 16).
		v.add(p+"montoBruto", "el valor 3 no corresponde en %s: las ventas de un mandante de IVA mínimo se indican con el indicador de facturación 16", v.info.Name)
	case d.MntBruto != 2 && v.fam == ElemBoleta && v.totals.MntIVaenSusp != nil:
		// A-C115: "Si existe A-C115 y tipo CFE 151, 152 y 153, A-C10=2".
		v.add(p+"montoBruto", "debe ser 2 (IMEBA y adicionales incluidos): en %s con IVA en suspenso (indicador 12) DGI exige montoBruto 2", v.info.Name)
	}
	if v.remitoOrResguardo() {
		if d.FmaPago != 0 {
			v.notHere(p + "formaPago")
		}
		if d.FchVenc != nil {
			v.notHere(p + "fechaVencimiento")
		}
	} else if d.FmaPago != 1 && d.FmaPago != 2 {
		v.add(p+"formaPago", "obligatoria: 1 (contado) o 2 (crédito)")
	}
	v.date(p+"fechaVencimiento", d.FchVenc, firstDate)

	v.exportFields()
	v.indicators()
	v.remitoFields()
}

var clauVentaRE = regexp.MustCompile(`^([A-Za-z]{1,3}|N/A)$`)

// exportFields checks ClauVenta, ModVenta and ViaTransp (A-C13 to A-C15).
func (v *validator) exportFields() {
	d := &v.c.IdDoc
	const p = "cfe.idDoc."
	switch {
	case !v.exportFamily() && d.ClauVenta != "":
		v.notHere(p + "clausulaVenta")
	case v.fam == ElemFacturaExp && d.ClauVenta == "":
		v.add(p+"clausulaVenta", "obligatoria en %s: Incoterm (FOB, CIF, …) o N/A", v.info.Name)
	case d.ClauVenta != "" && !clauVentaRE.MatchString(d.ClauVenta):
		v.add(p+"clausulaVenta", "de 1 a 3 letras (Incoterm) o N/A")
	}
	switch code := v.code(); {
	case v.exportFamily():
		if d.ModVenta == 0 && !v.info.IsNote() {
			v.add(p+"modalidadVenta", "obligatoria en %s", v.info.Name)
		}
		v.oneOf(p+"modalidadVenta", d.ModVenta, 1, 2, 3, 4, 90, 99)
	case code >= ETicket && code <= ETicketND:
		v.oneOf(p+"modalidadVenta", d.ModVenta, 80, 90) // Tax Free or export of services
	case code >= EFactura && code <= EFacturaND:
		v.oneOf(p+"modalidadVenta", d.ModVenta, 90)
	case d.ModVenta != 0:
		v.notHere(p + "modalidadVenta")
	}
	switch {
	case v.exportFamily() && d.ViaTransp == 0:
		v.add(p+"viaTransporte", "obligatoria en %s (8 si no corresponde)", v.info.Name)
	case v.exportFamily():
		v.oneOf(p+"viaTransporte", d.ViaTransp, 1, 2, 3, 8, 9)
	case d.ViaTransp != 0:
		v.notHere(p + "viaTransporte")
	}
}

// indicators checks the document indicators A-C17 to A-C21.
func (v *validator) indicators() {
	d := &v.c.IdDoc
	const p = "cfe.idDoc."
	// IVA al día: value 1 in production (2 and 3 only from XSD 1.44.2).
	if d.IVAalDia != 0 && (v.remitoOrResguardo() || v.fam == ElemBoleta) {
		v.notHere(p + "ivaAlDia")
	} else {
		v.oneOf(p+"ivaAlDia", d.IVAalDia, 1)
	}
	v.oneOf(p+"secretoProfesional", d.SecProf, 1, 2)
	if d.SecProf == 2 && !v.cuentaAjena() {
		v.add(p+"secretoProfesional", "el valor 2 solo corresponde a ventas por cuenta ajena (131-133, 141-143)")
	}
	if d.IndPagCta3ros != 0 && (v.remitoOrResguardo() || v.fam == ElemBoleta) {
		v.notHere(p + "indicadorPagoCuentaTerceros")
	} else {
		v.oneOf(p+"indicadorPagoCuentaTerceros", d.IndPagCta3ros, 1)
	}
	if d.IndCobPropia != 0 {
		if collectsOwn(v.c.Type()) {
			v.oneOf(p+"indicadorCobranzaPropia", d.IndCobPropia, 1)
		} else {
			v.add(p+"indicadorCobranzaPropia", "la cobranza propia solo corresponde a e-Ticket y e-Factura (y por cuenta ajena), no a sus notas ni a otros tipos")
		}
	}
	if d.IndCompraMEReventa != 0 {
		if v.fam != ElemBoleta {
			v.add(p+"indicadorCompraMonedaExtranjera", "solo corresponde a e-Boleta de entrada y sus notas")
		}
		v.oneOf(p+"indicadorCompraMonedaExtranjera", d.IndCompraMEReventa, 1, 2)
		if d.IndCompraMEReventa == 2 && d.SecProf != 0 {
			v.add(p+"secretoProfesional", "no corresponde en una compra de moneda extranjera por cuenta ajena")
		}
	}
}

// remitoFields checks the transfer and owner-of-goods fields (A-C6 to A-C6.6).
func (v *validator) remitoFields() {
	d := &v.c.IdDoc
	const p = "cfe.idDoc."
	isRemito := v.fam == ElemRemito || v.fam == ElemRemitoExp
	if !isRemito {
		if d.TipoTraslado != 0 {
			v.notHere(p + "tipoTraslado")
		}
		if d.IndPropiedad != 0 || d.TipoDocProp != 0 || d.CodPaisProp != "" || d.DocProp != "" || d.DocPropExt != "" || d.RznSocProp != "" {
			v.add(p+"indicadorPropiedad", "los datos del propietario de la mercadería solo corresponden a remitos")
		}
		return
	}
	if d.TipoTraslado == 0 {
		v.add(p+"tipoTraslado", "obligatorio en %s: 1 (venta) o 2 (traslado interno)", v.info.Name)
	}
	v.oneOf(p+"tipoTraslado", d.TipoTraslado, 1, 2)
	v.oneOf(p+"indicadorPropiedad", d.IndPropiedad, 1)
	if d.IndPropiedad == 1 || d.TipoDocProp != 0 {
		v.identity(identityFields{
			tipo: p + "tipoDocumentoPropietario", pais: p + "codigoPaisPropietario",
			doc: p + "documentoPropietario", docExt: p + "documentoPropietarioExt",
		}, d.TipoDocProp, d.CodPaisProp, d.DocProp, d.DocPropExt, "propietario de la mercadería", "")
	}
	v.text(p+"razonSocialPropietario", d.RznSocProp, 150, d.IndPropiedad == 1)
}

// identityFields names the fields of a document identification.
type identityFields struct{ tipo, pais, doc, docExt string }

// identity checks the document identification of who (receptor, mandante…):
// type 1 to 7, its country (UY for NIE, RUC and C.I.; AR, BR, CL or PY for DNI;
// a code or 99 otherwise), and the number in the field its type uses, with RUC
// and C.I. check digits. An empty docExt path means the identification has a
// single document field. why, when set, says the rule that asks for it.
func (v *validator) identity(f identityFields, tipo int, pais, doc, docExt, who, why string) {
	if tipo < 1 || tipo > 7 {
		if why != "" {
			why = "; " + why
		}
		v.add(f.tipo, "obligatorio: tipo de documento del %s (1 NIE, 2 RUC, 3 C.I., 4 otros, 5 pasaporte, 6 DNI o 7 NIFE)%s", who, why)
		return
	}
	switch {
	case pais == "":
		v.add(f.pais, "obligatorio: código ISO 3166 de 2 letras del país del documento")
	case tipo <= 3 && pais != "UY":
		v.add(f.pais, "debe ser UY para NIE, RUC o C.I.")
	case tipo == 6 && !slices.Contains([]string{"AR", "BR", "CL", "PY"}, pais):
		v.add(f.pais, "el DNI solo se admite de AR, BR, CL o PY")
	case pais != "99" && !countryRE.MatchString(pais):
		v.add(f.pais, "código ISO 3166 de 2 letras mayúsculas, o 99 si el país no está en la tabla")
	}
	uruguayan := tipo <= 3
	number, numberPath := doc, f.doc
	if !uruguayan && f.docExt != "" {
		number, numberPath = docExt, f.docExt
		if doc != "" {
			v.add(f.doc, "no corresponde con tipo de documento %d: use %s", tipo, lastSegment(f.docExt))
		}
	} else if uruguayan && docExt != "" {
		v.add(f.docExt, "no corresponde con tipo de documento %d: use %s", tipo, lastSegment(f.doc))
	}
	switch {
	case number == "":
		v.add(numberPath, "obligatorio: número de documento del %s", who)
	case !validXMLText(number):
		v.add(numberPath, invalidChars)
	case uruguayan && utf8.RuneCountInString(number) > 12:
		v.add(numberPath, "como máximo 12 caracteres")
	case utf8.RuneCountInString(number) > 20:
		v.add(numberPath, "como máximo 20 caracteres")
	case tipo == 2 && !ValidRUC(number):
		v.add(numberPath, "RUC inválido: 12 dígitos con dígito verificador correcto")
	case tipo == 3 && !ValidCI(number):
		v.add(numberPath, "C.I. inválida: 7 u 8 dígitos sin puntos ni guion, con dígito verificador correcto")
	case tipo == 1 && !allDigits(number):
		v.add(numberPath, "NIE inválido: solo dígitos")
	}
}

var countryRE = regexp.MustCompile(`^[A-Z]{2}$`)

func lastSegment(path string) string { return path[strings.LastIndex(path, ".")+1:] }

// CheckEmisor returns the rules of DGI's zone A (C40-C51) that e breaks, each
// field named as a request names it under cfe.emisor (ruc, razonSocial,
// telefonos[0], ...). Validate applies it to every CFE; profiles apply it to
// the company before any CFE is issued.
func CheckEmisor(e Emisor) []FieldError {
	var v validator
	v.emisor(&e, "")
	return v.probs
}

// emisor checks e, naming its fields after prefix p.
func (v *validator) emisor(e *Emisor, p string) {
	if !ValidRUC(e.RUCEmisor) {
		v.add(p+"ruc", "RUC inválido: 12 dígitos con dígito verificador correcto")
	}
	v.text(p+"razonSocial", e.RznSoc, 150, true)
	v.text(p+"nombreComercial", e.NomComercial, 30, false)
	// 60 characters is the limit of the schema DGI's production still runs
	// (1.43.5); 1.44.1 raised it to 100.
	v.text(p+"giro", e.GiroEmis, 60, false)
	if len(e.Telefono) > 2 {
		v.add(p+"telefonos", "como máximo 2 teléfonos")
	}
	for i, t := range e.Telefono {
		v.text(fmt.Sprintf("%stelefonos[%d]", p, i), t, 20, false)
	}
	v.text(p+"correo", e.CorreoEmisor, 80, false)
	v.text(p+"sucursal", e.EmiSucursal, 20, false)
	if e.CdgDGISucur < 1 || e.CdgDGISucur > 9999 {
		v.add(p+"codigoSucursal", "obligatorio: el código de la casa principal o sucursal que asignó DGI (1 a 9999)")
	}
	v.text(p+"domicilioFiscal", e.DomFiscal, 70, true)
	v.text(p+"ciudad", e.Ciudad, 30, true)
	v.text(p+"departamento", e.Departamento, 30, true)
	v.text(p+"informacionAdicional", e.InfoAdicionalEmisor, 150, false)
}

// receptorNeeds says what a type requires of its receptor (V24 A-C60 to A-C66.1).
type receptorNeeds struct {
	identify            bool   // TipoDocRecep, CodPaisRecep and the document
	why                 string // the rule that asks to identify, for the message
	name, address, city bool
	region, country     bool
}

func (v *validator) receptorNeeds() receptorNeeds {
	c := v.c
	if c.IdDoc.SecProf != 0 {
		return receptorNeeds{} // professional secrecy: the receptor goes in the Adenda
	}
	full := receptorNeeds{identify: true, name: true, address: true, city: true}
	switch v.fam {
	case ElemFactura:
		full.why = fmt.Sprintf("en %s el receptor se identifica con su RUC", v.info.Name)
		return full
	case ElemRemito:
		full.why = "en e-Remito siempre se identifica al receptor"
		return full
	case ElemResguardo:
		return receptorNeeds{identify: true, name: true, why: "en e-Resguardo siempre se identifica al retenido"}
	case ElemFacturaExp, ElemRemitoExp:
		return receptorNeeds{name: true, address: true, city: true, region: true, country: true,
			why: fmt.Sprintf("en %s se informan nombre, dirección, ciudad, departamento o estado y país del receptor", v.info.Name)}
	case ElemTicket:
		if v.hasRetentions() {
			return receptorNeeds{identify: true, why: "el comprobante documenta retenciones o percepciones"}
		}
		if net, tope := v.netPesos(), v.tax.TopeUI.Mul(v.tax.ValorUI); net.GreaterThan(tope) {
			return receptorNeeds{identify: true, why: fmt.Sprintf("el monto neto (%s pesos) supera el tope de %s UI (%s pesos)",
				net.StringFixed(2), v.tax.TopeUI, tope.StringFixed(2))}
		}
	case ElemBoleta:
		// The seller is always identified, except a non-RUC seller of foreign
		// currency for resale below the threshold (V24 A-C60).
		r := c.Receptor
		exempt := c.IdDoc.IndCompraMEReventa != 0 && (r == nil || r.TipoDocRecep != 2) &&
			!v.netPesos().GreaterThan(v.tax.TopeUI.Mul(v.tax.ValorUI))
		if !exempt {
			full.why = "en e-Boleta de entrada siempre se identifica al vendedor"
			return full
		}
	}
	return receptorNeeds{}
}

// netPesos is Σ A-C112..C118 in pesos, the amount the e-Ticket threshold reads.
func (v *validator) netPesos() decimal.Decimal {
	t := &v.totals
	net := sumOf(t.MntNoGrv, t.MntExpoyAsim, t.MntImpuestoPerc, t.MntIVaenSusp,
		t.MntNetoIvaTasaMin, t.MntNetoIVATasaBasica, t.MntNetoIVAOtra)
	if v.c.Totales.TpoMoneda != "UYU" && v.c.Totales.TpoCambio != nil {
		net = net.Mul(*v.c.Totales.TpoCambio)
	}
	return net
}

func (v *validator) hasRetentions() bool {
	for i := range v.c.Items {
		if len(v.c.Items[i].RetencPercep) > 0 {
			return true
		}
	}
	return false
}

func (v *validator) receptor() {
	r := v.c.Receptor
	need := v.receptorNeeds()
	const p = "cfe.receptor."
	if r == nil {
		if need.identify || need.name {
			v.add("cfe.receptor", "obligatorio: %s", need.why)
		}
		return
	}
	if need.identify || r.TipoDocRecep != 0 || r.CodPaisRecep != "" || r.DocRecep != "" || r.DocRecepExt != "" {
		f := identityFields{tipo: p + "tipoDocumento", pais: p + "codigoPais", doc: p + "documento", docExt: p + "documentoExt"}
		docExt := r.DocRecepExt
		if v.fam == ElemFactura {
			f.docExt, docExt = "", "" // e-Factura has no DocRecepExt: reported below
		}
		v.identity(f, r.TipoDocRecep, r.CodPaisRecep, r.DocRecep, docExt, "receptor", need.why)
	}
	if v.fam == ElemFactura {
		if r.TipoDocRecep != 0 && r.TipoDocRecep != 2 {
			v.add(p+"tipoDocumento", "en %s el receptor se identifica con RUC (tipo 2)", v.info.Name)
		}
		if r.DocRecepExt != "" {
			v.notHere(p + "documentoExt")
		}
	}
	v.text(p+"razonSocial", r.RznSocRecep, 150, need.name)
	v.text(p+"direccion", r.DirRecep, 70, need.address)
	v.text(p+"ciudad", r.CiudadRecep, 30, need.city)
	v.text(p+"departamento", r.DeptoRecep, 30, need.region)
	v.text(p+"pais", r.PaisRecep, 30, need.country)
	if r.CP != "" && (len(r.CP) > 5 || !allDigits(r.CP)) {
		v.add(p+"codigoPostal", "hasta 5 dígitos")
	}
	v.text(p+"informacionAdicional", r.InfoAdicional, 150, false)
	if v.fam == ElemResguardo {
		if r.LugarDestEnt != "" {
			v.notHere(p + "lugarEntrega")
		}
		if r.CompraID != "" {
			v.notHere(p + "idCompraCliente")
		}
	}
	v.text(p+"lugarEntrega", r.LugarDestEnt, 100, false)
	v.text(p+"idCompraCliente", r.CompraID, 50, false)
}

func (v *validator) complFiscal() {
	k := v.c.ComplFiscal
	mandante := v.fam == ElemBoleta && v.c.IdDoc.IndCompraMEReventa == 2
	allowed := v.cuentaAjena() || mandante
	const p = "cfe.complementoFiscal"
	switch {
	case k != nil && !allowed:
		v.add(p, "solo corresponde a ventas por cuenta ajena (131-133, 141-143) y a compras de moneda extranjera por cuenta ajena en e-Boleta")
		return
	case k == nil && allowed && v.c.IdDoc.SecProf != 2:
		v.add(p, "obligatorio en %s: los datos del mandante por cuenta de quien se opera", v.info.Name)
		return
	case k == nil:
		return
	}
	if k.RUCEmisor != v.c.Emisor.RUCEmisor {
		v.add(p+".rucEmisor", "debe ser el RUC de la empresa que emite (%s)", v.c.Emisor.RUCEmisor)
	}
	if mandante && k.TipoDocMdte != 0 && !slices.Contains([]int{1, 2, 7}, k.TipoDocMdte) {
		v.add(p+".tipoDocumento", "en una compra de moneda extranjera por cuenta ajena el mandante se identifica con NIE, RUC o NIFE (1, 2 o 7)")
	}
	v.identity(identityFields{tipo: p + ".tipoDocumento", pais: p + ".codigoPais", doc: p + ".documento"},
		k.TipoDocMdte, k.Pais, k.DocMdte, "", "mandante", "")
	if k.DocMdte != "" && k.DocMdte == v.c.Emisor.RUCEmisor {
		// V25 K-C4: "K-C4 = A-C40, se rechaza el CFE".
		v.add(p+".documento", "el mandante no puede ser la empresa que emite (%s)", v.c.Emisor.RUCEmisor)
	}
	v.text(p+".nombre", k.NombreMdte, 150, true)
}

// totalsRules checks what DGI asks of the totals beyond their formulas:
// currency, exchange rate, and the totals that may not be negative.
func (v *validator) totalsRules() {
	t := &v.c.Totales
	const p = "cfe.totales."
	if v.fam == ElemRemito {
		return // e-Remito totals are CantLinDet only
	}
	switch {
	case t.TpoMoneda == "":
		v.add(p+"tipoMoneda", "obligatorio: código ISO 4217 (UYU, USD, …)")
	case !currencyRE.MatchString(t.TpoMoneda):
		v.add(p+"tipoMoneda", "código ISO 4217 de 3 letras mayúsculas (UYU, USD, EUR, …)")
	case v.c.IdDoc.IndCompraMEReventa != 0 && t.TpoMoneda != "UYU":
		v.add(p+"tipoMoneda", "debe ser UYU en una compra de moneda extranjera para reventa")
	}
	switch {
	case t.TpoMoneda != "UYU" && t.TpoCambio == nil:
		v.add(p+"tipoCambio", "obligatorio cuando la moneda no es UYU")
	case t.TpoCambio != nil && (!t.TpoCambio.IsPositive() || t.TpoCambio.GreaterThan(decimal.RequireFromString("9999.999")) ||
		!t.TpoCambio.Equal(t.TpoCambio.Truncate(3))):
		v.add(p+"tipoCambio", "mayor que 0, hasta 4 enteros y 3 decimales")
	}
	if len(t.RetencPercep) > 20 {
		v.add(p+"retencionesPercepciones", "como máximo 20 códigos distintos de retención o percepción")
	}
	nonNegative := []totalField{fieldMntNoGrv, fieldMntImpuestoPerc, fieldMntIVaenSusp, fieldMntNetoIvaTasaMin,
		fieldMntNetoIVATasaBasica, fieldMntNetoIVAOtra, fieldMntIVATasaMin, fieldMntIVATasaBasica, fieldMntIVAOtra}
	if v.fam != ElemRemitoExp {
		nonNegative = append(nonNegative, fieldMntTotal)
	}
	for _, f := range nonNegative {
		if d := f.get(t); d != nil && d.IsNegative() {
			v.add(p+f.json, "resulta negativo (%s): revise los descuentos y las líneas con cantidad negativa", d.StringFixed(2))
		}
	}
	// A-C118 "Si C123>0, C118>0" and A-C123 "Si C118>0, C123>0".
	netOtra, ivaOtra := valueOf(t.MntNetoIVAOtra), valueOf(t.MntIVAOtra)
	switch {
	case netOtra.IsPositive() && !ivaOtra.IsPositive():
		v.add(p+fieldMntIVAOtra.json, "debe ser mayor que 0 cuando hay monto neto a otra tasa o sobre fictos (%s)", netOtra.StringFixed(2))
	case ivaOtra.IsPositive() && !netOtra.IsPositive():
		v.add(p+fieldMntIVAOtra.json, "no corresponde sin monto neto a otra tasa o sobre fictos (líneas con indicador 4)")
	}
	for _, f := range totalFields {
		if d := f.get(t); d != nil {
			v.decimal(p+f.json, *d, signedAmount)
		}
	}
}

var currencyRE = regexp.MustCompile(`^[A-Z]{3}$`)
