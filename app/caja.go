package app

import (
	"cmp"
	"context"
	"slices"
	"strconv"

	"github.com/shopspring/decimal"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/dgi"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
	"github.com/cfe-agent/cfe-agent/store"
)

// The shop's own screens (/caja, localapi.Caja): finding any receipt (GET
// /comprobantes, over store.Search), the day's close (GET /cierre), DGI's
// state of each receipt with what its codes mean, and the manual sale
// (caja_sale.go).

// defaultPage is the page size of /comprobantes when the caller names none.
const defaultPage = 20

// Comprobantes answers GET /comprobantes: one page of the receipts q
// selects, newest first, every one read from the store (live or archived).
//
// Errors: EINVALID for a query the store refuses; EUNAVAILABLE when the
// store cannot be read now.
func (f *Facade) Comprobantes(ctx context.Context, q apitype.ComprobantesQuery) (*apitype.Comprobantes, error) {
	q.Pagina = cmp.Or(q.Pagina, 1)
	q.PorPagina = cmp.Or(q.PorPagina, defaultPage)
	res, err := f.a.DB.Search(ctx, store.SearchQuery{From: q.Desde, To: q.Hasta, Type: q.Tipo, Serie: q.Serie,
		Nro: q.Numero, Text: q.Texto, Page: q.Pagina, PageSize: q.PorPagina})
	if err != nil {
		return nil, err
	}
	out := &apitype.Comprobantes{Total: res.Total, Pagina: q.Pagina, PorPagina: q.PorPagina, Limitado: res.Limited,
		Comprobantes: make([]apitype.Comprobante, 0, len(res.CFEs))}
	for _, is := range res.CFEs {
		out.Comprobantes = append(out.Comprobantes, f.comprobante(ctx, is))
	}
	return out, nil
}

// comprobante writes out one receipt found: its XML gives the currency, the
// receiver and the lines; the store its delivery and DGI state.
func (f *Facade) comprobante(ctx context.Context, is *cfe.Issued) apitype.Comprobante {
	c := apitype.Comprobante{UUID: is.UUID, TipoCFE: is.Type, Nombre: is.Type.Name(), Serie: is.Serie, Numero: is.Nro,
		FechaFirma: is.TmstFirma.In(cfe.Montevideo), Moneda: cfe.CurrencyUYU, Total: is.Total,
		Envio: is.Delivery.State, IDServicio: is.Delivery.HostedID, Items: []string{}}
	if st, err := cfe.ReadSearchText(is.XML); err == nil {
		c.Moneda = st.Currency
		if st.Receiver != "" || st.Document != "" {
			c.Receptor = &apitype.Receptor{Nombre: st.Receiver, Documento: st.Document}
		}
		if st.Items != nil {
			c.Items = st.Items
		}
	}
	if t, err := cfe.ReadIssuedTotal(is.XML); err == nil {
		c.Total = t.MntTotal
	}
	if st, err := f.a.DB.DGIState(ctx, is.Type, is.Serie, is.Nro); err == nil {
		c.DGI = dgiView(st)
	}
	return c
}

// dgiView writes out DGI's state of one receipt, with the meaning of each
// of DGI's codes and what to do.
func dgiView(st cfe.DGICFE) *apitype.ComprobanteDGI {
	v := &apitype.ComprobanteDGI{Estado: st.State, Explicacion: dgiExplanations[st.State]}
	for _, r := range st.Reasons {
		m := apitype.MotivoDGI{Codigo: r.Codigo, Glosa: r.Glosa, Detalle: r.Detalle}
		if m.Glosa == "" {
			m.Glosa = cmp.Or(dgi.CFERejections[r.Codigo], dgi.CFCObservations[r.Codigo])
		}
		if h, ok := dgiCodeHelp[r.Codigo]; ok {
			m.Significado, m.QueHacer = h[0], h[1]
		} else {
			m.Significado = "DGI indicó un código que el agente no conoce."
			m.QueHacer = "Consulte a su proveedor de facturación electrónica con el código y el detalle."
		}
		v.Motivos = append(v.Motivos, m)
	}
	return v
}

// dgiExplanations say what each DGI state means for the shop.
var dgiExplanations = map[string]string{
	cfe.DGIPending:    "Todavía no se envió a DGI; el agente lo enviará en el próximo sobre.",
	cfe.DGIInEnvelope: "Está en un sobre que se está enviando a DGI.",
	cfe.DGISent:       "DGI recibió el sobre; falta su respuesta sobre este comprobante.",
	cfe.DGIAccepted:   "DGI lo aceptó.",
	cfe.DGIRejected:   "DGI lo rechazó: el comprobante no es válido y su número quedó anulado. Vea el motivo y qué hacer.",
	cfe.DGIObserved:   "DGI observó este comprobante de contingencia. Vea el motivo y qué hacer.",
	cfe.DGIUnknown:    "Se envió a DGI y no llegó una respuesta confiable; el agente consulta a DGI antes de reenviarlo.",
}

