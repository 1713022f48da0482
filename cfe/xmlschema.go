package cfe

// Content models of a CFE as CFEType.xsd (DGI XSDs 1.44.2) defines them. Each
// list follows one xs:sequence in the schema's order; the comment above it
// names the complex type. The model has no field that only XSD 1.44 added
// (Referencia/MntCFEref, TpoMonedaRef, TpoCambioRef), so what BuildXML writes
// is also valid for 1.43.5, the version DGI's production still runs.

// typeModel describes the content of one type element (eTck, eFact, ...).
type typeModel struct {
	idDoc       []xmlNode[IdDoc]
	receptor    []xmlNode[Receptor]
	totales     []xmlNode[Totales]
	item        []xmlNode[Item]
	maxItems    int
	sale        bool // DscRcgGlobal and MediosPago are allowed
	complFiscal bool // Compl_Fiscal (zone K) is allowed
}

// cfeContent is the content model of each type element.
var cfeContent = map[Element][]xmlNode[CFE]{
	ElemTicket: typeModel{idDoc: idDocTck, receptor: receptorTck, totales: totales,
		item: itemDetFact, maxItems: 700, sale: true, complFiscal: true}.content(),
	ElemFactura: typeModel{idDoc: idDocTck, receptor: receptorFact, totales: totales,
		item: itemDetFact, maxItems: 200, sale: true, complFiscal: true}.content(),
	ElemFacturaExp: typeModel{idDoc: idDocFactExp, receptor: receptorTck, totales: totalesFactExp,
		item: itemDetFactExp, maxItems: 200, sale: true}.content(),
	ElemRemito: typeModel{idDoc: idDocRem, receptor: receptorRem, totales: totalesRem,
		item: itemRem, maxItems: 200}.content(),
	ElemRemitoExp: typeModel{idDoc: idDocRemExp, receptor: receptorTck, totales: totalesRemExp,
		item: itemRemExp, maxItems: 200}.content(),
	ElemResguardo: typeModel{idDoc: idDocResg, receptor: receptorResg, totales: totalesResg,
		item: itemResg, maxItems: 200}.content(),
	ElemBoleta: typeModel{idDoc: idDocBoleta, receptor: receptorTck, totales: totalesBoleta,
		item: itemDetFact, maxItems: 200, sale: true, complFiscal: true}.content(),
}

// content is the sequence inside the type element: TmstFirma, Encabezado,
// Detalle, SubTotInfo?, DscRcgGlobal?, MediosPago?, Referencia?, CAEData,
// Compl_Fiscal?
func (m typeModel) content() []xmlNode[CFE] {
	nodes := []xmlNode[CFE]{
		reqElem("TmstFirma", func(c *CFE) xmlValue { return xmlTimestamp{&c.TmstFirma} }),
		wrapperNode[CFE]{"Encabezado", []xmlNode[CFE]{
			childNode[CFE, IdDoc]{"IdDoc", func(c *CFE) *IdDoc { return &c.IdDoc }, m.idDoc},
			childNode[CFE, Emisor]{"Emisor", func(c *CFE) *Emisor { return &c.Emisor }, emisor},
			optChildNode[CFE, Receptor]{"Receptor", func(c *CFE) **Receptor { return &c.Receptor }, m.receptor},
			childNode[CFE, Totales]{"Totales", func(c *CFE) *Totales { return &c.Totales }, m.totales},
		}},
		wrapperNode[CFE]{"Detalle", []xmlNode[CFE]{
			listNode[CFE, Item]{name: "Item", min: 1, max: m.maxItems,
				get: func(c *CFE) *[]Item { return &c.Items }, content: m.item},
		}},
		subTotInfo,
	}
	if m.sale {
		nodes = append(nodes, dscRcgGlobal, mediosPago)
	}
	nodes = append(nodes, referencia, caeData)
	if m.complFiscal {
		nodes = append(nodes, complFiscal)
	}
	return nodes
}

