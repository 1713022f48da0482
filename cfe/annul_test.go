package cfe_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/cfe-agent/cfe-agent/cfe"
)

func dec(s string) decimal.Decimal   { return decimal.RequireFromString(s) }
func decp(s string) *decimal.Decimal { v := dec(s); return &v }
func datep(d cfe.Date) *cfe.Date     { return &d }

var (
	origDate  = cfe.Date{Year: 2025, Month: time.March, Day: 10} // FchEmis of every original below
	annulDate = cfe.Date{Year: 2025, Month: time.March, Day: 20} // date of the counter-receipts
)

// issued returns the parts every original below shares: issued as A-1234 on
// origDate, signed, with its CAE, a due date and an internal number.
func issued(tipo cfe.Type) *cfe.CFE {
	return &cfe.CFE{
		TmstFirma: time.Date(2025, time.March, 10, 14, 5, 0, 0, cfe.Montevideo),
		IdDoc: cfe.IdDoc{
			TipoCFE: tipo, Serie: "A", Nro: 1234, NroInterno: "POS-88", FchEmis: origDate,
			FchVenc: datep(cfe.Date{Year: 2025, Month: time.April, Day: 10}),
		},
		Emisor: cfe.Emisor{
			RUCEmisor: "219999830019", RznSoc: "Comercio de Prueba S.A.", Telefono: []string{"2900 0000"},
			CdgDGISucur: 1, DomFiscal: "Av. 18 de Julio 1234", Ciudad: "Montevideo", Departamento: "Montevideo",
		},
		Receptor: &cfe.Receptor{TipoDocRecep: 2, CodPaisRecep: "UY", DocRecep: "210000000017",
			RznSocRecep: "Cliente S.R.L.", DirRecep: "Rincón 500", CiudadRecep: "Montevideo"},
		CAEData: cfe.CAEData{CAEID: "90250000123", DNro: 1, HNro: 5000,
			FecVenc: cfe.Date{Year: 2026, Month: time.December, Day: 31}},
		Adenda: "Gracias por su compra",
	}
}

// sale is a document or note in dollars with two lines whose prices include
// IVA (MntBruto 1) and a global discount. Totals worked out by hand:
//
//	line 1, IndFact 3 (basic rate, 22 %): 2 × 61.00 = 122.00
//	global discount 12.20 on IndFact 3: 122.00 − 12.20 = 109.80 = 90.00 net + 19.80 IVA
//	line 2, IndFact 2 (minimum rate, 10 %): 1 × 55.00 = 55.00 = 50.00 net + 5.00 IVA
//	MntTotal = 90.00 + 50.00 + 19.80 + 5.00 = 164.80 = MntPagar
//
// A note references the document it corrects.
func sale(tipo cfe.Type) *cfe.CFE {
	c := issued(tipo)
	c.IdDoc.MntBruto, c.IdDoc.FmaPago = 1, 2
	c.Totales = cfe.Totales{
		TpoMoneda: "USD", TpoCambio: decp("39.512"),
		MntNetoIvaTasaMin: decp("50.00"), MntNetoIVATasaBasica: decp("90.00"),
		IVATasaMin: decp("10"), IVATasaBasica: decp("22"),
		MntIVATasaMin: decp("5.00"), MntIVATasaBasica: decp("19.80"),
		MntTotal: decp("164.80"), CantLinDet: 2, MntPagar: decp("164.80"),
	}
	c.Items = []cfe.Item{
		{NroLinDet: 1, CodItem: []cfe.CodItem{{TpoCod: "INT1", Cod: "Y-17"}}, IndFact: 3, NomItem: "Yerba 1 kg",
			Cantidad: dec("2"), UniMed: "N/A", PrecioUnitario: dec("61.00"), MontoItem: dec("122.00")},
		{NroLinDet: 2, IndFact: 2, NomItem: "Pan", Cantidad: dec("1"), UniMed: "N/A",
			PrecioUnitario: dec("55.00"), MontoItem: dec("55.00")},
	}
	c.DscRcgGlobal = []cfe.GlobalAdjust{{NroLinDR: 1, TpoMovDR: "D", TpoDR: 1, GlosaDR: "Descuento socio",
		ValorDR: dec("12.20"), IndFactDR: 3}}
	c.MediosPago = []cfe.MedioPago{{NroLinMP: 1, CodMP: 1, GlosaMP: "Efectivo", ValorPago: dec("164.80")}}
	if info, _ := tipo.Info(); info.IsNote() {
		c.Referencias = []cfe.Referencia{{NroLinRef: 1, TpoDocRef: info.Base, Serie: "A", NroCFERef: 1000,
			RazonRef: "Devolución", FechaCFEref: datep(cfe.Date{Year: 2025, Month: time.March, Day: 1})}}
	}
	return c
}

