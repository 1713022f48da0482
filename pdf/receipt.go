package pdf

import (
	"strconv"
	"strings"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/shopspring/decimal"
)

// A receipt is everything the printed representation shows, as text, in
// DGI's order (Formato de los CFE v24, "Formato de la representación
// impresa"): emitter, document identification, receptor, body, footer. It is
// independent of the template; the layouts decide where each piece goes.
type receipt struct {
	// Zone 1, emitter (top left).
	emitterName string
	emitterInfo []string // nombre comercial, domicilio fiscal, city, contact
	special     []string // the box of an exonerated / IVA mínimo / monotributo emitter
	// Zone 2, document identification (top right).
	ruc      string // "RUC 219999830019"
	typeName string // "e-Factura", followed by "Cobranza" for an own collection
	number   string // "Serie A Nº 1"
	payment  string // "Forma de pago: Contado", "" when the CFE has none
	facts    []fact // date, currency...
	legends  []string
	// Zone 3, receptor.
	receptor *party
	// Zone 4, body.
	table      table
	adjusts    []fact // global discounts and surcharges
	subtotals  []fact
	totals     []fact
	payments   []fact
	references []string
	adenda     string
	// Zone 5, footer.
	qrData       string
	securityCode string
	cae          string // "CAE Nº 90120000194"
	caeRange     string // "Serie A del 1 al 100"
	caeExpiry    string // dd/mm/yyyy
	verify       string // "Puede verificar comprobante en ..."
	emitterSince string // "Fecha emisor ..." or "Res. ..."
	ivaAlDia     string // the constancia or NoIVAalDia, "" when neither is printed
	extra        []string
}

// A fact is a label and its value.
type fact struct {
	label, value string
	strong       bool
}

// A party is the receptor box: its title (≥ 3 mm, DGI), the document that
// identifies the receptor, and its name and address.
type party struct {
	title string
	doc   string
	lines []string
}

// A table is the detail of the document: columns and rows.
type table struct {
	cols     []col
	rows     []row
	sums     bool   // rows carry amounts, and pages carry their sum ("Transporte")
	currency string // currency code of the amounts
}

// A col is a column: its title, alignment and width in millimetres on A4
// (0 = takes the width the others leave; exactly one column does).
type col struct {
	title string
	align alignment
	width float64
}

// A row is one detail line: one cell per column, notes printed under the
// wide column, and its signed amount for the carried total.
type row struct {
	cells  []string
	notes  []string
	amount decimal.Decimal
}

// ConstanciaIVAalDia is the constancia printed when the emitter is "al día"
// with IVA (IVAalDia absent from the CFE). DGI prescribes the constancia but
// no wording; this is the wording used in practice.
const ConstanciaIVAalDia = "IVA al día"

// NoIVAalDia is what A-C17 (IVAalDia) 1 means, printed in the constancia's
// place: V24 marks the field "P" (print the meaning of the code).
const NoIVAalDia = "No IVA al día"

// noIVAalDia is the meaning of A-C17's code: V24's 1, and V25's 2 (the
// principal on whose behalf the CFE is issued) and 3 (both). A code DGI's
// schema does not have (refused before signing) still says "No IVA al día".
func noIVAalDia(code int) string {
	switch code {
	case 2:
		return NoIVAalDia + " mandante"
	case 3:
		return NoIVAalDia + " emisor y mandante"
	}
	return NoIVAalDia
}

// dgiVerifyURL is where every CFE but e-Tickets is checked.
const dgiVerifyURL = "www.dgi.gub.uy"

