package cfe

import (
	"fmt"
	"strconv"
	"strings"
	"time"
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
// maps to the element, the element's path otherwise. c is not modified.
//
// It walks the same content models BuildXML writes from (xmlschema.go) and
// formats every value with the same xmlValue, so it sees each element's text
// as it will be written, without building the document: every element of
// simple content BuildXML would write is checked against its type, and every
// failure BuildXML would report (a required element missing, too many lines,
// a value it cannot format) is reported too. Serie, number, CAE and
// TmstFirma, which numbering fills in after validation, are checked with
// placeholders when they are not set yet.
func checkXSDFacets(c *CFE) []FieldError {
	info, ok := c.IdDoc.TipoCFE.Info()
	if !ok {
		return []FieldError{{Campo: "cfe.idDoc.tipoCfe", Mensaje: "tipo de CFE desconocido"}}
	}
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
	w := facetWalker{key: make([]byte, 0, 96)}
	w.key = append(w.key, info.Element...)
	visitFacets(&w, cfeContent[info.Element], &d)
	for i := range w.st.errs {
		w.st.errs[i].Campo = requestField(w.st.errs[i].Campo)
	}
	return w.st.errs
}

// facetWalker carries the walk: st names elements as BuildXML does
// (Detalle/Item[2]/IndFact) and collects the failures; key is the element's
// path below CFE without positions (eTck/Detalle/Item/IndFact), the key of
// dgiFacets.
type facetWalker struct {
	st  xmlState
	key []byte
	// trace, when set (tests), sees every element checked: its key and text.
	trace func(key, text string)
}

// facetVisitor is implemented by every kind of xmlNode: it visits what the
// node's build method would write.
type facetVisitor[S any] interface {
	visitFacets(w *facetWalker, s *S)
}

func visitFacets[S any](w *facetWalker, content []xmlNode[S], s *S) {
	for _, n := range content {
		v, ok := n.(facetVisitor[S])
		if !ok {
			panic(fmt.Sprintf("cfe: content node %T has no facet visitor", n))
		}
		v.visitFacets(w, s)
	}
}

// down enters the element name (written as shown, with its position in a
// list) whose key segment is seg; up(mark) leaves it.
func (w *facetWalker) down(name, seg string) (mark int) {
	mark = len(w.key)
	w.key = append(append(w.key, '/'), seg...)
	w.st.enter(name)
	return mark
}

func (w *facetWalker) up(mark int) { w.st.leave(); w.key = w.key[:mark] }

// leaf checks the text of the current element (path st.path, key key).
func (w *facetWalker) leaf(text string) {
	if w.trace != nil {
		w.trace(string(w.key), text)
	}
	ft := dgiFacets[string(w.key)]
	if ft == nil {
		// The content models write an element DGI's schema does not have:
		// a defect of this package, never of the caller's data.
		w.st.fail("", "el esquema de DGI no tiene este elemento")
		return
	}
	if msg := ft.check(text); msg != "" {
		w.st.fail("", msg)
	}
}

func (n leafNode[S]) visitFacets(w *facetWalker, s *S) {
	text, ok, err := n.bind(s).format()
	switch {
	case err != nil:
		w.st.fail(n.name, err.Error())
	case ok:
		mark := w.down(n.name, n.name)
		w.leaf(text)
		w.up(mark)
	case n.required:
		w.st.fail(n.name, xmlMsgRequired)
	}
}

func (n childNode[S, T]) visitFacets(w *facetWalker, s *S) {
	mark := w.down(n.name, n.name)
	visitFacets(w, n.content, n.get(s))
	w.up(mark)
}

func (n optChildNode[S, T]) visitFacets(w *facetWalker, s *S) {
	if v := *n.get(s); v != nil {
		mark := w.down(n.name, n.name)
		visitFacets(w, n.content, v)
		w.up(mark)
	}
}

func (n listNode[S, T]) visitFacets(w *facetWalker, s *S) {
	items := *n.get(s)
	if !n.checkCount(&w.st, len(items)) {
		return
	}
	for i := range items {
		mark := w.down(n.name+"["+strconv.Itoa(i+1)+"]", n.name) // n.indexed(i), without fmt
		visitFacets(w, n.content, &items[i])
		w.up(mark)
	}
}

func (n wrapperNode[S]) visitFacets(w *facetWalker, s *S) {
	mark := w.down(n.name, n.name)
	visitFacets(w, n.content, s)
	w.up(mark)
}

func (n choiceNode[S]) visitFacets(w *facetWalker, s *S) {
	present := 0
	for _, leaf := range n {
		if _, ok, _ := leaf.bind(s).format(); ok {
			present++
		}
		leaf.visitFacets(w, s)
	}
	if present > 1 {
		n.fail(&w.st)
	}
}

func (xmlTextContent) visitFacets(w *facetWalker, s *string) {
	text, ok, err := xmlText{s}.format()
	switch {
	case err != nil:
		w.st.fail("", err.Error())
	case !ok:
		w.st.fail("", xmlMsgRequired)
	default:
		w.leaf(text)
	}
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
// Validate has already refused (the same rule said twice helps nobody). When
// Validate has found other failures, the totals may not have been computed
// (ComputeTotals refuses what they depend on), so failures on computed totals
// and on absent elements are left out then: they are consequences, not
// causes, and the caller sees them, if they remain, once the causes are fixed.
func (v *validator) xsdFacets() {
	others := len(v.probs) > 0
	var reported map[string]bool
	if others {
		reported = make(map[string]bool, len(v.probs))
		for _, p := range v.probs {
			reported[p.Campo] = true
		}
	}
	for _, f := range checkXSDFacets(v.c) {
		if others && (reported[f.Campo] || f.Mensaje == xmlMsgRequired || computedTotal(f.Campo)) {
			continue
		}
		v.probs = append(v.probs, f)
	}
}

// computedTotal reports whether campo is a total ComputeTotals gives, not
// an input of the request (tipoMoneda, tipoCambio).
func computedTotal(campo string) bool {
	return strings.HasPrefix(campo, "cfe.totales.") &&
		campo != "cfe.totales.tipoMoneda" && campo != "cfe.totales.tipoCambio"
}