// wantCounter describes the counter-receipt a test expects.
type wantCounter struct {
	tipo      cfe.Type
	cobPropia int
	indFact   []int // IndFact of each line, in order
	razon     string
}

// annul runs CounterReceipt on fixture() and checks what every counter-receipt
// must satisfy: its type, indicators and single reference; numbering, CAE and
// signature time left for the issuer; everything else copied; and the original
// untouched, then and after every value of the result is changed.
func annul(t *testing.T, fixture func() *cfe.CFE, w wantCounter) *cfe.CFE {
	t.Helper()
	orig := fixture()
	got, err := cfe.CounterReceipt(orig, annulDate)
	if err != nil {
		t.Fatalf("CounterReceipt: %v", err)
	}
	if got.Type() != w.tipo {
		t.Errorf("TipoCFE = %d, want %d", got.Type(), w.tipo)
	}
	if got.IdDoc.IndCobPropia != w.cobPropia {
		t.Errorf("IndCobPropia = %d, want %d", got.IdDoc.IndCobPropia, w.cobPropia)
	}
	if len(got.Items) != len(w.indFact) {
		t.Fatalf("%d lines, want %d", len(got.Items), len(w.indFact))
	}
	for i, it := range got.Items {
		if it.IndFact != w.indFact[i] {
			t.Errorf("line %d: IndFact = %d, want %d", i+1, it.IndFact, w.indFact[i])
		}
		// Apart from the indicator, the line is the original's.
		it.IndFact = orig.Items[i].IndFact
		if !reflect.DeepEqual(it, orig.Items[i]) {
			t.Errorf("line %d = %+v, want the original's %+v", i+1, it, orig.Items[i])
		}
	}

	d := got.IdDoc
	if d.Serie != "" || d.Nro != 0 || d.NroInterno != "" || !got.TmstFirma.IsZero() || got.CAEData != (cfe.CAEData{}) {
		t.Errorf("numbering, signature time or CAE set: %q %d %q %v %+v", d.Serie, d.Nro, d.NroInterno, got.TmstFirma, got.CAEData)
	}
	if d.FchEmis != annulDate || d.FchVenc != nil {
		t.Errorf("FchEmis = %s, FchVenc = %v; want %s and no due date", d.FchEmis, d.FchVenc, annulDate)
	}
	if !reflect.DeepEqual(got.Emisor, orig.Emisor) || !reflect.DeepEqual(got.Receptor, orig.Receptor) {
		t.Errorf("emitter or receptor changed: %+v %+v", got.Emisor, got.Receptor)
	}
	if got.Totales.TpoMoneda != orig.Totales.TpoMoneda || !reflect.DeepEqual(got.Totales.TpoCambio, orig.Totales.TpoCambio) {
		t.Errorf("currency %s %v, want %s %v", got.Totales.TpoMoneda, got.Totales.TpoCambio, orig.Totales.TpoMoneda, orig.Totales.TpoCambio)
	}
	if got.Totales.CantLinDet != orig.Totales.CantLinDet {
		t.Errorf("CantLinDet = %d, want %d", got.Totales.CantLinDet, orig.Totales.CantLinDet)
	}
	if !reflect.DeepEqual(got.DscRcgGlobal, orig.DscRcgGlobal) || !reflect.DeepEqual(got.MediosPago, orig.MediosPago) ||
		got.Adenda != orig.Adenda {
		t.Errorf("global adjustments, payment means or Adenda not copied")
	}

	wantRef := []cfe.Referencia{{NroLinRef: 1, TpoDocRef: orig.Type(), Serie: orig.IdDoc.Serie,
		NroCFERef: orig.IdDoc.Nro, RazonRef: w.razon, FechaCFEref: datep(orig.IdDoc.FchEmis)}}
	if !reflect.DeepEqual(got.Referencias, wantRef) {
		t.Errorf("Referencias = %+v\nwant the single %+v", got.Referencias, wantRef[0])
	}

	if !reflect.DeepEqual(orig, fixture()) {
		t.Errorf("the original was modified")
	}
	result := got.Clone() // for the caller's own checks
	scribbleCFE(got)
	if !reflect.DeepEqual(orig, fixture()) {
		t.Errorf("the counter-receipt shares memory with the original")
	}
	return result
}