// newReceipt gathers the printed content of c.
func newReceipt(c *cfe.CFE, digest string, opts *Options) *receipt {
	info, _ := c.Type().Info()
	id := c.IdDoc
	r := &receipt{
		emitterName:  c.Emisor.RznSoc,
		emitterInfo:  emitterInfo(c.Emisor),
		special:      specialCAE(c.CAEData),
		ruc:          "RUC " + c.Emisor.RUCEmisor,
		typeName:     info.Name,
		number:       "Serie " + id.Serie + " Nº " + itoa(id.Nro),
		payment:      prefixed("Forma de pago: ", formaPago[id.FmaPago]),
		facts:        docFacts(c, info),
		legends:      docLegends(c),
		receptor:     receptorOf(c, info),
		table:        detail(c, info),
		adjusts:      globalAdjusts(c),
		subtotals:    subtotals(c),
		totals:       totals(c),
		payments:     payments(c),
		references:   references(c),
		adenda:       strings.TrimSpace(opts.Adenda),
		qrData:       cfe.QRData(c, digest),
		securityCode: cfe.SecurityCode(digest),
		cae:          "CAE Nº " + c.CAEData.CAEID,
		caeRange:     "Serie " + id.Serie + " del " + itoa(c.CAEData.DNro) + " al " + itoa(c.CAEData.HNro),
		caeExpiry:    date(c.CAEData.FecVenc),
		extra:        opts.Template.Legends,
	}
	if id.IndCobPropia == 1 {
		r.typeName += " Cobranza"
	}
	f := opts.Footer
	url := dgiVerifyURL
	if c.Type().IsTicketFamily() {
		// e-Tickets are published on the emitter's web site.
		url = firstOf(webAddress(opts.Template.WebURL), webAddress(f.WebURL), dgiVerifyURL)
	}
	r.verify = "Puede verificar comprobante en " + url
	switch {
	case f.Resolucion != "":
		r.emitterSince = "Res. " + f.Resolucion
	case !f.FechaEmisor.IsZero():
		r.emitterSince = "Fecha emisor: " + date(f.FechaEmisor)
	}
	// IVAalDia present means NOT al día, and its meaning is printed where the
	// constancia goes, whatever the profile says of the constancia;
	// monotributistas print no constancia (V25).
	switch {
	case id.IVAalDia != 0:
		r.ivaAlDia = noIVAalDia(id.IVAalDia)
	case !f.OmitIVAConstancia && c.CAEData.CAEEspecial != 3 && c.CAEData.CAEEspecial != 4:
		r.ivaAlDia = ConstanciaIVAalDia
	}
	return r
}

// webAddress is a web site as printed: without its scheme, as DGI writes
// www.dgi.gub.uy, and without a final slash.
func webAddress(u string) string {
	u = strings.TrimSpace(u)
	for _, scheme := range []string{"https://", "http://"} {
		if len(u) > len(scheme) && strings.EqualFold(u[:len(scheme)], scheme) {
			u = u[len(scheme):]
			break
		}
	}
	return strings.TrimSuffix(u, "/")
}