func seq[S any](parts ...[]xmlNode[S]) []xmlNode[S] {
	var out []xmlNode[S]
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// IdDoc: the fields every type starts with, and those that sit in more than
// one place or with a different minOccurs.
var (
	idDocHead = []xmlNode[IdDoc]{
		reqElem("TipoCFE", func(d *IdDoc) xmlValue { return xmlInteger[Type]{&d.TipoCFE} }),
		reqElem("Serie", func(d *IdDoc) xmlValue { return xmlText{&d.Serie} }),
		reqElem("Nro", func(d *IdDoc) xmlValue { return xmlInteger[int64]{&d.Nro} }),
		optElem("NroInterno", func(d *IdDoc) xmlValue { return xmlText{&d.NroInterno} }),
		reqElem("FchEmis", func(d *IdDoc) xmlValue { return xmlDate{&d.FchEmis} }),
	}
	// idDocSale follows FchEmis in every type that is a sale or purchase.
	idDocSale = []xmlNode[IdDoc]{
		optElem("PeriodoDesde", func(d *IdDoc) xmlValue { return xmlOptDate{&d.PeriodoDesde} }),
		optElem("PeriodoHasta", func(d *IdDoc) xmlValue { return xmlOptDate{&d.PeriodoHasta} }),
		optElem("MntBruto", func(d *IdDoc) xmlValue { return xmlInteger[int]{&d.MntBruto} }),
		reqElem("FmaPago", func(d *IdDoc) xmlValue { return xmlInteger[int]{&d.FmaPago} }),
		optElem("FchVenc", func(d *IdDoc) xmlValue { return xmlOptDate{&d.FchVenc} }),
	}
	// idDocOwner is the owner of the goods of a remito (IndPropiedad ... RznSocProp).
	idDocOwner = []xmlNode[IdDoc]{
		reqElem("TipoTraslado", func(d *IdDoc) xmlValue { return xmlInteger[int]{&d.TipoTraslado} }),
		optElem("IndPropiedad", func(d *IdDoc) xmlValue { return xmlInteger[int]{&d.IndPropiedad} }),
		optElem("TipoDocProp", func(d *IdDoc) xmlValue { return xmlInteger[int]{&d.TipoDocProp} }),
		optElem("CodPaisProp", func(d *IdDoc) xmlValue { return xmlText{&d.CodPaisProp} }),
		choiceNode[IdDoc]{
			optElem("DocProp", func(d *IdDoc) xmlValue { return xmlText{&d.DocProp} }),
			optElem("DocPropExt", func(d *IdDoc) xmlValue { return xmlText{&d.DocPropExt} }),
		},
		optElem("RznSocProp", func(d *IdDoc) xmlValue { return xmlText{&d.RznSocProp} }),
	}

	idDocClauVenta        = func(d *IdDoc) xmlValue { return xmlText{&d.ClauVenta} }
	idDocModVenta         = func(d *IdDoc) xmlValue { return xmlInteger[int]{&d.ModVenta} }
	idDocViaTransp        = reqElem("ViaTransp", func(d *IdDoc) xmlValue { return xmlInteger[int]{&d.ViaTransp} })
	idDocInfoAdicionalDoc = optElem("InfoAdicionalDoc", func(d *IdDoc) xmlValue { return xmlText{&d.InfoAdicionalDoc} })
	idDocIVAalDia         = optElem("IVAalDia", func(d *IdDoc) xmlValue { return xmlInteger[int]{&d.IVAalDia} })
	idDocSecProf          = optElem("SecProf", func(d *IdDoc) xmlValue { return xmlInteger[int]{&d.SecProf} })
	idDocIndPagCta3ros    = optElem("IndPagCta3ros", func(d *IdDoc) xmlValue { return xmlInteger[int]{&d.IndPagCta3ros} })
)

var (
	// IdDoc_Tck; IdDoc_Fact has the same sequence.
	idDocTck = seq(idDocHead, idDocSale, []xmlNode[IdDoc]{
		optElem("ModVenta", idDocModVenta),
		idDocInfoAdicionalDoc, idDocIVAalDia, idDocSecProf, idDocIndPagCta3ros,
		optElem("IndCobPropia", func(d *IdDoc) xmlValue { return xmlInteger[int]{&d.IndCobPropia} }),
	})
	// IdDoc_Fact_Exp
	idDocFactExp = seq(idDocHead, idDocSale, []xmlNode[IdDoc]{
		reqElem("ClauVenta", idDocClauVenta),
		optElem("ModVenta", idDocModVenta),
		idDocViaTransp, idDocInfoAdicionalDoc, idDocIVAalDia, idDocSecProf, idDocIndPagCta3ros,
	})
	// IdDoc_Rem
	idDocRem = seq(idDocHead, idDocOwner, []xmlNode[IdDoc]{idDocInfoAdicionalDoc, idDocSecProf})
	// IdDoc_Rem_Exp
	idDocRemExp = seq(idDocHead, idDocOwner, []xmlNode[IdDoc]{
		optElem("ClauVenta", idDocClauVenta),
		reqElem("ModVenta", idDocModVenta),
		idDocViaTransp, idDocInfoAdicionalDoc, idDocSecProf,
	})
	// IdDoc_Resg
	idDocResg = seq(idDocHead, []xmlNode[IdDoc]{
		optElem("FchValor", func(d *IdDoc) xmlValue { return xmlOptDate{&d.FchValor} }),
		idDocInfoAdicionalDoc, idDocSecProf,
	})
	// IdDoc_Boleta
	idDocBoleta = seq(idDocHead, idDocSale, []xmlNode[IdDoc]{
		idDocInfoAdicionalDoc, idDocSecProf,
		optElem("IndCompraMEReventa", func(d *IdDoc) xmlValue { return xmlInteger[int]{&d.IndCompraMEReventa} }),
	})
)

// Emisor (one complex type for every CFE type).
var emisor = []xmlNode[Emisor]{
	reqElem("RUCEmisor", func(e *Emisor) xmlValue { return xmlText{&e.RUCEmisor} }),
	reqElem("RznSoc", func(e *Emisor) xmlValue { return xmlText{&e.RznSoc} }),
	optElem("NomComercial", func(e *Emisor) xmlValue { return xmlText{&e.NomComercial} }),
	optElem("GiroEmis", func(e *Emisor) xmlValue { return xmlText{&e.GiroEmis} }),
	listNode[Emisor, string]{name: "Telefono", max: 2,
		get: func(e *Emisor) *[]string { return &e.Telefono }, content: []xmlNode[string]{xmlTextContent{}}},
	optElem("CorreoEmisor", func(e *Emisor) xmlValue { return xmlText{&e.CorreoEmisor} }),
	optElem("EmiSucursal", func(e *Emisor) xmlValue { return xmlText{&e.EmiSucursal} }),
	reqElem("CdgDGISucur", func(e *Emisor) xmlValue { return xmlCount{&e.CdgDGISucur} }),
	reqElem("DomFiscal", func(e *Emisor) xmlValue { return xmlText{&e.DomFiscal} }),
	reqElem("Ciudad", func(e *Emisor) xmlValue { return xmlText{&e.Ciudad} }),
	reqElem("Departamento", func(e *Emisor) xmlValue { return xmlText{&e.Departamento} }),
	optElem("InfoAdicionalEmisor", func(e *Emisor) xmlValue { return xmlText{&e.InfoAdicionalEmisor} }),
}

// Receptor: the types differ in which fields exist and which are required.
var (
	rcpTipoDocRecep = optElem("TipoDocRecep", func(r *Receptor) xmlValue { return xmlInteger[int]{&r.TipoDocRecep} })
	rcpCodPaisRecep = optElem("CodPaisRecep", func(r *Receptor) xmlValue { return xmlText{&r.CodPaisRecep} })
	rcpDocRecep     = optElem("DocRecep", func(r *Receptor) xmlValue { return xmlText{&r.DocRecep} })
	rcpDoc          = choiceNode[Receptor]{
		rcpDocRecep,
		optElem("DocRecepExt", func(r *Receptor) xmlValue { return xmlText{&r.DocRecepExt} }),
	}
	rcpRznSocRecep   = func(r *Receptor) xmlValue { return xmlText{&r.RznSocRecep} }
	rcpDirRecep      = func(r *Receptor) xmlValue { return xmlText{&r.DirRecep} }
	rcpCiudadRecep   = func(r *Receptor) xmlValue { return xmlText{&r.CiudadRecep} }
	rcpDeptoRecep    = optElem("DeptoRecep", func(r *Receptor) xmlValue { return xmlText{&r.DeptoRecep} })
	rcpPaisRecep     = optElem("PaisRecep", func(r *Receptor) xmlValue { return xmlText{&r.PaisRecep} })
	rcpCP            = optElem("CP", func(r *Receptor) xmlValue { return xmlDigits{&r.CP} })
	rcpInfoAdicional = optElem("InfoAdicional", func(r *Receptor) xmlValue { return xmlText{&r.InfoAdicional} })
	rcpDelivery      = []xmlNode[Receptor]{
		optElem("LugarDestEnt", func(r *Receptor) xmlValue { return xmlText{&r.LugarDestEnt} }),
		optElem("CompraID", func(r *Receptor) xmlValue { return xmlText{&r.CompraID} }),
	}
	// rcpAddress is RznSocRecep ... InfoAdicional with the name and address optional.
	rcpAddress = []xmlNode[Receptor]{
		optElem("RznSocRecep", rcpRznSocRecep), optElem("DirRecep", rcpDirRecep),
		optElem("CiudadRecep", rcpCiudadRecep), rcpDeptoRecep, rcpPaisRecep, rcpCP, rcpInfoAdicional,
	}
)

var (
	// Receptor_Tck; Receptor_Fact_Exp, Receptor_Rem_Exp and Receptor_Boleta
	// have the same sequence.
	receptorTck = seq([]xmlNode[Receptor]{rcpTipoDocRecep, rcpCodPaisRecep, rcpDoc}, rcpAddress, rcpDelivery)
	// Receptor_Fact: TipoDocRecep is fixed to 2 (RUC) and there is no DocRecepExt.
	receptorFact = seq([]xmlNode[Receptor]{rcpTipoDocRecep, rcpCodPaisRecep, rcpDocRecep}, rcpAddress, rcpDelivery)
	// Receptor_Rem: name, address and city are required.
	receptorRem = seq([]xmlNode[Receptor]{
		rcpTipoDocRecep, rcpCodPaisRecep, rcpDoc,
		reqElem("RznSocRecep", rcpRznSocRecep), reqElem("DirRecep", rcpDirRecep),
		reqElem("CiudadRecep", rcpCiudadRecep), rcpDeptoRecep, rcpPaisRecep, rcpCP, rcpInfoAdicional,
	}, rcpDelivery)
	// Receptor_Resg: no LugarDestEnt nor CompraID.
	receptorResg = seq([]xmlNode[Receptor]{rcpTipoDocRecep, rcpCodPaisRecep, rcpDoc}, rcpAddress)
)

// Totales: the sequences share their fields; MntTotal's sign rule differs
// between types but not its format.
var (
	totTpoMoneda = reqElem("TpoMoneda", func(t *Totales) xmlValue { return xmlText{&t.TpoMoneda} })
	totTpoCambio = optElem("TpoCambio", func(t *Totales) xmlValue { return xmlOptDecimal{&t.TpoCambio, xsdTipoCambio} })
	totMntNoGrv  = optElem("MntNoGrv", func(t *Totales) xmlValue { return xmlOptDecimal{&t.MntNoGrv, xsdMonto} })
	totExpoyAsim = func(t *Totales) xmlValue { return xmlOptDecimal{&t.MntExpoyAsim, xsdMonto} }
	totIVaenSusp = optElem("MntIVaenSusp", func(t *Totales) xmlValue { return xmlOptDecimal{&t.MntIVaenSusp, xsdMonto} })
	totMntTotal  = reqElem("MntTotal", func(t *Totales) xmlValue { return xmlOptDecimal{&t.MntTotal, xsdMonto} })
	totRetenido  = func(t *Totales) xmlValue { return xmlOptDecimal{&t.MntTotRetenido, xsdMonto} }
	totCredFisc  = optElem("MntTotCredFisc", func(t *Totales) xmlValue { return xmlOptDecimal{&t.MntTotCredFisc, xsdMonto} })
	totCantLin   = reqElem("CantLinDet", func(t *Totales) xmlValue { return xmlCount{&t.CantLinDet} })
	totMontoNF   = optElem("MontoNF", func(t *Totales) xmlValue { return xmlOptDecimal{&t.MontoNF, xsdMonto} })
	totMntPagar  = reqElem("MntPagar", func(t *Totales) xmlValue { return xmlOptDecimal{&t.MntPagar, xsdMonto} })
	totRetPerc   = func(min int) listNode[Totales, RetPerc] {
		return listNode[Totales, RetPerc]{name: "RetencPercep", min: min, max: 20,
			get: func(t *Totales) *[]RetPerc { return &t.RetencPercep }, content: []xmlNode[RetPerc]{
				reqElem("CodRet", func(r *RetPerc) xmlValue { return xmlText{&r.CodRet} }),
				reqElem("ValRetPerc", func(r *RetPerc) xmlValue { return xmlDecimal{&r.ValRetPerc, xsdMonto} }),
			}}
	}
)

var (
	// Totales (e-Ticket, e-Factura and their notes).
	totales = []xmlNode[Totales]{
		totTpoMoneda, totTpoCambio, totMntNoGrv,
		optElem("MntExpoyAsim", totExpoyAsim),
		optElem("MntImpuestoPerc", func(t *Totales) xmlValue { return xmlOptDecimal{&t.MntImpuestoPerc, xsdMonto} }),
		totIVaenSusp,
		optElem("MntNetoIvaTasaMin", func(t *Totales) xmlValue { return xmlOptDecimal{&t.MntNetoIvaTasaMin, xsdMonto} }),
		optElem("MntNetoIVATasaBasica", func(t *Totales) xmlValue { return xmlOptDecimal{&t.MntNetoIVATasaBasica, xsdMonto} }),
		optElem("MntNetoIVAOtra", func(t *Totales) xmlValue { return xmlOptDecimal{&t.MntNetoIVAOtra, xsdMonto} }),
		optElem("IVATasaMin", func(t *Totales) xmlValue { return xmlOptDecimal{&t.IVATasaMin, xsdTasaIVA} }),
		optElem("IVATasaBasica", func(t *Totales) xmlValue { return xmlOptDecimal{&t.IVATasaBasica, xsdTasaIVA} }),
		optElem("MntIVATasaMin", func(t *Totales) xmlValue { return xmlOptDecimal{&t.MntIVATasaMin, xsdMonto} }),
		optElem("MntIVATasaBasica", func(t *Totales) xmlValue { return xmlOptDecimal{&t.MntIVATasaBasica, xsdMonto} }),
		optElem("MntIVAOtra", func(t *Totales) xmlValue { return xmlOptDecimal{&t.MntIVAOtra, xsdMonto} }),
		totMntTotal,
		optElem("MntTotRetenido", totRetenido),
		totCredFisc, totCantLin, totRetPerc(0), totMontoNF, totMntPagar,
	}
	// Totales_Fact_Exp
	totalesFactExp = []xmlNode[Totales]{
		totTpoMoneda, totTpoCambio, reqElem("MntExpoyAsim", totExpoyAsim), totMntTotal, totCantLin, totMontoNF, totMntPagar,
	}
	// The anonymous Totales of eRem.
	totalesRem = []xmlNode[Totales]{totCantLin}
	// Totales_Rem_Exp
	totalesRemExp = []xmlNode[Totales]{totTpoMoneda, totTpoCambio, reqElem("MntExpoyAsim", totExpoyAsim), totMntTotal, totCantLin}
	// Totales_Resg: at least one RetencPercep.
	totalesResg = []xmlNode[Totales]{
		totTpoMoneda, totTpoCambio, reqElem("MntTotRetenido", totRetenido), totCredFisc, totCantLin, totRetPerc(1),
	}
	// Totales_Boleta
	totalesBoleta = []xmlNode[Totales]{
		totTpoMoneda, totTpoCambio, totMntNoGrv, totIVaenSusp, totMntTotal,
		optElem("MntTotRetenido", totRetenido), totCantLin, totRetPerc(0), totMontoNF, totMntPagar,
	}
)

// Item: the detail line of each type.
var (
	itmNroLinDet = reqElem("NroLinDet", func(i *Item) xmlValue { return xmlInteger[int]{&i.NroLinDet} })
	itmCodItem   = listNode[Item, CodItem]{name: "CodItem", max: 5,
		get: func(i *Item) *[]CodItem { return &i.CodItem }, content: []xmlNode[CodItem]{
			reqElem("TpoCod", func(c *CodItem) xmlValue { return xmlText{&c.TpoCod} }),
			reqElem("Cod", func(c *CodItem) xmlValue { return xmlText{&c.Cod} }),
		}}
	itmIndFact       = func(i *Item) xmlValue { return xmlInteger[int]{&i.IndFact} }
	itmIndAgenteResp = optElem("IndAgenteResp", func(i *Item) xmlValue { return xmlText{&i.IndAgenteResp} })
	itmNomItem       = reqElem("NomItem", func(i *Item) xmlValue { return xmlText{&i.NomItem} })
	itmNCM           = optElem("NCM", func(i *Item) xmlValue { return xmlText{&i.NCM} })
	itmDscItem       = optElem("DscItem", func(i *Item) xmlValue { return xmlText{&i.DscItem} })
	itmCantidad      = reqElem("Cantidad", func(i *Item) xmlValue { return xmlDecimal{&i.Cantidad, xsdCantidad} })
	itmUniMed        = reqElem("UniMed", func(i *Item) xmlValue { return xmlText{&i.UniMed} })
	itmPrecio        = reqElem("PrecioUnitario", func(i *Item) xmlValue { return xmlDecimal{&i.PrecioUnitario, xsdPrecio} })
	// itmAdjustments is DescuentoPct ... SubRecargo.
	itmAdjustments = []xmlNode[Item]{
		optElem("DescuentoPct", func(i *Item) xmlValue { return xmlOptDecimal{&i.DescuentoPct, xsdPct} }),
		optElem("DescuentoMonto", func(i *Item) xmlValue { return xmlOptDecimal{&i.DescuentoMonto, xsdMonto} }),
		listNode[Item, SubAdjust]{name: "SubDescuento", max: 5,
			get: func(i *Item) *[]SubAdjust { return &i.SubDescuento }, content: subAdjust("DescTipo", "DescVal")},
		optElem("RecargoPct", func(i *Item) xmlValue { return xmlOptDecimal{&i.RecargoPct, xsdPct} }),
		optElem("RecargoMnt", func(i *Item) xmlValue { return xmlOptDecimal{&i.RecargoMnt, xsdMonto} }),
		listNode[Item, SubAdjust]{name: "SubRecargo", max: 5,
			get: func(i *Item) *[]SubAdjust { return &i.SubRecargo }, content: subAdjust("RecargoTipo", "RecargoVal")},
	}
	itmRetPerc = func(mntSujetoaRet func(string, func(*ItemRetPerc) xmlValue) leafNode[ItemRetPerc]) listNode[Item, ItemRetPerc] {
		return listNode[Item, ItemRetPerc]{name: "RetencPercep", max: 5,
			get: func(i *Item) *[]ItemRetPerc { return &i.RetencPercep }, content: []xmlNode[ItemRetPerc]{
				reqElem("CodRet", func(r *ItemRetPerc) xmlValue { return xmlText{&r.CodRet} }),
				optElem("Tasa", func(r *ItemRetPerc) xmlValue { return xmlOptDecimal{&r.Tasa, xsdPct} }),
				mntSujetoaRet("MntSujetoaRet", func(r *ItemRetPerc) xmlValue { return xmlOptDecimal{&r.MntSujetoaRet, xsdMonto} }),
				optElem("InfoAdicionalRet", func(r *ItemRetPerc) xmlValue { return xmlText{&r.InfoAdicionalRet} }),
				reqElem("ValRetPerc", func(r *ItemRetPerc) xmlValue { return xmlDecimal{&r.ValRetPerc, xsdMonto} }),
			}}
	}
	itmMontoItem = reqElem("MontoItem", func(i *Item) xmlValue { return xmlDecimal{&i.MontoItem, xsdMonto} })
)

// subAdjust is the content of SubDescuento (DescTipo, DescVal) and SubRecargo
// (RecargoTipo, RecargoVal).
func subAdjust(tipo, val string) []xmlNode[SubAdjust] {
	return []xmlNode[SubAdjust]{
		reqElem(tipo, func(a *SubAdjust) xmlValue { return xmlInteger[int]{&a.Tipo} }),
		reqElem(val, func(a *SubAdjust) xmlValue { return xmlDecimal{&a.Val, xsdMonto} }),
	}
}

var (
	// Item_Det_Fact; Item_Det_Boleta has the same sequence.
	itemDetFact = seq([]xmlNode[Item]{
		itmNroLinDet, itmCodItem, reqElem("IndFact", itmIndFact), itmIndAgenteResp, itmNomItem,
		itmDscItem, itmCantidad, itmUniMed, itmPrecio,
	}, itmAdjustments, []xmlNode[Item]{itmRetPerc(optElem[ItemRetPerc]), itmMontoItem})
	// Item_Det_Fact_Exp: NCM, and neither IndAgenteResp nor RetencPercep.
	itemDetFactExp = seq([]xmlNode[Item]{
		itmNroLinDet, itmCodItem, reqElem("IndFact", itmIndFact), itmNomItem, itmNCM,
		itmDscItem, itmCantidad, itmUniMed, itmPrecio,
	}, itmAdjustments, []xmlNode[Item]{itmMontoItem})
	// Item_Rem: goods without prices.
	itemRem = []xmlNode[Item]{
		itmNroLinDet, itmCodItem, optElem("IndFact", itmIndFact), itmNomItem, itmDscItem, itmCantidad, itmUniMed,
	}
	// Item_Rem_Exp
	itemRemExp = []xmlNode[Item]{
		itmNroLinDet, itmCodItem, optElem("IndFact", itmIndFact), itmNomItem, itmNCM, itmDscItem,
		itmCantidad, itmUniMed, itmPrecio, itmMontoItem,
	}
	// Item_Resg: retentions only (RetPerc_Resg, where MntSujetoaRet is required).
	itemResg = []xmlNode[Item]{itmNroLinDet, optElem("IndFact", itmIndFact), itmRetPerc(reqElem[ItemRetPerc])}
)

// Zones C to G and K, shared by the types that allow them.
var (
	// SubTotInfo
	subTotInfo = wrapperNode[CFE]{"SubTotInfo", []xmlNode[CFE]{
		listNode[CFE, SubTotal]{name: "STI_Item", max: 20,
			get: func(c *CFE) *[]SubTotal { return &c.SubTotInfo }, content: []xmlNode[SubTotal]{
				reqElem("NroSTI", func(s *SubTotal) xmlValue { return xmlInteger[int]{&s.NroSTI} }),
				reqElem("GlosaSTI", func(s *SubTotal) xmlValue { return xmlText{&s.GlosaSTI} }),
				optElem("OrdenSTI", func(s *SubTotal) xmlValue { return xmlInteger[int]{&s.OrdenSTI} }),
				reqElem("ValSubtotSTI", func(s *SubTotal) xmlValue { return xmlDecimal{&s.ValSubtotSTI, xsdMonto} }),
			}},
	}}
	// DscRcgGlobal
	dscRcgGlobal = wrapperNode[CFE]{"DscRcgGlobal", []xmlNode[CFE]{
		listNode[CFE, GlobalAdjust]{name: "DRG_Item", max: 20,
			get: func(c *CFE) *[]GlobalAdjust { return &c.DscRcgGlobal }, content: []xmlNode[GlobalAdjust]{
				reqElem("NroLinDR", func(g *GlobalAdjust) xmlValue { return xmlInteger[int]{&g.NroLinDR} }),
				reqElem("TpoMovDR", func(g *GlobalAdjust) xmlValue { return xmlText{&g.TpoMovDR} }),
				reqElem("TpoDR", func(g *GlobalAdjust) xmlValue { return xmlInteger[int]{&g.TpoDR} }),
				optElem("CodDR", func(g *GlobalAdjust) xmlValue { return xmlInteger[int]{&g.CodDR} }),
				reqElem("GlosaDR", func(g *GlobalAdjust) xmlValue { return xmlText{&g.GlosaDR} }),
				reqElem("ValorDR", func(g *GlobalAdjust) xmlValue { return xmlDecimal{&g.ValorDR, xsdMonto} }),
				reqElem("IndFactDR", func(g *GlobalAdjust) xmlValue { return xmlInteger[int]{&g.IndFactDR} }),
			}},
	}}
	// MediosPago
	mediosPago = wrapperNode[CFE]{"MediosPago", []xmlNode[CFE]{
		listNode[CFE, MedioPago]{name: "MedioPago", max: 40,
			get: func(c *CFE) *[]MedioPago { return &c.MediosPago }, content: []xmlNode[MedioPago]{
				reqElem("NroLinMP", func(m *MedioPago) xmlValue { return xmlInteger[int]{&m.NroLinMP} }),
				optElem("CodMP", func(m *MedioPago) xmlValue { return xmlInteger[int]{&m.CodMP} }),
				reqElem("GlosaMP", func(m *MedioPago) xmlValue { return xmlText{&m.GlosaMP} }),
				optElem("OrdenMP", func(m *MedioPago) xmlValue { return xmlInteger[int]{&m.OrdenMP} }),
				reqElem("ValorPago", func(m *MedioPago) xmlValue { return xmlDecimal{&m.ValorPago, xsdMonto} }),
			}},
	}}
	// Referencia: a Referencia element holding Referencia lines.
	referencia = wrapperNode[CFE]{"Referencia", []xmlNode[CFE]{
		listNode[CFE, Referencia]{name: "Referencia", max: 40,
			get: func(c *CFE) *[]Referencia { return &c.Referencias }, content: []xmlNode[Referencia]{
				reqElem("NroLinRef", func(r *Referencia) xmlValue { return xmlInteger[int]{&r.NroLinRef} }),
				optElem("IndGlobal", func(r *Referencia) xmlValue { return xmlInteger[int]{&r.IndGlobal} }),
				optElem("TpoDocRef", func(r *Referencia) xmlValue { return xmlInteger[Type]{&r.TpoDocRef} }),
				optElem("Serie", func(r *Referencia) xmlValue { return xmlText{&r.Serie} }),
				optElem("NroCFERef", func(r *Referencia) xmlValue { return xmlInteger[int64]{&r.NroCFERef} }),
				optElem("RazonRef", func(r *Referencia) xmlValue { return xmlText{&r.RazonRef} }),
				optElem("FechaCFEref", func(r *Referencia) xmlValue { return xmlOptDate{&r.FechaCFEref} }),
			}},
	}}
	// CAEDataType
	caeData = childNode[CFE, CAEData]{"CAEData", func(c *CFE) *CAEData { return &c.CAEData }, []xmlNode[CAEData]{
		reqElem("CAE_ID", func(d *CAEData) xmlValue { return xmlDigits{&d.CAEID} }),
		reqElem("DNro", func(d *CAEData) xmlValue { return xmlInteger[int64]{&d.DNro} }),
		reqElem("HNro", func(d *CAEData) xmlValue { return xmlInteger[int64]{&d.HNro} }),
		reqElem("FecVenc", func(d *CAEData) xmlValue { return xmlDate{&d.FecVenc} }),
		optElem("CAEEspecial", func(d *CAEData) xmlValue { return xmlInteger[int]{&d.CAEEspecial} }),
		optElem("CausalCAEEsp", func(d *CAEData) xmlValue { return xmlInteger[int]{&d.CausalCAEEsp} }),
	}}
	// Compl_FiscalType, clear form only (Compl_Fiscal_DataType). An encrypted
	// zone K (xenc:EncryptedData) is neither written nor read.
	complFiscal = wrapperNode[CFE]{"Compl_Fiscal", []xmlNode[CFE]{
		optChildNode[CFE, ComplFiscal]{"Compl_Fiscal_Data", func(c *CFE) **ComplFiscal { return &c.ComplFiscal }, []xmlNode[ComplFiscal]{
			reqElem("RUCEmisor", func(k *ComplFiscal) xmlValue { return xmlText{&k.RUCEmisor} }),
			reqElem("TipoDocMdte", func(k *ComplFiscal) xmlValue { return xmlInteger[int]{&k.TipoDocMdte} }),
			reqElem("Pais", func(k *ComplFiscal) xmlValue { return xmlText{&k.Pais} }),
			reqElem("DocMdte", func(k *ComplFiscal) xmlValue { return xmlText{&k.DocMdte} }),
			reqElem("NombreMdte", func(k *ComplFiscal) xmlValue { return xmlText{&k.NombreMdte} }),
		}},
	}}
)