func checkAmount(t *testing.T, name string, got *decimal.Decimal, want string) {
	t.Helper()
	switch {
	case got == nil:
		t.Errorf("%s absent, want %s", name, want)
	case !got.Equal(dec(want)):
		t.Errorf("%s = %s, want %s", name, got, want)
	}
}

// Rules 1 and 2: documents are cancelled by the credit note of their family,
// credit notes by debit notes and debit notes by credit notes; a contingency
// receipt by the electronic type.
func TestCounterReceipt_Notes(t *testing.T) {
	t.Parallel()
	cases := []struct{ orig, want cfe.Type }{
		{101, 102}, {111, 112}, {121, 122}, {131, 132}, {141, 142}, {151, 152},
		{102, 103}, {103, 102}, {112, 113}, {113, 112}, {122, 123}, {123, 122},
		{132, 133}, {133, 132}, {142, 143}, {143, 142}, {152, 153}, {153, 152},
		{201, 102}, {211, 112}, {221, 122}, {231, 132}, {241, 142}, {251, 152},
		{202, 103}, {203, 102}, {212, 113}, {213, 112}, {222, 123}, {223, 122},
		{232, 133}, {233, 132}, {242, 143}, {243, 142}, {252, 153}, {253, 152},
	}
	for _, c := range cases {
		t.Run(c.orig.String(), func(t *testing.T) {
			fixture := func() *cfe.CFE { return sale(c.orig) }
			got := annul(t, fixture, wantCounter{tipo: c.want, indFact: []int{3, 2}, razon: "Anulación"})
			if !reflect.DeepEqual(got.Totales, fixture().Totales) {
				t.Errorf("Totales = %+v\nwant the original's", got.Totales)
			}
			checkAmount(t, "MntTotal", got.Totales.MntTotal, "164.80")
			checkAmount(t, "MntPagar", got.Totales.MntPagar, "164.80")
		})
	}
}

func TestCounterReceipt_SameDayAsOriginal(t *testing.T) {
	t.Parallel()
	got, err := cfe.CounterReceipt(sale(101), origDate)
	if err != nil {
		t.Fatalf("a counter-receipt dated the day of the original: %v", err)
	}
	if got.IdDoc.FchEmis != origDate {
		t.Errorf("FchEmis = %s, want %s", got.IdDoc.FchEmis, origDate)
	}
}

// remito is an e-Remito (or its contingency form) moving two goods; inds are
// the lines' IndFact (0: an ordinary line, 8: a line deducted).
func remito(tipo cfe.Type, inds ...int) *cfe.CFE {
	c := issued(tipo)
	c.IdDoc.FchVenc = nil
	c.IdDoc.TipoTraslado = 1
	c.Items = []cfe.Item{
		{NroLinDet: 1, IndFact: inds[0], NomItem: "Caja de yerba", Cantidad: dec("10"), UniMed: "caja"},
		{NroLinDet: 2, IndFact: inds[1], NomItem: "Bolsa de azúcar", Cantidad: dec("5"), UniMed: "bol"},
	}
	c.Totales = cfe.Totales{CantLinDet: 2} // an e-Remito's only total
	return c
}

