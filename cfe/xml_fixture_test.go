package cfe_test

import (
	"testing"
	"time"

	"github.com/beevik/etree"
	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/shopspring/decimal"
)

// Fixtures: model documents of every CFE type, written by hand. Amounts are
// worked out from DGI's formulas (Formato de los CFE v24, zone A C112-C130)
// in the comments next to them; they are never copied from the code's output.

func num(s string) decimal.Decimal { return decimal.RequireFromString(s) }

func numP(s string) *decimal.Decimal { v := num(s); return &v }

func dateP(y int, m time.Month, d int) *cfe.Date { return &cfe.Date{Year: y, Month: m, Day: d} }

var (
	fixtureTmst = time.Date(2026, time.March, 14, 10, 30, 0, 0, cfe.Montevideo)
	fixtureDay  = cfe.Date{Year: 2026, Month: time.March, Day: 14}
)

// minimalCFE returns a document of type t with only what CFEType.xsd requires
// for it: no receptor, no optional element. Its one line is a free gift
// (IndFact 5, price 0) where the type has prices, so all totals are 0.
func minimalCFE(t cfe.Type) *cfe.CFE {
	info, _ := t.Info()
	c := &cfe.CFE{
		TmstFirma: fixtureTmst,
		IdDoc:     cfe.IdDoc{TipoCFE: t, Serie: "A", Nro: 42, FchEmis: fixtureDay},
		Emisor: cfe.Emisor{RUCEmisor: "219999830019", RznSoc: "Almacén La Esquina S.A.", CdgDGISucur: 1,
			DomFiscal: "Av. 18 de Julio 1234", Ciudad: "Montevideo", Departamento: "Montevideo"},
		CAEData: cfe.CAEData{CAEID: "90260000123", DNro: 1, HNro: 1000,
			FecVenc: cfe.Date{Year: 2028, Month: time.March, Day: 1}},
	}
	gift := cfe.Item{NroLinDet: 1, IndFact: 5, NomItem: "Bolsa reutilizable", Cantidad: num("1"),
		UniMed: "Unid", PrecioUnitario: num("0"), MontoItem: num("0")}
	switch info.Element {
	case cfe.ElemTicket, cfe.ElemFactura, cfe.ElemBoleta:
		c.IdDoc.FmaPago = 1
		c.Items = []cfe.Item{gift}
		c.Totales = cfe.Totales{TpoMoneda: "UYU", MntTotal: numP("0"), CantLinDet: 1, MntPagar: numP("0")}
	case cfe.ElemFacturaExp:
		c.IdDoc.FmaPago, c.IdDoc.ClauVenta, c.IdDoc.ViaTransp = 1, "FOB", 1
		c.Items = []cfe.Item{gift}
		c.Totales = cfe.Totales{TpoMoneda: "UYU", MntExpoyAsim: numP("0"), MntTotal: numP("0"), CantLinDet: 1, MntPagar: numP("0")}
	case cfe.ElemRemito:
		c.IdDoc.TipoTraslado = 1
		c.Items = []cfe.Item{{NroLinDet: 1, NomItem: "Cajas de manzanas", Cantidad: num("40"), UniMed: "caja"}}
		c.Totales = cfe.Totales{CantLinDet: 1}
	case cfe.ElemRemitoExp:
		// IndFact is optional here, and a line has a price: 500 × 4.5 = 2250.
		c.IdDoc.TipoTraslado, c.IdDoc.ModVenta, c.IdDoc.ViaTransp = 1, 1, 1
		c.Items = []cfe.Item{{NroLinDet: 1, NomItem: "Lana lavada", Cantidad: num("500"), UniMed: "kg",
			PrecioUnitario: num("4.5"), MontoItem: num("2250")}}
		c.Totales = cfe.Totales{TpoMoneda: "UYU", MntExpoyAsim: numP("2250"), MntTotal: numP("2250"), CantLinDet: 1}
	case cfe.ElemResguardo:
		// A line needs only its number; the totals need one RetencPercep.
		c.Items = []cfe.Item{{NroLinDet: 1}}
		c.Totales = cfe.Totales{TpoMoneda: "UYU", MntTotRetenido: numP("0"), CantLinDet: 1,
			RetencPercep: []cfe.RetPerc{{CodRet: "2183165", ValRetPerc: num("0")}}}
	}
	return c
}