// dgiCodeHelp is, for DGI's codes of rejected CFEs (RESP 4.3, E01–E15) and
// observed contingency receipts (RESP 4.4, C03–C15), what the code means
// and what the shop should do, in Spanish.
var dgiCodeHelp = map[string][2]string{
	"E01": {"DGI ya tenía ese tipo y número informado como anulado.", "Emita un nuevo comprobante por la venta; no reutilice el número."},
	"E02": {"DGI ya tiene un comprobante con ese tipo y número: el número quedó usado.", "Verifique en DGI si el comprobante que tiene es este; si lo es, no hay que hacer nada. Si no, consulte a su proveedor."},
	"E03": {"El tipo y número no corresponden al CAE (rango autorizado) con que se firmó.", "Revise los rangos de CAE cargados en el agente (cfe-agent cae) y emita un nuevo comprobante por la venta."},
	"E04": {"La firma electrónica no es válida para DGI.", "Verifique el certificado del perfil (cfe-agent doctor) y emita un nuevo comprobante por la venta."},
	"E05": {"El comprobante no cumple las validaciones de formato de DGI.", "Lea el detalle de DGI, corrija los datos de la venta y emita un nuevo comprobante."},
	"E06": {"El importe excede los montos habituales para DGI.", "Verifique el importe; si es correcto, comuníquese con DGI. Si no, emita un nuevo comprobante corregido."},
	"E07": {"La fecha de firma no está dentro de la vigencia del CAE.", "Verifique la fecha y hora del equipo y los vencimientos de CAE, y emita un nuevo comprobante por la venta."},
	"E08": {"El RUC del comprobante no coincide con el del complemento fiscal.", "Corrija el RUC del complemento fiscal y emita un nuevo comprobante."},
	"E09": {"El RUC emisor o el tipo de comprobante no corresponden al CAE.", "Revise que los CAE cargados sean los de esta empresa y este tipo, y emita un nuevo comprobante."},
	"E10": {"El tipo de cambio informado no es válido.", "Corrija el tipo de cambio de la moneda y emita un nuevo comprobante."},
	"E11": {"El tipo de CAE especial no corresponde al CAE usado.", "Consulte a su proveedor; emita un nuevo comprobante con el CAE que corresponde."},
	"E12": {"El comprobante que se referencia no existe en los registros de DGI.", "Verifique la referencia (tipo, serie y número del comprobante original) y emita un nuevo comprobante."},
	"E13": {"El tipo de CAE del comprobante no corresponde al CAE utilizado.", "Consulte a su proveedor; emita un nuevo comprobante con el CAE que corresponde."},
	"E14": {"DGI detectó irregularidades.", "Comuníquese con DGI antes de volver a emitir."},
	"E15": {"La empresa figura como deudor contumaz sin informar su situación.", "Regularice la situación ante DGI; luego emita un nuevo comprobante."},
	"C03": {"La constancia de contingencia no está autorizada según DGI.", "Verifique la constancia usada y comuníquese con DGI."},
	"C04": {"La firma electrónica del comprobante de contingencia no es válida.", "Verifique el certificado (cfe-agent doctor) y consulte a su proveedor."},
	"C05": {"El comprobante de contingencia no cumple las validaciones de formato.", "Lea el detalle de DGI y corrija los datos al ingresarlo."},
	"C06": {"El importe excede los montos habituales.", "Verifique el importe; si es correcto, comuníquese con DGI."},
	"C08": {"El RUC no coincide con el del complemento fiscal.", "Corrija el RUC del complemento fiscal."},
	"C09": {"El número del comprobante de contingencia no fue autorizado.", "Verifique la numeración de contingencia usada y comuníquese con DGI."},
	"C10": {"El tipo de cambio no es válido.", "Corrija el tipo de cambio."},
	"C11": {"El tipo de constancia especial no corresponde a la constancia.", "Consulte a su proveedor."},
	"C12": {"La referencia no existe en los registros de DGI.", "Verifique el comprobante referenciado."},
	"C13": {"El tipo de constancia no corresponde a la constancia.", "Consulte a su proveedor."},
	"C14": {"DGI detectó irregularidades.", "Comuníquese con DGI."},
	"C15": {"La empresa figura como deudor contumaz sin informar su situación.", "Regularice la situación ante DGI."},
}

// maxCloseRead bounds the receipts one close reads.
const maxCloseRead = 200000