// Rule 3, e-Remito: a correction of the same type deducting every line.
func TestCounterReceipt_Remito(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		orig        cfe.Type
		inds, wantI []int
		tipo        cfe.Type
	}{
		{"deducts every line", 181, []int{0, 0}, []int{8, 8}, 181},
		{"undoes a deduction", 181, []int{8, 8}, []int{0, 0}, 181},
		{"mixed lines", 181, []int{0, 8}, []int{8, 0}, 181},
		{"contingency", 281, []int{0, 0}, []int{8, 8}, 181},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fixture := func() *cfe.CFE { return remito(c.orig, c.inds...) }
			got := annul(t, fixture, wantCounter{tipo: c.tipo, indFact: c.wantI, razon: "Anulación"})
			if !reflect.DeepEqual(got.Totales, cfe.Totales{CantLinDet: 2}) {
				t.Errorf("Totales = %+v, want only CantLinDet 2", got.Totales)
			}
			checkIndFactAllowed(t, got)
		})
	}
}

// remitoExp is an e-Remito de Exportación: line 1 ships 4 × 250.00 = 1000.00,
// line 2 ships free samples (2 × 0.00). With both lines ordinary, MntExpoyAsim =
// MntTotal = 1000.00; with both deducted (IndFact 8), 0 − 1000.00 = −1000.00.
func remitoExp(tipo cfe.Type, deducted bool) *cfe.CFE {
	c := issued(tipo)
	c.IdDoc.FchVenc = nil
	c.IdDoc.TipoTraslado, c.IdDoc.ClauVenta, c.IdDoc.ModVenta, c.IdDoc.ViaTransp = 1, "FOB", 1, 1
	c.Receptor = &cfe.Receptor{TipoDocRecep: 4, CodPaisRecep: "AR", DocRecepExt: "30-12345678-9",
		RznSocRecep: "Importadora S.A.", DirRecep: "Florida 100", CiudadRecep: "Buenos Aires", PaisRecep: "Argentina"}
	c.Items = []cfe.Item{
		{NroLinDet: 1, NomItem: "Lana lavada", Cantidad: dec("4"), UniMed: "fdo",
			PrecioUnitario: dec("250.00"), MontoItem: dec("1000.00")},
		{NroLinDet: 2, IndFact: 5, NomItem: "Muestras", Cantidad: dec("2"), UniMed: "u",
			PrecioUnitario: dec("0"), MontoItem: dec("0")},
	}
	total := "1000.00"
	if deducted {
		c.Items[0].IndFact, c.Items[1].IndFact = 8, 8
		total = "-1000.00"
	}
	c.Totales = cfe.Totales{TpoMoneda: "USD", TpoCambio: decp("39.512"),
		MntExpoyAsim: decp(total), MntTotal: decp(total), CantLinDet: 2}
	return c
}

// Rule 3, e-Remito de Exportación: lines deducted with IndFact 8, and the
// signed totals follow (V24 A-C113: items minus items with IndFact 8).
func TestCounterReceipt_RemitoExportacion(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		orig     cfe.Type
		deducted bool
		wantI    []int
		tipo     cfe.Type
		total    string
	}{
		// 0 − (1000.00 + 0.00)
		{"deducts every line", 124, false, []int{8, 8}, 124, "-1000.00"},
		// A deducted line comes back ordinary; the free one (unit price 0) as 5.
		{"undoes a deduction", 124, true, []int{0, 5}, 124, "1000.00"},
		{"contingency", 224, false, []int{8, 8}, 124, "-1000.00"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fixture := func() *cfe.CFE { return remitoExp(c.orig, c.deducted) }
			got := annul(t, fixture, wantCounter{tipo: c.tipo, indFact: c.wantI, razon: "Anulación"})
			checkAmount(t, "MntExpoyAsim", got.Totales.MntExpoyAsim, c.total)
			checkAmount(t, "MntTotal", got.Totales.MntTotal, c.total)
			checkIndFactAllowed(t, got)
		})
	}
}

