package pdf

import (
	"strconv"
	"strings"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/shopspring/decimal"
)

// Fixtures: documents of every CFE type, written by hand. Totals are worked
// out with DGI's formulas (Formato de los CFE v24, zone A C112-C130) in the
// comments; the texts tests look for are derived from those numbers.

func num(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func numP(s string) *decimal.Decimal { v := num(s); return &v }

var (
	fixtureTmst = time.Date(2026, time.March, 14, 10, 30, 0, 0, cfe.Montevideo)
	fixtureDay  = cfe.Date{Year: 2026, Month: time.March, Day: 14}
)

// fixture is a realistic document of type t. What each type prints
// (fixtureText) follows from it.
func fixture(t cfe.Type) *cfe.CFE {
	info, _ := t.Info()
	c := &cfe.CFE{
		TmstFirma: fixtureTmst,
		IdDoc:     cfe.IdDoc{TipoCFE: t, Serie: "A", Nro: 42, FchEmis: fixtureDay},
		Emisor: cfe.Emisor{RUCEmisor: "219999830019", RznSoc: "Almacén La Esquina S.A.", NomComercial: "La Esquina",
			CdgDGISucur: 1, DomFiscal: "Av. 18 de Julio 1234", Ciudad: "Montevideo", Departamento: "Montevideo"},
		CAEData: cfe.CAEData{CAEID: "90260000123", DNro: 1, HNro: 1000,
			FecVenc: cfe.Date{Year: 2028, Month: time.March, Day: 1}},
	}
	if info.IsNote() {
		c.Referencias = []cfe.Referencia{{NroLinRef: 1, TpoDocRef: info.Base, Serie: "A", NroCFERef: 41,
			RazonRef: "Devolución", FechaCFEref: &cfe.Date{Year: 2026, Month: time.March, Day: 13}}}
	}
	rucBuyer := &cfe.Receptor{TipoDocRecep: 2, CodPaisRecep: "UY", DocRecep: "214844360018",
		RznSocRecep: "Distribuidora del Sur S.R.L.", DirRecep: "Colonia 1234", CiudadRecep: "Montevideo"}
	foreign := &cfe.Receptor{TipoDocRecep: 4, CodPaisRecep: "AR", DocRecepExt: "30712345671",
		RznSocRecep: "Textil Andina S.A.", DirRecep: "Av. Corrientes 1234", CiudadRecep: "Buenos Aires",
		PaisRecep: "Argentina"}

	switch info.Element {
	case cfe.ElemTicket, cfe.ElemFactura:
		// Prices include IVA (MntBruto 1).
		c.IdDoc.MntBruto, c.IdDoc.FmaPago = 1, 1
		c.Items = []cfe.Item{
			{NroLinDet: 1, IndFact: 3, NomItem: "Yerba mate 1 kg", Cantidad: num("2"), UniMed: "Unid",
				PrecioUnitario: num("183"), MontoItem: num("366")}, // 2 × 183
			{NroLinDet: 2, IndFact: 2, NomItem: "Pan flauta", Cantidad: num("1.5"), UniMed: "kg",
				PrecioUnitario: num("110"), MontoItem: num("165")}, // 1.5 × 110
			{NroLinDet: 3, IndFact: 1, NomItem: "Bolsa compostable", Cantidad: num("1"), UniMed: "Unid",
				PrecioUnitario: num("5"), MontoItem: num("5")},
		}
		c.Totales = cfe.Totales{TpoMoneda: "UYU",
			MntNoGrv:             numP("5"),   // IndFact 1
			MntNetoIvaTasaMin:    numP("150"), // 165 / 1.10
			MntNetoIVATasaBasica: numP("300"), // 366 / 1.22
			IVATasaMin:           numP("10"), IVATasaBasica: numP("22"),
			MntIVATasaMin:    numP("15"),  // 150 × 10 %
			MntIVATasaBasica: numP("66"),  // 300 × 22 %
			MntTotal:         numP("536"), // 5 + 150 + 300 + 15 + 66
			CantLinDet:       3,
			MntPagar:         numP("536")}
		if info.Element == cfe.ElemFactura {
			c.IdDoc.FmaPago = 2
			c.IdDoc.FchVenc = &cfe.Date{Year: 2026, Month: time.April, Day: 13}
			c.Receptor = rucBuyer
		}
		if b := info.Base % 100; b == 31 || b == 41 { // venta por cuenta ajena
			c.ComplFiscal = &cfe.ComplFiscal{RUCEmisor: "219999830019", TipoDocMdte: 2, Pais: "UY",
				DocMdte: "211111110017", NombreMdte: "Mandante S.A."}
		}
	case cfe.ElemFacturaExp:
		c.IdDoc.FmaPago, c.IdDoc.ClauVenta, c.IdDoc.ModVenta, c.IdDoc.ViaTransp = 1, "FOB", 1, 1
		c.Items = []cfe.Item{{NroLinDet: 1, IndFact: 10, NomItem: "Lana lavada", Cantidad: num("500"), UniMed: "kg",
			PrecioUnitario: num("4.5"), MontoItem: num("2250")}} // 500 × 4.5
		c.Totales = cfe.Totales{TpoMoneda: "USD", TpoCambio: numP("39.512"), MntExpoyAsim: numP("2250"),
			MntTotal: numP("2250"), CantLinDet: 1, MntPagar: numP("2250")}
		c.Receptor = foreign
	case cfe.ElemRemito:
		c.IdDoc.TipoTraslado = 1
		c.Items = []cfe.Item{
			{NroLinDet: 1, NomItem: "Cajas de manzanas", Cantidad: num("40"), UniMed: "caja"},
			{NroLinDet: 2, NomItem: "Bolsas de papas", Cantidad: num("12"), UniMed: "Unid"},
		}
		c.Totales = cfe.Totales{CantLinDet: 2}
		c.Receptor = rucBuyer
	case cfe.ElemRemitoExp:
		c.IdDoc.TipoTraslado, c.IdDoc.ModVenta, c.IdDoc.ViaTransp, c.IdDoc.ClauVenta = 1, 1, 1, "FOB"
		c.Items = []cfe.Item{{NroLinDet: 1, NomItem: "Lana lavada", Cantidad: num("500"), UniMed: "kg",
			PrecioUnitario: num("4.5"), MontoItem: num("2250")}} // 500 × 4.5
		c.Totales = cfe.Totales{TpoMoneda: "USD", TpoCambio: numP("39.512"), MntExpoyAsim: numP("2250"),
			MntTotal: numP("2250"), CantLinDet: 1}
		c.Receptor = foreign
	case cfe.ElemResguardo:
		// Two lines retained at 50 %: 22 000 → 11 000 and 88 000 → 44 000.
		ret := func(line int, base, value string) cfe.Item {
			return cfe.Item{NroLinDet: line, RetencPercep: []cfe.ItemRetPerc{{CodRet: "2183165", Tasa: numP("50"),
				MntSujetoaRet: numP(base), ValRetPerc: num(value)}}}
		}
		c.Items = []cfe.Item{ret(1, "22000", "11000"), ret(2, "88000", "44000")}
		c.Totales = cfe.Totales{TpoMoneda: "UYU", MntTotRetenido: numP("55000"), CantLinDet: 2, // 11 000 + 44 000
			RetencPercep: []cfe.RetPerc{{CodRet: "2183165", ValRetPerc: num("55000")}}}
		c.Receptor = &cfe.Receptor{TipoDocRecep: 2, CodPaisRecep: "UY", DocRecep: "214844360018",
			RznSocRecep: "Estudio Contable Pérez"}
	case cfe.ElemBoleta:
		// Bought from an IVA mínimo taxpayer (IndFact 14): MntNoGrv = 100 × 30.
		c.IdDoc.FmaPago = 1
		c.Items = []cfe.Item{{NroLinDet: 1, IndFact: 14, NomItem: "Lana sucia", Cantidad: num("100"), UniMed: "kg",
			PrecioUnitario: num("30"), MontoItem: num("3000")}}
		c.Totales = cfe.Totales{TpoMoneda: "UYU", MntNoGrv: numP("3000"), MntTotal: numP("3000"), CantLinDet: 1,
			MntPagar: numP("3000")}
		c.Receptor = &cfe.Receptor{TipoDocRecep: 2, CodPaisRecep: "UY", DocRecep: "214844360018",
			RznSocRecep: "Pedro Rodríguez"}
	}
	return c
}

// fixtureText lists texts the printed fixture of type t must show: the
// emitter, the document's identification, the receptor box, the totals and
// the CAE data.
func fixtureText(t cfe.Type) []string {
	info, _ := t.Info()
	want := []string{"Almacén La Esquina S.A.", "RUC 219999830019", "Serie A Nº 42", "14/03/2026",
		"CAE Nº 90260000123", "Serie A del 1 al 1000", "Fecha de vencimiento", "01/03/2028", "Código de seguridad"}
	// Long type names may wrap on a roll; the words are checked one by one.
	want = append(want, strings.Fields(info.Name)...)
	switch info.Element {
	case cfe.ElemTicket:
		want = append(want, "CONSUMO FINAL", "Contado", "UYU 536,00", "Neto IVA 22 %", "UYU 300,00", "IVA 22 %",
			"UYU 66,00", "Neto IVA 10 %", "UYU 150,00", "UYU 15,00", "Monto no gravado", "UYU 5,00", "Total a pagar",
			"Yerba mate 1 kg", "366,00")
	case cfe.ElemFactura:
		want = append(want, "RUC COMPRADOR", "214844360018", "Distribuidora del Sur S.R.L.", "Crédito", "13/04/2026",
			"UYU 536,00", "UYU 300,00", "UYU 66,00", "Total a pagar")
	case cfe.ElemFacturaExp:
		want = append(want, "RECEPTOR", "Textil Andina S.A.", "(AR)", "FOB", "Exportación y asimiladas",
			"USD 2.250,00", "39,512")
	case cfe.ElemRemitoExp:
		want = append(want, "RECEPTOR", "Textil Andina S.A.", "USD 2.250,00")
	case cfe.ElemRemito:
		want = append(want, "RUC COMPRADOR", "214844360018", "Cajas de manzanas", "40 caja", "Venta")
	case cfe.ElemResguardo:
		want = append(want, "RUC COMPRADOR", "Estudio Contable Pérez", "Código 2183165", "50 %", "22.000,00",
			"11.000,00", "44.000,00", "UYU 55.000,00")
	case cfe.ElemBoleta:
		want = append(want, "RUC VENDEDOR", "Pedro Rodríguez", "UYU 3.000,00", "Total a pagar")
	}
	if info.IsNote() {
		want = append(want, "Referencias", info.Base.Name(), "A-41", "13/03/2026")
	}
	return want
}

// manyLines returns an e-Factura of n lines of 122,00 each (IndFact 3,
// prices with IVA).
func manyLines(n int) *cfe.CFE {
	c := fixture(cfe.EFactura)
	c.Items = nil
	for i := 1; i <= n; i++ {
		c.Items = append(c.Items, cfe.Item{NroLinDet: i, IndFact: 3, NomItem: "Artículo número " + strconv.Itoa(i),
			Cantidad: num("1"), UniMed: "Unid", PrecioUnitario: num("122"), MontoItem: num("122")})
	}
	// Each line: 122 with IVA = 100 net + 22 IVA.
	total := decimal.NewFromInt(int64(122 * n))
	c.Totales = cfe.Totales{TpoMoneda: "UYU",
		MntNetoIVATasaBasica: numP(strconv.Itoa(100 * n)), IVATasaMin: numP("10"), IVATasaBasica: numP("22"),
		MntIVATasaBasica: numP(strconv.Itoa(22 * n)), MntTotal: &total, CantLinDet: n, MntPagar: &total}
	return c
}