// Cierre answers GET /cierre: the day's receipts (signature date, in
// Montevideo) added up per till (serie and CodSuc), by type, currency,
// means of payment and IVA rate, credit notes subtracted.
//
// Errors: EINVALID for a missing date; EUNAVAILABLE when the store cannot be
// read now.
func (f *Facade) Cierre(ctx context.Context, day cfe.Date) (*apitype.Cierre, error) {
	if day.IsZero() {
		return nil, &cfe.Error{Code: cfe.EINVALID, Op: "app.Cierre", Message: "falta la fecha del cierre",
			Fields: []cfe.FieldError{{Campo: "fecha", Mensaje: "es obligatoria (AAAA-MM-DD)"}}}
	}
	list, err := f.a.DB.ListByDate(ctx, day, day, maxCloseRead)
	if err != nil {
		return nil, err
	}
	out := closeOf(day, list)
	out.Reporte = f.dayReport(ctx, day)
	return out, nil
}

// dayReport is the state of day's report to DGI from a.ReportDays (direct
// mode: the store's report states; provider mode: the hosted service's),
// nil when the agent knows none for the day. A state that cannot be read
// is logged and left out: the close is the shop's totals and stands
// without it.
func (f *Facade) dayReport(ctx context.Context, day cfe.Date) *apitype.DailyReportReport {
	if f.a.ReportDays == nil {
		return nil
	}
	days, err := f.a.ReportDays.DailyReports(ctx, f.now())
	if err != nil {
		f.a.Log.Warn("the close cannot read the daily reports' states", "fecha", day.String(), "err", err)
		return nil
	}
	for _, s := range days {
		if s.Date == day {
			r := apitype.DailyReportOf(s)
			return &r
		}
	}
	return nil
}

// tillKey names a till: its serie and CodSuc.
type tillKey struct {
	serie  string
	codSuc int
}

// closeOf adds up the receipts of one day. A contingency receipt DGI
// observed and that was keyed in again corrected (CorrectedBy) is counted
// once, as its correction, as the daily report counts it.
func closeOf(day cfe.Date, list []*cfe.Issued) *apitype.Cierre {
	list = slices.DeleteFunc(slices.Clone(list), func(is *cfe.Issued) bool { return is.CorrectedBy != "" })
	out := &apitype.Cierre{Fecha: day.String(), Cantidad: len(list), Cajas: []apitype.CierreCaja{}, Totales: []apitype.CierreMoneda{}}
	tills := map[tillKey]*apitype.CierreCaja{}
	all := newNets()
	nets := map[tillKey]*nets{}
	for _, is := range list {
		doc, err := cfe.ParseXML(is.XML)
		var k tillKey
		if err == nil {
			k = tillKey{is.Serie, doc.Emisor.CdgDGISucur}
		} else {
			k = tillKey{is.Serie, 0}
		}
		till := tills[k]
		if till == nil {
			till = &apitype.CierreCaja{Serie: k.serie, CodSuc: k.codSuc, Tipos: []apitype.CierreTipo{}}
			tills[k], nets[k] = till, newNets()
		}
		till.Cantidad++
		sign := cfe.SaleSign(is.Type)
		currency, total := cfe.CurrencyUYU, is.Total
		if err == nil {
			currency = doc.Totales.Currency()
			if doc.Totales.MntTotal != nil {
				total = *doc.Totales.MntTotal
			}
		}
		addType(till, is.Type, sign, currency, total)
		if sign == 0 || err != nil {
			continue
		}
		nets[k].add(doc, currency, total, sign)
		all.add(doc, currency, total, sign)
	}
	keys := make([]tillKey, 0, len(tills))
	for k := range tills {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b tillKey) int { return cmp.Or(cmp.Compare(a.serie, b.serie), cmp.Compare(a.codSuc, b.codSuc)) })
	for _, k := range keys {
		t := tills[k]
		slices.SortFunc(t.Tipos, func(a, b apitype.CierreTipo) int { return cmp.Compare(a.TipoCFE, b.TipoCFE) })
		t.Neto = nets[k].view()
		out.Cajas = append(out.Cajas, *t)
	}
	out.Totales = all.view()
	return out
}

// addType counts one receipt of type t in its till.
func addType(till *apitype.CierreCaja, t cfe.Type, sign int, currency string, total decimal.Decimal) {
	i := slices.IndexFunc(till.Tipos, func(x apitype.CierreTipo) bool { return x.TipoCFE == t })
	if i < 0 {
		till.Tipos = append(till.Tipos, apitype.CierreTipo{TipoCFE: t, Nombre: t.Name(), Signo: sign, Montos: []apitype.CierreImporte{}})
		i = len(till.Tipos) - 1
	}
	ty := &till.Tipos[i]
	ty.Cantidad++
	j := slices.IndexFunc(ty.Montos, func(m apitype.CierreImporte) bool { return m.Moneda == currency })
	if j < 0 {
		ty.Montos = append(ty.Montos, apitype.CierreImporte{Moneda: currency})
		j = len(ty.Montos) - 1
	}
	ty.Montos[j].Cantidad++
	ty.Montos[j].Total = ty.Montos[j].Total.Add(total)
}