// resguardo is an e-Resguardo with two lines:
//
//	line 1: IVA retention 2183010 of 132.00
//	line 2: IVA retention 2183010 of 66.00 and fiscal credit 2181411 of 18.00
//
// Totals per code (V24 A-C128: lines minus lines with IndFact 9), with ordinary
// lines: 2183010 = 198.00, 2181411 = 18.00, MntTotRetenido 198.00 (codes not
// 2181xxx), MntTotCredFisc 18.00; with both lines annulled, the negatives.
func resguardo(tipo cfe.Type, annulled bool) *cfe.CFE {
	c := issued(tipo)
	c.IdDoc.FchVenc = nil
	c.IdDoc.FchValor = datep(cfe.Date{Year: 2025, Month: time.March, Day: 5})
	ret := func(code, base, val string) cfe.ItemRetPerc {
		return cfe.ItemRetPerc{CodRet: code, MntSujetoaRet: decp(base), ValRetPerc: dec(val)}
	}
	c.Items = []cfe.Item{
		{NroLinDet: 1, RetencPercep: []cfe.ItemRetPerc{ret("2183010", "1000.00", "132.00")}},
		{NroLinDet: 2, RetencPercep: []cfe.ItemRetPerc{ret("2183010", "500.00", "66.00"), ret("2181411", "200.00", "18.00")}},
	}
	sign := ""
	if annulled {
		c.Items[0].IndFact, c.Items[1].IndFact = 9, 9
		sign = "-"
	}
	c.Totales = cfe.Totales{TpoMoneda: "UYU", MntTotRetenido: decp(sign + "198.00"), MntTotCredFisc: decp(sign + "18.00"),
		CantLinDet: 2, RetencPercep: []cfe.RetPerc{
			{CodRet: "2183010", ValRetPerc: dec(sign + "198.00")},
			{CodRet: "2181411", ValRetPerc: dec(sign + "18.00")},
		}}
	return c
}

// Rule 3, e-Resguardo: lines annulled with IndFact 9; the retention totals
// turn negative while the lines' own values stay positive (MontoType).
func TestCounterReceipt_Resguardo(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name          string
		orig          cfe.Type
		annulled      bool
		wantI         []int
		tipo          cfe.Type
		ret, credFisc string
	}{
		{"annuls every line", 182, false, []int{9, 9}, 182, "-198.00", "-18.00"},
		{"undoes an annulment", 182, true, []int{0, 0}, 182, "198.00", "18.00"},
		{"contingency", 282, false, []int{9, 9}, 182, "-198.00", "-18.00"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fixture := func() *cfe.CFE { return resguardo(c.orig, c.annulled) }
			got := annul(t, fixture, wantCounter{tipo: c.tipo, indFact: c.wantI, razon: "Anulación"})
			checkAmount(t, "MntTotRetenido", got.Totales.MntTotRetenido, c.ret)
			checkAmount(t, "MntTotCredFisc", got.Totales.MntTotCredFisc, c.credFisc)
			rp := got.Totales.RetencPercep
			if len(rp) != 2 || rp[0].CodRet != "2183010" || rp[1].CodRet != "2181411" {
				t.Fatalf("RetencPercep = %+v, want codes 2183010 and 2181411", rp)
			}
			checkAmount(t, "RetencPercep 2183010", &rp[0].ValRetPerc, c.ret)
			checkAmount(t, "RetencPercep 2181411", &rp[1].ValRetPerc, c.credFisc)
			if got.IdDoc.FchValor == nil || *got.IdDoc.FchValor != *resguardo(c.orig, c.annulled).IdDoc.FchValor {
				t.Errorf("FchValor = %v, want the original's", got.IdDoc.FchValor)
			}
			checkIndFactAllowed(t, got)
		})
	}
}

// nfLine is a non-billable line of an own collection: IndFact 6 or 7 and its amount.
type nfLine struct {
	ind    int
	amount string
}

// collection is an own collection (IndCobPropia 1) that references the
// e-Factura it collects, A-1200; every line is non-billable, so MntTotal is 0
// and the caller gives MontoNF and MntPagar, worked out by hand.
func collection(tipo cfe.Type, lines []nfLine, montoNF, mntPagar string) *cfe.CFE {
	c := issued(tipo)
	c.IdDoc.FmaPago, c.IdDoc.IndCobPropia = 1, 1
	for i, l := range lines {
		c.Items = append(c.Items, cfe.Item{NroLinDet: i + 1, IndFact: l.ind, NomItem: "Cobranza e-Factura A-1200",
			Cantidad: dec("1"), UniMed: "N/A", PrecioUnitario: dec(l.amount), MontoItem: dec(l.amount)})
	}
	c.Totales = cfe.Totales{TpoMoneda: "UYU", MntTotal: decp("0.00"), CantLinDet: len(lines),
		MontoNF: decp(montoNF), MntPagar: decp(mntPagar)}
	c.Referencias = []cfe.Referencia{{NroLinRef: 1, TpoDocRef: 111, Serie: "A", NroCFERef: 1200,
		RazonRef: "Cobranza", FechaCFEref: datep(cfe.Date{Year: 2025, Month: time.February, Day: 20})}}
	return c
}