// fullCFE returns a realistic document of type t that also carries every
// optional element the type's schema allows (so that their order is checked
// against the XSD). Its totals are consistent with its lines. A few
// indicators are set only to exercise the schema and would need matching
// lines under DGI's business rules: IVAalDia, SecProf, IndCobPropia,
// ModVenta on sales, IndCompraMEReventa, and Compl_Fiscal outside "cuenta
// ajena" types. IndFact 9 (resguardo annulment lines) is left out: DGI does
// not say how such a line counts in the totals.
func fullCFE(t cfe.Type) *cfe.CFE {
	info, _ := t.Info()
	c := minimalCFE(t)
	c.Emisor = cfe.Emisor{RUCEmisor: "219999830019", RznSoc: "Almacén La Esquina S.A.", NomComercial: "La Esquina",
		GiroEmis: "Venta de alimentos", Telefono: []string{"29001234", "099123456"},
		CorreoEmisor: "ventas@laesquina.com.uy", EmiSucursal: "Centro", CdgDGISucur: 1,
		DomFiscal: "Av. 18 de Julio 1234", Ciudad: "Montevideo", Departamento: "Montevideo",
		InfoAdicionalEmisor: "Horario 8 a 20"}
	c.IdDoc.NroInterno = "V-2026-000042"
	c.IdDoc.InfoAdicionalDoc = "Pedido web 5531"
	c.IdDoc.SecProf = 1
	c.SubTotInfo = []cfe.SubTotal{{NroSTI: 1, GlosaSTI: "Subtotal de la sección", OrdenSTI: 1, ValSubtotSTI: num("10")}}
	c.Referencias = []cfe.Referencia{
		{NroLinRef: 1, TpoDocRef: info.Base, Serie: "A", NroCFERef: 41, RazonRef: "Ajuste de precio",
			FechaCFEref: dateP(2026, time.March, 13)},
		{NroLinRef: 2, IndGlobal: 1, RazonRef: "Remitos en papel de marzo"},
	}
	usd := func(tot *cfe.Totales) { tot.TpoMoneda, tot.TpoCambio = "USD", numP("39.512") }

	switch info.Element {
	case cfe.ElemTicket, cfe.ElemFactura:
		fullSale(c)
		usd(&c.Totales)
		if info.Element == cfe.ElemTicket {
			c.Receptor = &cfe.Receptor{TipoDocRecep: 3, CodPaisRecep: "UY", DocRecep: "12345672"}
		} else {
			c.Receptor = &cfe.Receptor{TipoDocRecep: 2, CodPaisRecep: "UY", DocRecep: "214844360018"}
		}
		fullAddress(c.Receptor, "Distribuidora del Sur S.R.L.")
		c.ComplFiscal = fullComplFiscal()
	case cfe.ElemBoleta:
		fullBoleta(c)
		usd(&c.Totales)
		c.Receptor = &cfe.Receptor{TipoDocRecep: 3, CodPaisRecep: "UY", DocRecep: "12345672"}
		fullAddress(c.Receptor, "Pedro Rodríguez")
		c.ComplFiscal = fullComplFiscal()
	case cfe.ElemFacturaExp:
		fullFacturaExp(c)
		usd(&c.Totales)
		c.Receptor = foreignReceptor()
		c.CAEData.CAEEspecial, c.CAEData.CausalCAEEsp = 1, 101
	case cfe.ElemRemito:
		fullRemito(c)
		c.Receptor = &cfe.Receptor{TipoDocRecep: 2, CodPaisRecep: "UY", DocRecep: "214844360018"}
		fullAddress(c.Receptor, "Distribuidora del Sur S.R.L.")
		c.CAEData.CAEEspecial, c.CAEData.CausalCAEEsp = 1, 101
	case cfe.ElemRemitoExp:
		fullRemitoExp(c)
		usd(&c.Totales)
		c.Receptor = foreignReceptor()
		c.CAEData.CAEEspecial, c.CAEData.CausalCAEEsp = 1, 101
	case cfe.ElemResguardo:
		fullResguardo(c)
		usd(&c.Totales)
		c.Receptor = &cfe.Receptor{TipoDocRecep: 2, CodPaisRecep: "UY", DocRecep: "214844360018"}
		fullAddress(c.Receptor, "Estudio Contable Pérez")
		c.Receptor.LugarDestEnt, c.Receptor.CompraID = "", "" // Receptor_Resg has neither
		c.CAEData.CAEEspecial, c.CAEData.CausalCAEEsp = 1, 101
	}
	return c
}