// nets are net amounts by currency, with their breakdowns.
type nets struct {
	order []string
	by    map[string]*netAmount
}

type netAmount struct {
	total     decimal.Decimal
	payOrder  []string
	pay       map[string]decimal.Decimal
	rateOrder []string
	rate      map[string][2]decimal.Decimal // net, tax
}

func newNets() *nets { return &nets{by: map[string]*netAmount{}} }

func (n *nets) get(currency string) *netAmount {
	x := n.by[currency]
	if x == nil {
		x = &netAmount{pay: map[string]decimal.Decimal{}, rate: map[string][2]decimal.Decimal{}}
		n.by[currency] = x
		n.order = append(n.order, currency)
	}
	return x
}

// add adds one receipt, with sign (1 a sale, -1 a credit note).
func (n *nets) add(doc *cfe.CFE, currency string, total decimal.Decimal, sign int) {
	s := decimal.NewFromInt(int64(sign))
	x := n.get(currency)
	x.total = x.total.Add(total.Mul(s))
	if len(doc.MediosPago) > 0 {
		// The lines say what was tendered: cash above the total is change
		// given back. Each line counts up to what is left of the total;
		// what no line covers is listed apart.
		left := total
		for _, mp := range doc.MediosPago {
			v := decimal.Min(mp.ValorPago, decimal.Max(left, decimal.Zero))
			left = left.Sub(v)
			x.addPay(cmp.Or(mp.GlosaMP, "Medio de pago "+strconv.Itoa(mp.CodMP)), v.Mul(s))
		}
		if left.IsPositive() {
			x.addPay("Sin detallar", left.Mul(s))
		}
	} else {
		name := "Contado"
		switch doc.IdDoc.FmaPago {
		case 2:
			name = "Crédito"
		case 0:
			name = "Sin forma de pago"
		}
		x.addPay(name, total.Mul(s))
	}
	t := doc.Totales
	for _, r := range []struct {
		name     string
		net, tax *decimal.Decimal
	}{
		{"básica", t.MntNetoIVATasaBasica, t.MntIVATasaBasica},
		{"mínima", t.MntNetoIvaTasaMin, t.MntIVATasaMin},
		{"otra", t.MntNetoIVAOtra, t.MntIVAOtra},
		{"no gravado", t.MntNoGrv, nil},
		{"exportación y asimiladas", t.MntExpoyAsim, nil},
		{"percibido", t.MntImpuestoPerc, nil},
		{"en suspenso", t.MntIVaenSusp, nil},
	} {
		if r.net == nil && r.tax == nil {
			continue
		}
		var nv, tv decimal.Decimal
		if r.net != nil {
			nv = r.net.Mul(s)
		}
		if r.tax != nil {
			tv = r.tax.Mul(s)
		}
		x.addRate(r.name, nv, tv)
	}
}

func (x *netAmount) addPay(name string, v decimal.Decimal) {
	if _, ok := x.pay[name]; !ok {
		x.payOrder = append(x.payOrder, name)
	}
	x.pay[name] = x.pay[name].Add(v)
}

func (x *netAmount) addRate(name string, nv, tv decimal.Decimal) {
	cur, ok := x.rate[name]
	if !ok {
		x.rateOrder = append(x.rateOrder, name)
	}
	x.rate[name] = [2]decimal.Decimal{cur[0].Add(nv), cur[1].Add(tv)}
}

// view writes the nets out, currencies in order (UYU first).
func (n *nets) view() []apitype.CierreMoneda {
	order := slices.Clone(n.order)
	slices.SortStableFunc(order, func(a, b string) int {
		switch {
		case a == b:
			return 0
		case a == cfe.CurrencyUYU:
			return -1
		case b == cfe.CurrencyUYU:
			return 1
		}
		return cmp.Compare(a, b)
	})
	out := make([]apitype.CierreMoneda, 0, len(order))
	for _, c := range order {
		x := n.by[c]
		m := apitype.CierreMoneda{Moneda: c, Total: x.total, MediosPago: []apitype.CierreLinea{}, IVA: []apitype.CierreIVA{}}
		for _, p := range x.payOrder {
			m.MediosPago = append(m.MediosPago, apitype.CierreLinea{Nombre: p, Total: x.pay[p]})
		}
		for _, r := range x.rateOrder {
			m.IVA = append(m.IVA, apitype.CierreIVA{Tasa: r, Neto: x.rate[r][0], Impuesto: x.rate[r][1]})
		}
		out = append(out, m)
	}
	return out
}