// Rule 4: an own collection is cancelled by the same type, IndCobPropia 1,
// lines IndFact 7 and a negative MontoNF, with a single reference to the
// collection (not to the invoice it collected).
func TestCounterReceipt_OwnCollection(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name              string
		orig, tipo        cfe.Type
		lines             []nfLine
		origNF, origPagar string
		wantI             []int
		nf, pagar         string
	}{
		// MontoNF = 0 − 1500.00; MntPagar = MntTotal 0 + MontoNF.
		{"e-Ticket", 101, 101, []nfLine{{6, "1500.00"}}, "1500.00", "1500.00", []int{7}, "-1500.00", "-1500.00"},
		{"e-Factura", 111, 111, []nfLine{{6, "1500.00"}}, "1500.00", "1500.00", []int{7}, "-1500.00", "-1500.00"},
		{"e-Ticket cuenta ajena", 131, 131, []nfLine{{6, "1500.00"}}, "1500.00", "1500.00", []int{7}, "-1500.00", "-1500.00"},
		{"e-Factura cuenta ajena", 141, 141, []nfLine{{6, "1500.00"}}, "1500.00", "1500.00", []int{7}, "-1500.00", "-1500.00"},
		{"e-Ticket contingency", 201, 101, []nfLine{{6, "1500.00"}}, "1500.00", "1500.00", []int{7}, "-1500.00", "-1500.00"},
		{"e-Factura contingency", 211, 111, []nfLine{{6, "1500.00"}}, "1500.00", "1500.00", []int{7}, "-1500.00", "-1500.00"},
		// A collection of 1500.00 less a 200.00 rebate: MontoNF 1500 − 200 = 1300.
		// Cancelled: 200.00 − 1500.00 = −1300.00.
		{"collection with a rebate", 111, 111, []nfLine{{6, "1500.00"}, {7, "200.00"}}, "1300.00", "1300.00",
			[]int{7, 6}, "-1300.00", "-1300.00"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fixture := func() *cfe.CFE { return collection(c.orig, c.lines, c.origNF, c.origPagar) }
			got := annul(t, fixture, wantCounter{tipo: c.tipo, cobPropia: 1, indFact: c.wantI, razon: "Anulación de cobranza"})
			checkAmount(t, "MontoNF", got.Totales.MontoNF, c.nf)
			checkAmount(t, "MntPagar", got.Totales.MntPagar, c.pagar)
			checkAmount(t, "MntTotal", got.Totales.MntTotal, "0")
			checkIndFactAllowed(t, got)
		})
	}
}

// Rule 5: the cancellation of a collection (its line IndFact 7, MontoNF
// −1500.00, MntPagar written as 0, as DGI allows when negative) is reverted
// with IndFact 6, MontoNF +1500.00, MntPagar 0 + 1500.00, and a single
// reference to the cancellation.
func TestCounterReceipt_RevertsCollectionCancellation(t *testing.T) {
	t.Parallel()
	fixture := func() *cfe.CFE {
		c := collection(101, []nfLine{{7, "1500.00"}}, "-1500.00", "0.00")
		c.IdDoc.Nro = 1250
		c.Referencias = []cfe.Referencia{{NroLinRef: 1, TpoDocRef: 101, Serie: "A", NroCFERef: 1240,
			RazonRef: "Anulación de cobranza", FechaCFEref: datep(cfe.Date{Year: 2025, Month: time.March, Day: 2})}}
		return c
	}
	got := annul(t, fixture, wantCounter{tipo: 101, cobPropia: 1, indFact: []int{6}, razon: "Reversión de anulación de cobranza"})
	checkAmount(t, "MontoNF", got.Totales.MontoNF, "1500.00")
	checkAmount(t, "MntPagar", got.Totales.MntPagar, "1500.00")
	if r := got.Referencias; len(r) != 1 || r[0].NroCFERef != 1250 {
		t.Errorf("Referencias = %+v, want only the cancellation A-1250", r)
	}
	checkIndFactAllowed(t, got)
}