func fullAddress(r *cfe.Receptor, name string) {
	r.RznSocRecep, r.DirRecep, r.CiudadRecep, r.DeptoRecep = name, "Colonia 1234 apto. 5", "Montevideo", "Montevideo"
	r.PaisRecep, r.CP, r.InfoAdicional = "Uruguay", "11100", "Cliente frecuente"
	r.LugarDestEnt, r.CompraID = "Depósito de Colonia 1234", "OC-7781"
}

func foreignReceptor() *cfe.Receptor {
	return &cfe.Receptor{TipoDocRecep: 4, CodPaisRecep: "AR", DocRecepExt: "30712345671",
		RznSocRecep: "Textil Andina S.A.", DirRecep: "Av. Corrientes 1234", CiudadRecep: "Buenos Aires",
		DeptoRecep: "CABA", PaisRecep: "Argentina", CP: "1043", InfoAdicional: "Importador habitual",
		LugarDestEnt: "Puerto de Buenos Aires", CompraID: "PO-2026-118"}
}

func fullComplFiscal() *cfe.ComplFiscal {
	return &cfe.ComplFiscal{RUCEmisor: "219999830019", TipoDocMdte: 2, Pais: "UY",
		DocMdte: "214844360018", NombreMdte: "Mandante S.A."}
}

// fullSale fills an e-Ticket or e-Factura whose prices include IVA (MntBruto 1).
func fullSale(c *cfe.CFE) {
	d := &c.IdDoc
	d.PeriodoDesde, d.PeriodoHasta = dateP(2026, time.March, 1), dateP(2026, time.March, 31)
	d.MntBruto, d.FmaPago, d.FchVenc = 1, 2, dateP(2026, time.April, 13)
	d.ModVenta, d.IVAalDia, d.IndPagCta3ros, d.IndCobPropia = 90, 1, 1, 1
	c.Items = []cfe.Item{
		// Basic rate: 2 × 18.30 = 36.60, less 10 % = 3.66, gives 32.94.
		// With a 2 % perception on 32.94 = 0.6588 → 0.66.
		{NroLinDet: 1, CodItem: []cfe.CodItem{{TpoCod: "GTIN13", Cod: "7730205012340"}, {TpoCod: "INT1", Cod: "YER-1"}},
			IndFact: 3, IndAgenteResp: "R", NomItem: "Yerba mate 1 kg", DscItem: "Molienda tradicional",
			Cantidad: num("2"), UniMed: "Unid", PrecioUnitario: num("18.3"),
			DescuentoPct: numP("10"), DescuentoMonto: numP("3.66"), SubDescuento: []cfe.SubAdjust{{Tipo: 2, Val: num("10")}},
			RetencPercep: []cfe.ItemRetPerc{{CodRet: "9999001", Tasa: numP("2"), MntSujetoaRet: numP("32.94"),
				InfoAdicionalRet: "Tasa municipal", ValRetPerc: num("0.66")}},
			MontoItem: num("32.94")},
		// Minimum rate: 1.5 × 11 = 16.50, plus 10 % = 1.65, gives 18.15.
		{NroLinDet: 2, IndFact: 2, NomItem: "Pan flauta", Cantidad: num("1.5"), UniMed: "kg", PrecioUnitario: num("11"),
			RecargoPct: numP("10"), RecargoMnt: numP("1.65"), SubRecargo: []cfe.SubAdjust{{Tipo: 1, Val: num("1.65")}},
			MontoItem: num("18.15")},
		// Not billable: 1 × 0.50.
		{NroLinDet: 3, IndFact: 6, NomItem: "Envase retornable", Cantidad: num("1"), UniMed: "Unid",
			PrecioUnitario: num("0.5"), MontoItem: num("0.5")},
	}
	// A global discount of 0.20 on the not-billable line: MontoNF = 0.50 − 0.20 = 0.30.
	c.DscRcgGlobal = []cfe.GlobalAdjust{{NroLinDR: 1, TpoMovDR: "D", TpoDR: 1, CodDR: 1,
		GlosaDR: "Devolución de envase", ValorDR: num("0.2"), IndFactDR: 6}}
	c.Totales = cfe.Totales{
		MntNoGrv: numP("0"), MntExpoyAsim: numP("0"), MntImpuestoPerc: numP("0"), MntIVaenSusp: numP("0"),
		MntNetoIvaTasaMin:    numP("16.5"), // 18.15 / 1.10
		MntNetoIVATasaBasica: numP("27"),   // 32.94 / 1.22
		MntNetoIVAOtra:       numP("0"),
		IVATasaMin:           numP("10"), IVATasaBasica: numP("22"),
		MntIVATasaMin:    numP("1.65"), // 16.50 × 10 %
		MntIVATasaBasica: numP("5.94"), // 27 × 22 %
		MntIVAOtra:       numP("0"),
		MntTotal:         numP("51.09"), // 16.50 + 27 + 1.65 + 5.94 (= 32.94 + 18.15)
		MntTotRetenido:   numP("0.66"),  // code 9999001 is not a 2181xxx crédito fiscal code
		MntTotCredFisc:   numP("0"),
		CantLinDet:       3,
		RetencPercep:     []cfe.RetPerc{{CodRet: "9999001", ValRetPerc: num("0.66")}},
		MontoNF:          numP("0.3"),
		MntPagar:         numP("52.05"), // 51.09 + 0.66 + 0.30
	}
	c.MediosPago = []cfe.MedioPago{
		{NroLinMP: 1, CodMP: 1, GlosaMP: "Efectivo", OrdenMP: 1, ValorPago: num("20")},
		{NroLinMP: 2, CodMP: 2, GlosaMP: "Tarjeta de débito", OrdenMP: 2, ValorPago: num("32.05")}, // 20 + 32.05 = 52.05
	}
}

