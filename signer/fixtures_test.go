package signer

import (
	"fmt"
	"testing"

	"github.com/beevik/etree"
	"github.com/shopspring/decimal"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// fixtureRUC is DGI's test RUC (dgi-cfe-format.md §10).
const fixtureRUC = "219999830019"

// unsignedCFE builds a compact, schema-valid unsigned CFE of type typ with the
// given number of detail lines, the way a builder would emit it: CFE namespace
// declared as the default namespace on <CFE>, no indentation. The content is
// minimal but plausible for each type element (CFEType.xsd); cfe.BuildXML's own
// output is tested end to end elsewhere.
func unsignedCFE(t testing.TB, typ cfe.Type, lines int) []byte {
	t.Helper()
	info, ok := typ.Info()
	if !ok {
		t.Fatalf("unknown type %d", typ)
	}
	doc := etree.NewDocument()
	doc.CreateProcInst("xml", `version="1.0" encoding="UTF-8"`)
	root := doc.CreateElement("CFE")
	root.CreateAttr("xmlns", nsCFE)
	root.CreateAttr("version", "1.0")
	f := &fixture{typ: typ, info: info, lines: lines}
	f.build(root.CreateElement(string(info.Element)))
	b, err := doc.WriteToBytes()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type fixture struct {
	typ   cfe.Type
	info  cfe.TypeInfo
	lines int
}

// add appends <name>text</name> to parent.
func add(parent *etree.Element, name, text string) *etree.Element {
	el := parent.CreateElement(name)
	el.SetText(text)
	return el
}

func (f *fixture) build(body *etree.Element) {
	add(body, "TmstFirma", "2026-11-20T10:15:30-03:00")
	enc := body.CreateElement("Encabezado")
	f.idDoc(enc.CreateElement("IdDoc"))
	f.emisor(enc.CreateElement("Emisor"))
	f.receptor(enc.CreateElement("Receptor"))
	f.totales(enc.CreateElement("Totales"))
	det := body.CreateElement("Detalle")
	for n := 1; n <= f.lines; n++ {
		f.item(det.CreateElement("Item"), n)
	}
	if f.info.IsNote() || f.info.Element == cfe.ElemResguardo {
		ref := body.CreateElement("Referencia").CreateElement("Referencia")
		add(ref, "NroLinRef", "1")
		add(ref, "TpoDocRef", f.info.Base.String())
		add(ref, "Serie", "A")
		add(ref, "NroCFERef", "17")
	}
	cae := body.CreateElement("CAEData")
	add(cae, "CAE_ID", "90269991010")
	add(cae, "DNro", "1")
	add(cae, "HNro", "1000000")
	add(cae, "FecVenc", "2028-11-20")
	if f.ctaAjena() {
		cf := body.CreateElement("Compl_Fiscal").CreateElement("Compl_Fiscal_Data")
		add(cf, "RUCEmisor", fixtureRUC)
		add(cf, "TipoDocMdte", "2")
		add(cf, "Pais", "UY")
		add(cf, "DocMdte", "214844360018")
		add(cf, "NombreMdte", "Mandante Ejemplo S.A.")
	}
}

func (f *fixture) ctaAjena() bool {
	b := f.info.Base
	return b == cfe.ETicketCtaAjena || b == cfe.EFacturaCtaAjena
}

func (f *fixture) idDoc(id *etree.Element) {
	add(id, "TipoCFE", f.typ.String())
	add(id, "Serie", "A")
	add(id, "Nro", "42")
	add(id, "FchEmis", "2026-11-20")
	switch f.info.Element {
	case cfe.ElemRemito:
		add(id, "TipoTraslado", "1")
	case cfe.ElemRemitoExp:
		add(id, "TipoTraslado", "1")
		add(id, "ClauVenta", "FOB")
		add(id, "ModVenta", "1")
		add(id, "ViaTransp", "1")
	case cfe.ElemResguardo:
	case cfe.ElemFacturaExp:
		add(id, "FmaPago", "2")
		add(id, "FchVenc", "2026-12-20")
		add(id, "ClauVenta", "FOB")
		add(id, "ModVenta", "1")
		add(id, "ViaTransp", "1")
	default:
		add(id, "FmaPago", "1")
	}
}

func (f *fixture) emisor(em *etree.Element) {
	add(em, "RUCEmisor", fixtureRUC)
	add(em, "RznSoc", "Almacén Ñandú S.R.L.")
	add(em, "NomComercial", "Almacén Ñandú")
	add(em, "CdgDGISucur", "1")
	add(em, "DomFiscal", "Av. 18 de Julio 1234 & Ejido")
	add(em, "Ciudad", "Montevideo")
	add(em, "Departamento", "Montevideo")
}

func (f *fixture) receptor(r *etree.Element) {
	switch f.info.Element {
	case cfe.ElemFacturaExp, cfe.ElemRemitoExp:
		add(r, "TipoDocRecep", "4")
		add(r, "CodPaisRecep", "AR")
		add(r, "DocRecepExt", "30-71234567-8")
		add(r, "RznSocRecep", "Importadora del Plata S.A.")
		add(r, "DirRecep", "Av. Corrientes 1000")
		add(r, "CiudadRecep", "Buenos Aires")
		add(r, "PaisRecep", "Argentina")
	case cfe.ElemTicket, cfe.ElemBoleta:
		add(r, "TipoDocRecep", "3")
		add(r, "CodPaisRecep", "UY")
		add(r, "DocRecep", "13353214")
		add(r, "RznSocRecep", "Juan Pérez")
	default:
		add(r, "TipoDocRecep", "2")
		add(r, "CodPaisRecep", "UY")
		add(r, "DocRecep", "214844360018")
		add(r, "RznSocRecep", "DGI")
		add(r, "DirRecep", "Fernández Crespo 1534")
		add(r, "CiudadRecep", "Montevideo")
	}
}

// Each line sells 2 units at 61.00 net: 122.00 a line, IVA 22 % = 26.84.
var (
	fixQty   = decimal.NewFromInt(2)
	fixPrice = decimal.RequireFromString("61.00")
	fixRate  = decimal.NewFromInt(22)
)

func (f *fixture) net() decimal.Decimal {
	return fixQty.Mul(fixPrice).Mul(decimal.NewFromInt(int64(f.lines)))
}

func money(d decimal.Decimal) string { return d.StringFixed(2) }

func (f *fixture) totales(tot *etree.Element) {
	net := f.net()
	count := fmt.Sprint(f.lines)
	switch f.info.Element {
	case cfe.ElemRemito:
		add(tot, "CantLinDet", count)
	case cfe.ElemRemitoExp:
		add(tot, "TpoMoneda", "USD")
		add(tot, "TpoCambio", "40.125")
		add(tot, "MntExpoyAsim", money(net))
		add(tot, "MntTotal", money(net))
		add(tot, "CantLinDet", count)
	case cfe.ElemFacturaExp:
		add(tot, "TpoMoneda", "USD")
		add(tot, "TpoCambio", "40.125")
		add(tot, "MntExpoyAsim", money(net))
		add(tot, "MntTotal", money(net))
		add(tot, "CantLinDet", count)
		add(tot, "MntPagar", money(net))
	case cfe.ElemResguardo:
		ret := f.retention().Mul(decimal.NewFromInt(int64(f.lines)))
		add(tot, "TpoMoneda", "UYU")
		add(tot, "MntTotRetenido", money(ret))
		add(tot, "CantLinDet", count)
		rp := tot.CreateElement("RetencPercep")
		add(rp, "CodRet", "2183165")
		add(rp, "ValRetPerc", money(ret))
	case cfe.ElemBoleta:
		add(tot, "TpoMoneda", "UYU")
		add(tot, "MntNoGrv", money(net))
		add(tot, "MntTotal", money(net))
		add(tot, "CantLinDet", count)
		add(tot, "MntPagar", money(net))
	default: // eTck, eFact
		iva := net.Mul(fixRate).Div(decimal.NewFromInt(100)).Round(2)
		add(tot, "TpoMoneda", "UYU")
		add(tot, "MntNetoIVATasaBasica", money(net))
		add(tot, "IVATasaMin", "10")
		add(tot, "IVATasaBasica", "22")
		add(tot, "MntIVATasaBasica", money(iva))
		add(tot, "MntTotal", money(net.Add(iva)))
		add(tot, "CantLinDet", count)
		add(tot, "MntPagar", money(net.Add(iva)))
	}
}

// retention is the amount withheld on each e-Resguardo line: 7 % of 122.00.
func (f *fixture) retention() decimal.Decimal {
	return fixQty.Mul(fixPrice).Mul(decimal.NewFromInt(7)).Div(decimal.NewFromInt(100)).Round(2)
}

func (f *fixture) item(it *etree.Element, n int) {
	add(it, "NroLinDet", fmt.Sprint(n))
	if f.info.Element == cfe.ElemResguardo {
		rp := it.CreateElement("RetencPercep")
		add(rp, "CodRet", "2183165")
		add(rp, "Tasa", "7")
		add(rp, "MntSujetoaRet", money(fixQty.Mul(fixPrice)))
		add(rp, "ValRetPerc", money(f.retention()))
		return
	}
	switch f.info.Element {
	case cfe.ElemFacturaExp:
		add(it, "IndFact", "10")
	case cfe.ElemBoleta:
		add(it, "IndFact", "13")
	case cfe.ElemTicket, cfe.ElemFactura:
		add(it, "IndFact", "3")
	}
	add(it, "NomItem", fmt.Sprintf("Yerba mate 1 kg <lote %03d>", n))
	add(it, "Cantidad", fixQty.StringFixed(3))
	add(it, "UniMed", "kg")
	if f.info.Element == cfe.ElemRemito {
		return
	}
	add(it, "PrecioUnitario", fixPrice.StringFixed(6))
	add(it, "MontoItem", money(fixQty.Mul(fixPrice)))
}