// Cancelling a correction (rules 3 to 5) and then cancelling that restores the
// lines and the signed totals of the original.
func TestCounterReceipt_TwiceRestoresOriginal(t *testing.T) {
	t.Parallel()
	originals := map[string]*cfe.CFE{
		"collection":              collection(101, []nfLine{{6, "1500.00"}, {7, "200.00"}}, "1300.00", "1300.00"),
		"e-Remito":                remito(181, 0, 8),
		"e-Remito de Exportación": remitoExp(124, false),
		"e-Resguardo":             resguardo(182, false),
	}
	for name, orig := range originals {
		t.Run(name, func(t *testing.T) {
			first, err := cfe.CounterReceipt(orig, annulDate)
			if err != nil {
				t.Fatal(err)
			}
			first.IdDoc.Serie, first.IdDoc.Nro = "A", 1300 // as the issuer numbers it
			second, err := cfe.CounterReceipt(first, annulDate)
			if err != nil {
				t.Fatal(err)
			}
			if second.Type() != orig.Type() || !reflect.DeepEqual(second.Items, orig.Items) {
				t.Errorf("type %d, lines %+v\nwant the original's %d, %+v", second.Type(), second.Items, orig.Type(), orig.Items)
			}
			if r := second.Referencias; len(r) != 1 || r[0].NroCFERef != 1300 {
				t.Errorf("Referencias = %+v, want only A-1300", r)
			}
			for _, amt := range []struct {
				name      string
				got, want *decimal.Decimal
			}{
				{"MontoNF", second.Totales.MontoNF, orig.Totales.MontoNF},
				{"MntPagar", second.Totales.MntPagar, orig.Totales.MntPagar},
				{"MntExpoyAsim", second.Totales.MntExpoyAsim, orig.Totales.MntExpoyAsim},
				{"MntTotal", second.Totales.MntTotal, orig.Totales.MntTotal},
				{"MntTotRetenido", second.Totales.MntTotRetenido, orig.Totales.MntTotRetenido},
				{"MntTotCredFisc", second.Totales.MntTotCredFisc, orig.Totales.MntTotCredFisc},
			} {
				if (amt.got == nil) != (amt.want == nil) || (amt.got != nil && !amt.got.Equal(*amt.want)) {
					t.Errorf("%s = %v, want %v", amt.name, amt.got, amt.want)
				}
			}
		})
	}
}

