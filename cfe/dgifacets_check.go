package cfe

import (
	"strconv"
	"strings"
	"time"

	"github.com/beevik/etree"
)

// Placeholders for what numbering fills in after validation (serie, number,
// CAE, signing time). They satisfy their XSD types, so that the check covers
// every other element of the document as it will be written; the real values
// come from a CAE range, validated when it was loaded.
var (
	placeholderTmstFirma = time.Date(2026, 1, 1, 12, 0, 0, 0, Montevideo)
	placeholderCAEData   = CAEData{CAEID: "90000000001", DNro: 1, HNro: 1, FecVenc: Date{Year: 2030, Month: 12, Day: 31}}
)

// checkXSDFacets returns a FieldError for every value of c that DGI's XSD
// types refuse, naming the request field (cfe.totales.tipoMoneda) where one
// maps to the element, the element's path otherwise. The document is built
// as BuildXML writes it, with placeholders for serie, number, CAE and TmstFirma
// when they are not set yet. c is not modified.
func checkXSDFacets(c *CFE) []FieldError {
	d := *c
	if d.IdDoc.Serie == "" {
		d.IdDoc.Serie = "A"
	}
	if d.IdDoc.Nro == 0 {
		d.IdDoc.Nro = 1
	}
	if d.CAEData.CAEID == "" {
		d.CAEData = placeholderCAEData
	}
	if d.TmstFirma.IsZero() {
		d.TmstFirma = placeholderTmstFirma
	}
	doc, err := BuildXML(&d)
	if err != nil {
		fields := ErrorFields(err)
		for i := range fields {
			fields[i].Campo = requestField(fields[i].Campo)
		}
		return fields
	}
	typeEl := doc.Root().ChildElements()[0]
	w := facetWalker{path: make([]byte, 0, 96)}
	w.path = append(w.path, typeEl.Tag...)
	w.walk(typeEl, 0)
	return w.errs
}

// facetWalker visits the elements of a built document. path is the element
// path below CFE ("eTck/Encabezado/IdDoc"), the key of dgiFacets; segs are the
// path's elements below the type element, with the position of each among
// its same-named siblings.
type facetWalker struct {
	path []byte
	segs []facetSeg
	errs []FieldError
}

type facetSeg struct {
	name   string
	pos    int // 1-based among the siblings of the same name
	repeat bool
}

func (w *facetWalker) walk(el *etree.Element, depth int) {
	prev, pos := "", 0
	for _, tok := range el.Child {
		k, ok := tok.(*etree.Element)
		if !ok {
			continue
		}
		if k.Tag == prev {
			pos++
		} else {
			prev, pos = k.Tag, 1
		}
		n := len(w.path)
		w.path = append(append(w.path, '/'), k.Tag...)
		w.segs = append(w.segs, facetSeg{name: k.Tag, pos: pos, repeat: isListElement(k.Tag, depth)})
		if hasChildElement(k) {
			w.walk(k, depth+1)
		} else if ft := dgiFacets[string(w.path)]; ft == nil {
			// BuildXML wrote an element DGI's schema does not have: a
			// defect of the content models, never of the caller's data.
			w.errs = append(w.errs, FieldError{Campo: w.xmlPath(), Mensaje: "el esquema de DGI no tiene este elemento"})
		} else if msg := ft.check(k.Text()); msg != "" {
			w.errs = append(w.errs, FieldError{Campo: requestField(w.xmlPath()), Mensaje: msg})
		}
		w.path = w.path[:n]
		w.segs = w.segs[:len(w.segs)-1]
	}
}

func hasChildElement(el *etree.Element) bool {
	for _, tok := range el.Child {
		if _, ok := tok.(*etree.Element); ok {
			return true
		}
	}
	return false
}

// xmlPath is the path BuildXML's errors use: Detalle/Item[2]/IndFact.
func (w *facetWalker) xmlPath() string {
	var b strings.Builder
	for i, s := range w.segs {
		if i > 0 {
			b.WriteByte('/')
		}
		b.WriteString(s.name)
		if s.repeat {
			b.WriteString("[" + strconv.Itoa(s.pos) + "]")
		}
	}
	return b.String()
}