func emitterInfo(e cfe.Emisor) []string {
	var out []string
	add := func(s string) {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	add(e.NomComercial)
	add(e.GiroEmis)
	add(e.DomFiscal)
	add(joinNonEmpty(" - ", e.Ciudad, e.Departamento))
	if e.EmiSucursal != "" {
		add("Sucursal " + e.EmiSucursal)
	}
	if len(e.Telefono) > 0 {
		add("Tel. " + strings.Join(e.Telefono, " / "))
	}
	add(e.CorreoEmisor)
	return out
}

// specialCAE returns the box lines of an emitter with a special CAE.
func specialCAE(d cfe.CAEData) []string {
	switch d.CAEEspecial {
	case 1:
		out := []string{"Contribuyente Exonerado"}
		if d.CausalCAEEsp != 0 {
			out = append(out, "Causal "+itoa(int64(d.CausalCAEEsp)))
		}
		return out
	case 2:
		return []string{"Contribuyente IVA MINIMO"}
	case 3:
		return []string{"MONOTRIBUTO"}
	case 4:
		return []string{"MONOTRIBUTO SOCIAL MIDES"}
	}
	return nil
}

func docFacts(c *cfe.CFE, info cfe.TypeInfo) []fact {
	id, t := c.IdDoc, c.Totales
	out := []fact{{label: "Fecha", value: date(id.FchEmis)}}
	add := func(label, value string) {
		if value != "" {
			out = append(out, fact{label: label, value: value})
		}
	}
	if id.FchVenc != nil {
		add("Vencimiento", date(*id.FchVenc))
	}
	if id.PeriodoDesde != nil && id.PeriodoHasta != nil {
		add("Período", date(*id.PeriodoDesde)+" al "+date(*id.PeriodoHasta))
	}
	if id.FchValor != nil {
		add("Fecha valor", date(*id.FchValor))
	}
	add("Moneda", t.TpoMoneda)
	if t.TpoCambio != nil {
		add("Tipo de cambio", uruguayan(trimZeros(t.TpoCambio.StringFixed(3), 0)))
	}
	add("Traslado", tipoTraslado[id.TipoTraslado])
	add("Cláusula de venta", id.ClauVenta)
	add("Modalidad de venta", modVenta[id.ModVenta])
	add("Vía de transporte", viaTransp[id.ViaTransp])
	add("Nº interno", id.NroInterno)
	if info.Contingency {
		add("Emitido en", "contingencia")
	}
	return out
}

// Names of IdDoc codes (V24 zone A).
var (
	formaPago    = map[int]string{1: "Contado", 2: "Crédito"}
	tipoTraslado = map[int]string{1: "Venta", 2: "Traslado interno"}
	viaTransp    = map[int]string{1: "Marítimo", 2: "Aéreo", 3: "Terrestre", 8: "N/A", 9: "Otro"}
	movimiento   = map[string]string{"D": "Descuento", "R": "Recargo"}
)

// modVenta names the ModVenta codes (V24 A-C14).
var modVenta = map[int]string{
	1: "Régimen general", 2: "Consignación", 3: "Precio revisable", 4: "Bienes propios a exclaves aduaneros",
	80: "Tax Free", 90: "Exportación de servicios", 91: "Exportación por cuenta de mandante", 99: "Otras",
}

func docLegends(c *cfe.CFE) []string {
	id := c.IdDoc
	var out []string
	if id.IndPagCta3ros == 1 {
		out = append(out, "Pagos por cuenta de terceros")
	}
	if id.IndPropiedad == 1 {
		owner := joinNonEmpty(" ", id.RznSocProp, docOf(id.TipoDocProp, firstOf(id.DocProp, id.DocPropExt), id.CodPaisProp))
		out = append(out, joinNonEmpty(": ", "Bienes de Terceros", owner))
	}
	switch id.IndCompraMEReventa {
	case 1:
		out = append(out, "Compra de moneda extranjera para reventa")
	case 2:
		out = append(out, "Compra de moneda extranjera para reventa por cuenta ajena")
	}
	if k := c.ComplFiscal; k != nil && k.NombreMdte != "" {
		out = append(out, "Por cuenta de "+joinNonEmpty(" ", k.NombreMdte, docOf(k.TipoDocMdte, k.DocMdte, k.Pais)))
	}
	if s := strings.TrimSpace(id.InfoAdicionalDoc); s != "" {
		out = append(out, s)
	}
	return out
}

// docNames are the receptor document types (TipoDocRecep, V24 A-C60).
var docNames = map[int]string{1: "NIE", 2: "RUC", 3: "C.I.", 4: "Otro", 5: "Pasaporte", 6: "DNI", 7: "NIFE"}

// docOf formats an identity document with the country that issued it:
// "C.I. 12345678 (UY)", "Pasaporte X123 (AR)". V24 A-C61 (the document's
// country, ISO 3166 alpha-2, or 99) is to be printed wherever the document
// is ("I"), and the receptor zone asks for the "país emisor del documento"
// of a C.I. as of a foreign document; the code is printed as the CFE
// carries it.
func docOf(kind int, number, country string) string {
	if number == "" {
		return ""
	}
	s := joinNonEmpty(" ", docNames[kind], number)
	if country = strings.TrimSpace(country); country != "" {
		s += " (" + country + ")"
	}
	return s
}

// receptorOf returns the receptor box, or nil when the document has none to
// print (a receptor omitted under professional secrecy).
func receptorOf(c *cfe.CFE, info cfe.TypeInfo) *party {
	rc := c.Receptor
	p := &party{}
	switch {
	case info.Element == cfe.ElemTicket:
		p.title = "CONSUMO FINAL"
	case rc == nil:
		return nil
	case rc.TipoDocRecep == 2 && info.Element == cfe.ElemBoleta:
		p.title = "RUC VENDEDOR"
	case rc.TipoDocRecep == 2:
		p.title = "RUC COMPRADOR"
	case info.Element == cfe.ElemBoleta:
		p.title = "VENDEDOR"
	default:
		p.title = "RECEPTOR"
	}
	if rc == nil {
		return p
	}
	if rc.TipoDocRecep == 2 && p.title != "CONSUMO FINAL" {
		p.doc = rc.DocRecep // the box title already says RUC
	} else {
		p.doc = docOf(rc.TipoDocRecep, firstOf(rc.DocRecep, rc.DocRecepExt), rc.CodPaisRecep)
	}
	for _, s := range []string{
		rc.RznSocRecep,
		rc.DirRecep,
		joinNonEmpty(" - ", rc.CiudadRecep, rc.DeptoRecep, rc.PaisRecep),
		prefixed("C.P. ", rc.CP),
		prefixed("Entrega: ", rc.LugarDestEnt),
		prefixed("Orden de compra: ", rc.CompraID),
		rc.InfoAdicional,
	} {
		if s = strings.TrimSpace(s); s != "" {
			p.lines = append(p.lines, s)
		}
	}
	return p
}

// detail builds the table of lines: priced lines for most types, quantities
// only for e-Remitos, retentions for e-Resguardos.
func detail(c *cfe.CFE, info cfe.TypeInfo) table {
	cur := c.Totales.TpoMoneda
	switch info.Element {
	case cfe.ElemRemito:
		t := table{cols: []col{{"Cant.", right, 22}, {"Descripción", left, 0}}}
		for _, it := range c.Items {
			t.rows = append(t.rows, row{cells: []string{qtyOf(it), it.NomItem}, notes: itemNotes(it, cur)})
		}
		return t
	case cfe.ElemResguardo:
		t := table{cols: []col{{"Retención / percepción", left, 0}, {"Tasa", right, 22},
			{"Monto sujeto", right, 34}, {"Importe", right, 34}}, sums: true, currency: cur}
		for _, it := range c.Items {
			for _, rp := range it.RetencPercep {
				cells := []string{joinNonEmpty(" ", "Código "+rp.CodRet, rp.InfoAdicionalRet), "", "", ""}
				if rp.Tasa != nil {
					cells[1] = rate(*rp.Tasa)
				}
				if rp.MntSujetoaRet != nil {
					cells[2] = money(*rp.MntSujetoaRet)
				}
				amount := rp.ValRetPerc
				if it.IndFact == 9 { // an item that annuls a previous resguardo
					amount = amount.Neg()
				}
				cells[3] = money(amount)
				t.rows = append(t.rows, row{cells: cells, amount: amount})
			}
		}
		return t
	}
	t := table{cols: []col{{"Cant.", right, 22}, {"Descripción", left, 0},
		{"P. unitario", right, 30}, {"Importe", right, 30}}, sums: true, currency: cur}
	for _, it := range c.Items {
		amount := it.MontoItem
		if it.IndFact == 7 || it.IndFact == 8 { // negative lines: print the sign (V24 B-C4 note 6)
			amount = amount.Neg()
		}
		t.rows = append(t.rows, row{
			cells:  []string{qtyOf(it), it.NomItem, price(it.PrecioUnitario), money(amount)},
			notes:  itemNotes(it, cur),
			amount: amount,
		})
	}
	return t
}

// qtyOf is a line's quantity and unit. A line that deducts goods from a
// remito already issued (IndFact 8) prints its quantity with a minus sign:
// V24 B-C4 note 6 asks for the sign of indicators 7, 8 and 9 instead of the
// code, and an e-Remito has no amount to carry it. DGI's placeholder unit
// "N/A" (B-C10: "cuando la unidad de medida es N/A, no es obligatorio
// imprimir") is not a unit and is left out.
func qtyOf(it cfe.Item) string {
	q := it.Cantidad
	if it.IndFact == 8 {
		q = q.Neg()
	}
	unit := strings.TrimSpace(it.UniMed)
	if strings.EqualFold(unit, unitNotApplicable) {
		unit = ""
	}
	return joinNonEmpty(" ", quantity(q), unit)
}

// unitNotApplicable is DGI's UniMed for a line without a unit of measure.
const unitNotApplicable = "N/A"

// itemNotes are the lines printed under an item: its description,
// discounts, surcharges and retentions.
func itemNotes(it cfe.Item, currency string) []string {
	var out []string
	if s := strings.TrimSpace(it.DscItem); s != "" {
		out = append(out, s)
	}
	adjust := func(label string, pct, amount *decimal.Decimal) {
		switch {
		case amount != nil && pct != nil:
			out = append(out, label+" "+rate(*pct)+": "+moneyIn(currency, *amount))
		case amount != nil:
			out = append(out, label+": "+moneyIn(currency, *amount))
		case pct != nil:
			out = append(out, label+" "+rate(*pct))
		}
	}
	adjust("Descuento", it.DescuentoPct, it.DescuentoMonto)
	adjust("Recargo", it.RecargoPct, it.RecargoMnt)
	if it.IndFact == 5 {
		out = append(out, "Entrega gratuita")
	}
	for _, rp := range it.RetencPercep {
		out = append(out, "Ret./perc. "+rp.CodRet+": "+moneyIn(currency, rp.ValRetPerc))
	}
	return out
}

func globalAdjusts(c *cfe.CFE) []fact {
	var out []fact
	for _, g := range c.DscRcgGlobal {
		label := movimiento[g.TpoMovDR]
		// ValorDR is an amount also with TpoDR 2 (V24 D-C6; see cfe/totals.go).
		value := moneyIn(c.Totales.TpoMoneda, g.ValorDR)
		out = append(out, fact{label: joinNonEmpty(": ", label, g.GlosaDR), value: value})
	}
	return out
}

func subtotals(c *cfe.CFE) []fact {
	var out []fact
	for _, s := range c.SubTotInfo {
		out = append(out, fact{label: s.GlosaSTI, value: moneyIn(c.Totales.TpoMoneda, s.ValSubtotSTI)})
	}
	return out
}

func payments(c *cfe.CFE) []fact {
	var out []fact
	for _, m := range c.MediosPago {
		out = append(out, fact{label: m.GlosaMP, value: moneyIn(c.Totales.TpoMoneda, m.ValorPago)})
	}
	return out
}

// totals lists the amounts of Totales that the document carries, by IVA
// rate, in DGI's order. When Total and Total a pagar are equal only the
// latter is printed (V24 allows printing one).
func totals(c *cfe.CFE) []fact {
	t := c.Totales
	cur := t.TpoMoneda
	minRate, basicRate := decimal.NewFromInt(10), decimal.NewFromInt(22)
	if t.IVATasaMin != nil {
		minRate = *t.IVATasaMin
	}
	if t.IVATasaBasica != nil {
		basicRate = *t.IVATasaBasica
	}
	var out []fact
	add := func(label string, v *decimal.Decimal) {
		if v != nil {
			out = append(out, fact{label: label, value: moneyIn(cur, *v)})
		}
	}
	add("Monto no gravado", t.MntNoGrv)
	add("Exportación y asimiladas", t.MntExpoyAsim)
	add("Impuesto percibido", t.MntImpuestoPerc)
	add("IVA en suspenso", t.MntIVaenSusp)
	add("Neto IVA "+rate(minRate), t.MntNetoIvaTasaMin)
	add("Neto IVA "+rate(basicRate), t.MntNetoIVATasaBasica)
	add("Neto IVA otra tasa", t.MntNetoIVAOtra)
	add("IVA "+rate(minRate), t.MntIVATasaMin)
	add("IVA "+rate(basicRate), t.MntIVATasaBasica)
	add("IVA otra tasa", t.MntIVAOtra)
	if t.MntTotal != nil && (t.MntPagar == nil || !t.MntTotal.Equal(*t.MntPagar)) {
		out = append(out, fact{label: "Total", value: moneyIn(cur, *t.MntTotal), strong: true})
	}
	for _, rp := range t.RetencPercep {
		out = append(out, fact{label: "Retención / percepción " + rp.CodRet, value: moneyIn(cur, rp.ValRetPerc)})
	}
	add("Total retenido / percibido", t.MntTotRetenido)
	add("Crédito fiscal", t.MntTotCredFisc)
	add("Monto no facturable", t.MontoNF)
	if t.MntPagar != nil {
		out = append(out, fact{label: "Total a pagar", value: moneyIn(cur, *t.MntPagar), strong: true})
	}
	return out
}

// references lists zone F: the documents a note corrects or a collection
// collects.
func references(c *cfe.CFE) []string {
	var out []string
	for _, ref := range c.Referencias {
		if ref.IndGlobal == 1 {
			out = append(out, joinNonEmpty(": ", "Referencia global", ref.RazonRef))
			continue
		}
		s := joinNonEmpty(" ", ref.TpoDocRef.Name(), ref.Serie+"-"+itoa(ref.NroCFERef))
		if ref.FechaCFEref != nil {
			s += " del " + date(*ref.FechaCFEref)
		}
		out = append(out, joinNonEmpty(": ", s, ref.RazonRef))
	}
	return out
}

func firstOf(values ...string) string {
	for _, v := range values {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}

func joinNonEmpty(sep string, parts ...string) string {
	kept := parts[:0:0]
	for _, p := range parts {
		if p = strings.TrimSpace(p); p != "" {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, sep)
}

func prefixed(prefix, s string) string {
	if strings.TrimSpace(s) == "" {
		return ""
	}
	return prefix + s
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