func TestCounterReceipt_Errors(t *testing.T) {
	t.Parallel()
	withLines := func(c *cfe.CFE, inds ...int) *cfe.CFE {
		for i := range c.Items {
			c.Items[i].IndFact = inds[i]
		}
		return c
	}
	cases := []struct {
		name   string
		orig   func() *cfe.CFE
		fecha  cfe.Date
		fields []string // Campo of every error, in any order
		msg    string   // part of the first error's Mensaje
	}{
		{"no original", func() *cfe.CFE { return nil }, annulDate, []string{"comprobante"}, "no se indicó"},
		{"unknown type", func() *cfe.CFE { return sale(999) }, annulDate, []string{"TipoCFE"}, "no existe"},
		{"collection on a credit note", func() *cfe.CFE {
			return collection(102, []nfLine{{6, "10.00"}}, "10.00", "10.00")
		}, annulDate, []string{"IndCobPropia"}, "101, 111, 131, 141"},
		{"collection on an e-Boleta", func() *cfe.CFE {
			return collection(151, []nfLine{{6, "10.00"}}, "10.00", "10.00")
		}, annulDate, []string{"IndCobPropia"}, "cobranza propia"},
		{"IndCobPropia other than 1", func() *cfe.CFE {
			c := collection(101, []nfLine{{6, "10.00"}}, "10.00", "10.00")
			c.IdDoc.IndCobPropia = 2
			return c
		}, annulDate, []string{"IndCobPropia"}, "solo se admite 1"},
		{"collection with a taxed line", func() *cfe.CFE {
			return collection(101, []nfLine{{6, "10.00"}, {3, "5.00"}}, "10.00", "15.00")
		}, annulDate, []string{"Item[2].IndFact"}, "6 o 7"},
		{"collection line without IndFact", func() *cfe.CFE {
			return collection(131, []nfLine{{0, "10.00"}}, "0.00", "0.00")
		}, annulDate, []string{"Item[1].IndFact"}, "6 o 7 (la línea tiene ninguno)"},
		{"collection with a global discount", func() *cfe.CFE {
			c := collection(111, []nfLine{{6, "10.00"}}, "9.00", "9.00")
			c.DscRcgGlobal = []cfe.GlobalAdjust{{NroLinDR: 1, TpoMovDR: "D", TpoDR: 1, GlosaDR: "x", ValorDR: dec("1.00"), IndFactDR: 6}}
			return c
		}, annulDate, []string{"DscRcgGlobal"}, "descuentos"},
		{"e-Remito line with IndFact 3", func() *cfe.CFE { return remito(181, 0, 3) },
			annulDate, []string{"Item[2].IndFact"}, "8 o ninguno"},
		{"e-Remito de Exportación line with IndFact 10", func() *cfe.CFE { return withLines(remitoExp(124, false), 10, 5) },
			annulDate, []string{"Item[1].IndFact"}, "5, 8 o ninguno"},
		{"e-Resguardo line with IndFact 8", func() *cfe.CFE { return withLines(resguardo(182, false), 8, 0) },
			annulDate, []string{"Item[1].IndFact"}, "9 o ninguno"},
		{"not issued", func() *cfe.CFE {
			c := sale(111)
			c.IdDoc.Serie, c.IdDoc.Nro = "", 0
			return c
		}, annulDate, []string{"Serie", "Nro"}, "no fue emitido"},
		{"no lines", func() *cfe.CFE {
			c := sale(111)
			c.Items = nil
			return c
		}, annulDate, []string{"Detalle"}, "líneas"},
		{"no date", func() *cfe.CFE { return sale(101) }, cfe.Date{}, []string{"fecha"}, "obligatoria"},
		{"date that does not exist", func() *cfe.CFE { return sale(101) },
			cfe.Date{Year: 2025, Month: time.February, Day: 30}, []string{"fecha"}, "2025-02-30"},
		{"date before the original", func() *cfe.CFE { return sale(101) },
			cfe.Date{Year: 2025, Month: time.March, Day: 9}, []string{"fecha"}, "anterior"},
		{"several at once", func() *cfe.CFE {
			c := collection(101, []nfLine{{6, "10.00"}, {1, "5.00"}}, "10.00", "15.00")
			c.IdDoc.Nro = 0
			return c
		}, cfe.Date{}, []string{"Nro", "fecha", "Item[2].IndFact"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			orig := c.orig()
			got, err := cfe.CounterReceipt(orig, c.fecha)
			if got != nil {
				t.Errorf("a counter-receipt came back with the error: %+v", got)
			}
			if cfe.ErrorCode(err) != cfe.EINVALID || cfe.RespuestaOf(err) != cfe.RespRechazoValidacion {
				t.Fatalf("error %v: code %q, respuesta %q; want %q, %q", err, cfe.ErrorCode(err),
					cfe.RespuestaOf(err), cfe.EINVALID, cfe.RespRechazoValidacion)
			}
			fields := cfe.ErrorFields(err)
			var campos []string
			for _, f := range fields {
				campos = append(campos, f.Campo)
				if f.Mensaje == "" {
					t.Errorf("%s: empty message", f.Campo)
				}
			}
			if !slices.Equal(slices.Sorted(slices.Values(campos)), slices.Sorted(slices.Values(c.fields))) {
				t.Errorf("fields %v, want %v (%v)", campos, c.fields, err)
			}
			if len(fields) > 0 && !strings.Contains(fields[0].Mensaje, c.msg) {
				t.Errorf("message %q does not say %q", fields[0].Mensaje, c.msg)
			}
			if !reflect.DeepEqual(orig, c.orig()) {
				t.Errorf("the original was modified")
			}
		})
	}
}