// isListElement reports whether child, whose parent is at depth (0: the type
// element), is an element of a list the request numbers (listNode in the
// content models): lines, codes, retentions, subtotals, payments, references.
func isListElement(child string, depth int) bool {
	switch child {
	case "Item", "CodItem", "SubDescuento", "SubRecargo", "RetencPercep", "STI_Item", "DRG_Item", "MedioPago", "Telefono":
		return true
	case "Referencia":
		return depth > 0 // the lines inside the Referencia wrapper
	}
	return false
}

// requestField maps an element path as BuildXML names it
// (Detalle/Item[2]/CodItem[1]/Cod) to the request field it comes from
// (cfe.detalles[1].codigosItem[0].codigo); a path no request field maps to is
// returned unchanged.
func requestField(xmlPath string) string {
	var key strings.Builder
	var idx []int
	segs := strings.Split(xmlPath, "/")
	for i, seg := range segs {
		if name, rest, ok := strings.Cut(seg, "["); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(rest, "]"))
			if err != nil {
				return xmlPath
			}
			idx = append(idx, n-1)
			seg = name
			if i == len(segs)-1 {
				seg += "[]" // one element of a list of simple content (Telefono)
			}
		}
		if i > 0 {
			key.WriteByte('/')
		}
		key.WriteString(seg)
	}
	tmpl, ok := requestFields[key.String()]
	if !ok || strings.Count(tmpl, "[]") != len(idx) {
		return xmlPath
	}
	var b strings.Builder
	for _, n := range idx {
		before, after, _ := strings.Cut(tmpl, "[]")
		b.WriteString(before + "[" + strconv.Itoa(n) + "]")
		tmpl = after
	}
	b.WriteString(tmpl)
	return b.String()
}