// fullBoleta fills an e-Boleta de entrada (the emitter buys) whose lines
// include IMEBA (MntBruto 2).
func fullBoleta(c *cfe.CFE) {
	d := &c.IdDoc
	d.PeriodoDesde, d.PeriodoHasta = dateP(2026, time.March, 1), dateP(2026, time.March, 31)
	d.MntBruto, d.FmaPago, d.FchVenc, d.IndCompraMEReventa = 2, 2, dateP(2026, time.April, 13), 1
	c.Items = []cfe.Item{
		// Seller not a taxpayer: 100 × 2.50 = 250, less 2 % = 5, gives 245.
		// IMEBA retained 2.5 % of 245 = 6.125 → 6.13.
		{NroLinDet: 1, CodItem: []cfe.CodItem{{TpoCod: "INT1", Cod: "LANA-01"}}, IndFact: 13, IndAgenteResp: "R",
			NomItem: "Lana sucia", DscItem: "Vellón merino", Cantidad: num("100"), UniMed: "kg", PrecioUnitario: num("2.5"),
			DescuentoPct: numP("2"), DescuentoMonto: numP("5"), SubDescuento: []cfe.SubAdjust{{Tipo: 2, Val: num("2")}},
			RetencPercep: []cfe.ItemRetPerc{{CodRet: "2183165", Tasa: numP("2.5"), MntSujetoaRet: numP("245"),
				InfoAdicionalRet: "IMEBA", ValRetPerc: num("6.13")}},
			MontoItem: num("245")},
		// IVA en suspenso: 10 × 12 = 120, plus 5 % = 6, gives 126.
		{NroLinDet: 2, IndFact: 12, NomItem: "Cueros vacunos", Cantidad: num("10"), UniMed: "Unid",
			PrecioUnitario: num("12"), RecargoPct: numP("5"), RecargoMnt: numP("6"),
			SubRecargo: []cfe.SubAdjust{{Tipo: 1, Val: num("6")}}, MontoItem: num("126")},
		// Not billable: 4 × 0.50 = 2.
		{NroLinDet: 3, IndFact: 6, NomItem: "Bolsas de arpillera", Cantidad: num("4"), UniMed: "Unid",
			PrecioUnitario: num("0.5"), MontoItem: num("2")},
	}
	// 0.50 off the not-billable line: MontoNF = 2 − 0.50 = 1.50.
	c.DscRcgGlobal = []cfe.GlobalAdjust{{NroLinDR: 1, TpoMovDR: "D", TpoDR: 1, CodDR: 1,
		GlosaDR: "Bolsas devueltas", ValorDR: num("0.5"), IndFactDR: 6}}
	c.Totales = cfe.Totales{
		MntNoGrv:       numP("245"), // IndFact 13
		MntIVaenSusp:   numP("126"), // IndFact 12
		MntTotal:       numP("371"), // 245 + 126
		MntTotRetenido: numP("6.13"),
		CantLinDet:     3,
		RetencPercep:   []cfe.RetPerc{{CodRet: "2183165", ValRetPerc: num("6.13")}},
		MontoNF:        numP("1.5"),
		MntPagar:       numP("366.37"), // MntBruto 2: 371 − 6.13 + 1.50
	}
	c.MediosPago = []cfe.MedioPago{{NroLinMP: 1, CodMP: 3, GlosaMP: "Transferencia", OrdenMP: 1, ValorPago: num("366.37")}}
}