// requestFields maps the element paths of a CFE (below its type element, list
// positions left out, but for a last element that is one of a list of simple
// content: Telefono[]) to the request fields they are written from; "[]"
// stands for the position in each list, in order. Elements that numbering
// fills in (Serie, Nro, CAEData, TmstFirma) have no request field.
var requestFields = map[string]string{
	// The lists themselves (too many or too few elements).
	"Encabezado/Emisor/Telefono":      "cfe.emisor.telefonos",
	"Encabezado/Totales/RetencPercep": "cfe.totales.retencionesPercepciones",
	"Detalle/Item":                    "cfe.detalles",
	"Detalle/Item/CodItem":            "cfe.detalles[].codigosItem",
	"Detalle/Item/SubDescuento":       "cfe.detalles[].subDescuentos",
	"Detalle/Item/SubRecargo":         "cfe.detalles[].subRecargos",
	"Detalle/Item/RetencPercep":       "cfe.detalles[].retencionesPercepciones",
	"SubTotInfo/STI_Item":             "cfe.subTotalesInfo",
	"DscRcgGlobal/DRG_Item":           "cfe.descuentosRecargosGlobales",
	"MediosPago/MedioPago":            "cfe.mediosPago",
	"Referencia/Referencia":           "cfe.referencias",
	"Compl_Fiscal/Compl_Fiscal_Data":  "cfe.complementoFiscal",

	"Encabezado/IdDoc/Serie":              "cfe.idDoc.serie", // as Validate names it
	"Encabezado/IdDoc/TipoCFE":            "cfe.idDoc.tipoCfe",
	"Encabezado/IdDoc/NroInterno":         "cfe.idDoc.numeroInterno",
	"Encabezado/IdDoc/FchEmis":            "cfe.idDoc.fechaEmision",
	"Encabezado/IdDoc/FchValor":           "cfe.idDoc.fechaValor",
	"Encabezado/IdDoc/PeriodoDesde":       "cfe.idDoc.periodoDesde",
	"Encabezado/IdDoc/PeriodoHasta":       "cfe.idDoc.periodoHasta",
	"Encabezado/IdDoc/MntBruto":           "cfe.idDoc.montoBruto",
	"Encabezado/IdDoc/FmaPago":            "cfe.idDoc.formaPago",
	"Encabezado/IdDoc/FchVenc":            "cfe.idDoc.fechaVencimiento",
	"Encabezado/IdDoc/ClauVenta":          "cfe.idDoc.clausulaVenta",
	"Encabezado/IdDoc/ModVenta":           "cfe.idDoc.modalidadVenta",
	"Encabezado/IdDoc/ViaTransp":          "cfe.idDoc.viaTransporte",
	"Encabezado/IdDoc/InfoAdicionalDoc":   "cfe.idDoc.informacionAdicional",
	"Encabezado/IdDoc/IVAalDia":           "cfe.idDoc.ivaAlDia",
	"Encabezado/IdDoc/SecProf":            "cfe.idDoc.secretoProfesional",
	"Encabezado/IdDoc/IndPagCta3ros":      "cfe.idDoc.indicadorPagoCuentaTerceros",
	"Encabezado/IdDoc/IndCobPropia":       "cfe.idDoc.indicadorCobranzaPropia",
	"Encabezado/IdDoc/TipoTraslado":       "cfe.idDoc.tipoTraslado",
	"Encabezado/IdDoc/IndPropiedad":       "cfe.idDoc.indicadorPropiedad",
	"Encabezado/IdDoc/TipoDocProp":        "cfe.idDoc.tipoDocumentoPropietario",
	"Encabezado/IdDoc/CodPaisProp":        "cfe.idDoc.codigoPaisPropietario",
	"Encabezado/IdDoc/DocProp":            "cfe.idDoc.documentoPropietario",
	"Encabezado/IdDoc/DocPropExt":         "cfe.idDoc.documentoPropietarioExt",
	"Encabezado/IdDoc/RznSocProp":         "cfe.idDoc.razonSocialPropietario",
	"Encabezado/IdDoc/IndCompraMEReventa": "cfe.idDoc.indicadorCompraMonedaExtranjera",

	"Encabezado/Emisor/RUCEmisor":           "cfe.emisor.ruc",
	"Encabezado/Emisor/RznSoc":              "cfe.emisor.razonSocial",
	"Encabezado/Emisor/NomComercial":        "cfe.emisor.nombreComercial",
	"Encabezado/Emisor/GiroEmis":            "cfe.emisor.giro",
	"Encabezado/Emisor/Telefono[]":          "cfe.emisor.telefonos[]",
	"Encabezado/Emisor/CorreoEmisor":        "cfe.emisor.correo",
	"Encabezado/Emisor/EmiSucursal":         "cfe.emisor.sucursal",
	"Encabezado/Emisor/CdgDGISucur":         "cfe.emisor.codigoSucursal",
	"Encabezado/Emisor/DomFiscal":           "cfe.emisor.domicilioFiscal",
	"Encabezado/Emisor/Ciudad":              "cfe.emisor.ciudad",
	"Encabezado/Emisor/Departamento":        "cfe.emisor.departamento",
	"Encabezado/Emisor/InfoAdicionalEmisor": "cfe.emisor.informacionAdicional",

	"Encabezado/Receptor/TipoDocRecep":  "cfe.receptor.tipoDocumento",
	"Encabezado/Receptor/CodPaisRecep":  "cfe.receptor.codigoPais",
	"Encabezado/Receptor/DocRecep":      "cfe.receptor.documento",
	"Encabezado/Receptor/DocRecepExt":   "cfe.receptor.documentoExt",
	"Encabezado/Receptor/RznSocRecep":   "cfe.receptor.razonSocial",
	"Encabezado/Receptor/DirRecep":      "cfe.receptor.direccion",
	"Encabezado/Receptor/CiudadRecep":   "cfe.receptor.ciudad",
	"Encabezado/Receptor/DeptoRecep":    "cfe.receptor.departamento",
	"Encabezado/Receptor/PaisRecep":     "cfe.receptor.pais",
	"Encabezado/Receptor/CP":            "cfe.receptor.codigoPostal",
	"Encabezado/Receptor/InfoAdicional": "cfe.receptor.informacionAdicional",
	"Encabezado/Receptor/LugarDestEnt":  "cfe.receptor.lugarEntrega",
	"Encabezado/Receptor/CompraID":      "cfe.receptor.idCompraCliente",

	"Encabezado/Totales/TpoMoneda":               "cfe.totales.tipoMoneda",
	"Encabezado/Totales/TpoCambio":               "cfe.totales.tipoCambio",
	"Encabezado/Totales/MntNoGrv":                "cfe.totales.montoNoGravado",
	"Encabezado/Totales/MntExpoyAsim":            "cfe.totales.montoExportacion",
	"Encabezado/Totales/MntImpuestoPerc":         "cfe.totales.montoImpuestoPercibido",
	"Encabezado/Totales/MntIVaenSusp":            "cfe.totales.montoIvaSuspenso",
	"Encabezado/Totales/MntNetoIvaTasaMin":       "cfe.totales.montoNetoIvaTasaMinima",
	"Encabezado/Totales/MntNetoIVATasaBasica":    "cfe.totales.montoNetoIvaTasaBasica",
	"Encabezado/Totales/MntNetoIVAOtra":          "cfe.totales.montoNetoIvaOtraTasa",
	"Encabezado/Totales/IVATasaMin":              "cfe.totales.tasaIvaMinima",
	"Encabezado/Totales/IVATasaBasica":           "cfe.totales.tasaIvaBasica",
	"Encabezado/Totales/MntIVATasaMin":           "cfe.totales.montoIvaTasaMinima",
	"Encabezado/Totales/MntIVATasaBasica":        "cfe.totales.montoIvaTasaBasica",
	"Encabezado/Totales/MntIVAOtra":              "cfe.totales.montoIvaOtraTasa",
	"Encabezado/Totales/MntTotal":                "cfe.totales.montoTotal",
	"Encabezado/Totales/MntTotRetenido":          "cfe.totales.montoRetenido",
	"Encabezado/Totales/MntTotCredFisc":          "cfe.totales.montoCreditoFiscal",
	"Encabezado/Totales/CantLinDet":              "cfe.totales.cantidadLineasDetalle",
	"Encabezado/Totales/RetencPercep/CodRet":     "cfe.totales.retencionesPercepciones[].codigo",
	"Encabezado/Totales/RetencPercep/ValRetPerc": "cfe.totales.retencionesPercepciones[].valor",
	"Encabezado/Totales/MontoNF":                 "cfe.totales.montoNoFacturable",
	"Encabezado/Totales/MntPagar":                "cfe.totales.montoPagar",

	"Detalle/Item/NroLinDet":                     "cfe.detalles[].numeroLineaDetalle",
	"Detalle/Item/CodItem/TpoCod":                "cfe.detalles[].codigosItem[].tipo",
	"Detalle/Item/CodItem/Cod":                   "cfe.detalles[].codigosItem[].codigo",
	"Detalle/Item/IndFact":                       "cfe.detalles[].indicadorFacturacion",
	"Detalle/Item/IndAgenteResp":                 "cfe.detalles[].indicadorAgenteResponsable",
	"Detalle/Item/NomItem":                       "cfe.detalles[].nombreItem",
	"Detalle/Item/NCM":                           "cfe.detalles[].ncm",
	"Detalle/Item/DscItem":                       "cfe.detalles[].descripcion",
	"Detalle/Item/Cantidad":                      "cfe.detalles[].cantidad",
	"Detalle/Item/UniMed":                        "cfe.detalles[].unidadMedida",
	"Detalle/Item/PrecioUnitario":                "cfe.detalles[].precioUnitario",
	"Detalle/Item/DescuentoPct":                  "cfe.detalles[].descuentoPorcentaje",
	"Detalle/Item/DescuentoMonto":                "cfe.detalles[].descuentoMonto",
	"Detalle/Item/SubDescuento/DescTipo":         "cfe.detalles[].subDescuentos[].tipo",
	"Detalle/Item/SubDescuento/DescVal":          "cfe.detalles[].subDescuentos[].valor",
	"Detalle/Item/RecargoPct":                    "cfe.detalles[].recargoPorcentaje",
	"Detalle/Item/RecargoMnt":                    "cfe.detalles[].recargoMonto",
	"Detalle/Item/SubRecargo/RecargoTipo":        "cfe.detalles[].subRecargos[].tipo",
	"Detalle/Item/SubRecargo/RecargoVal":         "cfe.detalles[].subRecargos[].valor",
	"Detalle/Item/RetencPercep/CodRet":           "cfe.detalles[].retencionesPercepciones[].codigo",
	"Detalle/Item/RetencPercep/Tasa":             "cfe.detalles[].retencionesPercepciones[].tasa",
	"Detalle/Item/RetencPercep/MntSujetoaRet":    "cfe.detalles[].retencionesPercepciones[].montoSujeto",
	"Detalle/Item/RetencPercep/InfoAdicionalRet": "cfe.detalles[].retencionesPercepciones[].informacionAdicional",
	"Detalle/Item/RetencPercep/ValRetPerc":       "cfe.detalles[].retencionesPercepciones[].valor",
	"Detalle/Item/MontoItem":                     "cfe.detalles[].montoItem",

	"SubTotInfo/STI_Item/NroSTI":       "cfe.subTotalesInfo[].numero",
	"SubTotInfo/STI_Item/GlosaSTI":     "cfe.subTotalesInfo[].glosa",
	"SubTotInfo/STI_Item/OrdenSTI":     "cfe.subTotalesInfo[].orden",
	"SubTotInfo/STI_Item/ValSubtotSTI": "cfe.subTotalesInfo[].valor",

	"DscRcgGlobal/DRG_Item/NroLinDR":  "cfe.descuentosRecargosGlobales[].numeroLinea",
	"DscRcgGlobal/DRG_Item/TpoMovDR":  "cfe.descuentosRecargosGlobales[].tipoMovimiento",
	"DscRcgGlobal/DRG_Item/TpoDR":     "cfe.descuentosRecargosGlobales[].tipo",
	"DscRcgGlobal/DRG_Item/CodDR":     "cfe.descuentosRecargosGlobales[].codigo",
	"DscRcgGlobal/DRG_Item/GlosaDR":   "cfe.descuentosRecargosGlobales[].glosa",
	"DscRcgGlobal/DRG_Item/ValorDR":   "cfe.descuentosRecargosGlobales[].valor",
	"DscRcgGlobal/DRG_Item/IndFactDR": "cfe.descuentosRecargosGlobales[].indicadorFacturacion",

	"MediosPago/MedioPago/NroLinMP":  "cfe.mediosPago[].numeroLinea",
	"MediosPago/MedioPago/CodMP":     "cfe.mediosPago[].codigo",
	"MediosPago/MedioPago/GlosaMP":   "cfe.mediosPago[].glosa",
	"MediosPago/MedioPago/OrdenMP":   "cfe.mediosPago[].orden",
	"MediosPago/MedioPago/ValorPago": "cfe.mediosPago[].valor",

	"Referencia/Referencia/NroLinRef":   "cfe.referencias[].numeroLinea",
	"Referencia/Referencia/IndGlobal":   "cfe.referencias[].indicadorGlobal",
	"Referencia/Referencia/TpoDocRef":   "cfe.referencias[].tipoCfe",
	"Referencia/Referencia/Serie":       "cfe.referencias[].serie",
	"Referencia/Referencia/NroCFERef":   "cfe.referencias[].numero",
	"Referencia/Referencia/RazonRef":    "cfe.referencias[].razon",
	"Referencia/Referencia/FechaCFEref": "cfe.referencias[].fecha",

	"Compl_Fiscal/Compl_Fiscal_Data/RUCEmisor":   "cfe.complementoFiscal.rucEmisor",
	"Compl_Fiscal/Compl_Fiscal_Data/TipoDocMdte": "cfe.complementoFiscal.tipoDocumento",
	"Compl_Fiscal/Compl_Fiscal_Data/Pais":        "cfe.complementoFiscal.codigoPais",
	"Compl_Fiscal/Compl_Fiscal_Data/DocMdte":     "cfe.complementoFiscal.documento",
	"Compl_Fiscal/Compl_Fiscal_Data/NombreMdte":  "cfe.complementoFiscal.nombre",
}

// xsdFacets adds the failures of checkXSDFacets to v, except on fields
// Validate has already refused (the same rule said twice helps nobody).
func (v *validator) xsdFacets() {
	reported := make(map[string]bool, len(v.probs))
	for _, p := range v.probs {
		reported[p.Campo] = true
	}
	for _, f := range checkXSDFacets(v.c) {
		if !reported[f.Campo] {
			v.probs = append(v.probs, f)
		}
	}
}