// fullFacturaExp fills an e-Factura de Exportación.
func fullFacturaExp(c *cfe.CFE) {
	d := &c.IdDoc
	d.PeriodoDesde, d.PeriodoHasta = dateP(2026, time.March, 1), dateP(2026, time.March, 31)
	d.MntBruto, d.FmaPago, d.FchVenc = 1, 2, dateP(2026, time.May, 14)
	d.ClauVenta, d.ModVenta, d.ViaTransp, d.IVAalDia, d.IndPagCta3ros = "FOB", 1, 1, 1, 1
	c.Items = []cfe.Item{
		// 1000 × 4.50 = 4500, less 1 % = 45, gives 4455.
		{NroLinDet: 1, CodItem: []cfe.CodItem{{TpoCod: "INT1", Cod: "LAN-L"}}, IndFact: 10, NomItem: "Lana lavada",
			NCM: "5101.21.00", DscItem: "Fardos de 200 kg", Cantidad: num("1000"), UniMed: "kg", PrecioUnitario: num("4.5"),
			DescuentoPct: numP("1"), DescuentoMonto: numP("45"), SubDescuento: []cfe.SubAdjust{{Tipo: 2, Val: num("1")}},
			MontoItem: num("4455")},
		// 1 × 300, plus 10 % = 30, gives 330.
		{NroLinDet: 2, IndFact: 10, NomItem: "Flete interno", Cantidad: num("1"), UniMed: "N/A", PrecioUnitario: num("300"),
			RecargoPct: numP("10"), RecargoMnt: numP("30"), SubRecargo: []cfe.SubAdjust{{Tipo: 2, Val: num("10")}},
			MontoItem: num("330")},
		{NroLinDet: 3, IndFact: 6, NomItem: "Seguro de carga", Cantidad: num("1"), UniMed: "N/A",
			PrecioUnitario: num("20"), MontoItem: num("20")},
		{NroLinDet: 4, IndFact: 5, NomItem: "Muestras sin valor", Cantidad: num("5"), UniMed: "kg",
			PrecioUnitario: num("0"), MontoItem: num("0")},
	}
	// A volume discount of 85 on the export lines.
	c.DscRcgGlobal = []cfe.GlobalAdjust{{NroLinDR: 1, TpoMovDR: "D", TpoDR: 1, CodDR: 2,
		GlosaDR: "Bonificación por volumen", ValorDR: num("85"), IndFactDR: 10}}
	c.Totales = cfe.Totales{
		MntExpoyAsim: numP("4700"), // 4455 + 330 − 85
		MntTotal:     numP("4700"),
		CantLinDet:   4,
		MontoNF:      numP("20"),
		MntPagar:     numP("4720"), // 4700 + 20
	}
	c.MediosPago = []cfe.MedioPago{{NroLinMP: 1, CodMP: 3, GlosaMP: "Transferencia", OrdenMP: 1, ValorPago: num("4720")}}
}

// fullRemito fills an e-Remito of goods owned by a third party, one line of
// which takes back goods of an earlier remito (IndFact 8).
func fullRemito(c *cfe.CFE) {
	d := &c.IdDoc
	d.TipoTraslado, d.IndPropiedad, d.TipoDocProp, d.CodPaisProp = 1, 1, 2, "UY"
	d.DocProp, d.RznSocProp = "214844360018", "Depósitos del Este S.A."
	c.Items = []cfe.Item{
		{NroLinDet: 1, CodItem: []cfe.CodItem{{TpoCod: "INT1", Cod: "MAN-CJ"}}, NomItem: "Cajas de manzanas",
			DscItem: "Cajas de 18 kg", Cantidad: num("40"), UniMed: "caja"},
		{NroLinDet: 2, IndFact: 8, NomItem: "Cajones vacíos", Cantidad: num("5"), UniMed: "Unid"},
	}
	c.Totales = cfe.Totales{CantLinDet: 2}
}

// fullRemitoExp fills an e-Remito de Exportación of goods owned by a foreign
// third party.
func fullRemitoExp(c *cfe.CFE) {
	d := &c.IdDoc
	d.TipoTraslado, d.IndPropiedad, d.TipoDocProp, d.CodPaisProp = 1, 1, 4, "AR"
	d.DocPropExt, d.RznSocProp = "30712345671", "Textil Andina S.A."
	d.ClauVenta, d.ModVenta, d.ViaTransp = "FOB", 2, 3
	c.Items = []cfe.Item{
		// 1000 × 4.50 = 4500.
		{NroLinDet: 1, CodItem: []cfe.CodItem{{TpoCod: "INT1", Cod: "LAN-L"}}, NomItem: "Lana lavada",
			NCM: "5101.21.00", DscItem: "Fardos de 200 kg", Cantidad: num("1000"), UniMed: "kg",
			PrecioUnitario: num("4.5"), MontoItem: num("4500")},
		{NroLinDet: 2, IndFact: 5, NomItem: "Muestras sin valor", NCM: "5101.21.00", Cantidad: num("10"), UniMed: "kg",
			PrecioUnitario: num("0"), MontoItem: num("0")},
	}
	c.Totales = cfe.Totales{
		MntExpoyAsim: numP("4500"), // Σ lines (4500 + 0); no IndFact 8 line to take off
		MntTotal:     numP("4500"),
		CantLinDet:   2,
	}
}

// fullResguardo fills an e-Resguardo with one retention and one crédito fiscal.
func fullResguardo(c *cfe.CFE) {
	c.IdDoc.FchValor = dateP(2026, time.March, 10)
	c.Items = []cfe.Item{
		// 50 % of 22000 = 11000.
		{NroLinDet: 1, RetencPercep: []cfe.ItemRetPerc{{CodRet: "2183165", Tasa: numP("50"), MntSujetoaRet: numP("22000"),
			InfoAdicionalRet: "Honorarios de marzo", ValRetPerc: num("11000")}}},
		// 10 % of 5000 = 500, a 2181xxx (crédito fiscal) code.
		{NroLinDet: 2, RetencPercep: []cfe.ItemRetPerc{{CodRet: "2181110", Tasa: numP("10"), MntSujetoaRet: numP("5000"),
			ValRetPerc: num("500")}}},
	}
	c.Totales = cfe.Totales{
		MntTotRetenido: numP("11000"), // codes other than 2181xxx
		MntTotCredFisc: numP("500"),   // 2181xxx codes
		CantLinDet:     2,
		RetencPercep: []cfe.RetPerc{
			{CodRet: "2183165", ValRetPerc: num("11000")},
			{CodRet: "2181110", ValRetPerc: num("500")},
		},
	}
}

// testSignature is a structurally complete ds:Signature with dummy values.
// TEST ONLY: it signs nothing. CFEDGI.xsd requires a Signature as the last
// child of CFE, so an unsigned document needs one to be validated; real
// signing belongs to the signer package.
const testSignature = `<Signature xmlns="http://www.w3.org/2000/09/xmldsig#"><SignedInfo>` +
	`<CanonicalizationMethod Algorithm="http://www.w3.org/TR/2001/REC-xml-c14n-20010315"></CanonicalizationMethod>` +
	`<SignatureMethod Algorithm="http://www.w3.org/2000/09/xmldsig#rsa-sha1"></SignatureMethod>` +
	`<Reference URI=""><Transforms>` +
	`<Transform Algorithm="http://www.w3.org/2000/09/xmldsig#enveloped-signature"></Transform>` +
	`<Transform Algorithm="http://www.w3.org/TR/2001/REC-xml-c14n-20010315"></Transform></Transforms>` +
	`<DigestMethod Algorithm="http://www.w3.org/2000/09/xmldsig#sha1"></DigestMethod>` +
	`<DigestValue>AAECAwQFBgcICQoLDA0ODxAREhM=</DigestValue></Reference></SignedInfo>` +
	`<SignatureValue>c2lnbmF0dXJl</SignatureValue>` +
	`<KeyInfo><X509Data><X509IssuerSerial><X509IssuerName>CN=Test CA, C=UY</X509IssuerName>` +
	`<X509SerialNumber>1</X509SerialNumber></X509IssuerSerial></X509Data></KeyInfo></Signature>`

// withTestSignature returns the bytes of doc with testSignature appended as
// the last child of its root.
func withTestSignature(t testing.TB, doc *etree.Document) []byte {
	t.Helper()
	sig := etree.NewDocument()
	if err := sig.ReadFromString(testSignature); err != nil {
		t.Fatal(err)
	}
	signed := doc.Copy()
	signed.Root().AddChild(sig.Root())
	b, err := signed.WriteToBytes()
	if err != nil {
		t.Fatal(err)
	}
	return b
}
