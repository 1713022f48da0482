package cfe

import (
	"slices"
	"strings"
	"testing"
)

func TestValidate_validRequestOfEachType(t *testing.T) {
	t.Parallel()
	for _, typ := range ElectronicTypes() {
		t.Run(typ.String(), func(t *testing.T) {
			if _, err := issue(validRequest(typ)); err != nil {
				t.Fatalf("%s: %v\n%s", typ.Name(), err, describeFields(ErrorFields(err)))
			}
		})
	}
}

// lines returns n copies of a request's first line.
func lines(r *Request, n int) []RequestDetalle {
	out := make([]RequestDetalle, n)
	for i := range out {
		out[i] = r.CFE.Detalles[0]
	}
	return out
}

func TestValidate_invalidRequests(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		typ       Type
		mutate    func(*Request)
		mutateCFE func(*CFE) // fields the request does not carry
		campo     string
		fragment  string
	}{
		// Type and identification of the document.
		{"unknown type", 999, nil, nil, "cfe.idDoc.tipoCfe", "tipo de CFE desconocido"},
		{"contingency type without its form's serie", 201, nil, nil, "cfe.idDoc.serie", "formulario de contingencia"},
		{"e-Ticket with a serie", ETicket, func(r *Request) { r.CFE.IdDoc.Serie = "A" }, nil, "cfe.idDoc.serie", "solo corresponde a un comprobante de contingencia"},
		{"e-Ticket with a number", ETicket, func(r *Request) { r.CFE.IdDoc.Numero = 7 }, nil, "cfe.idDoc.numero", "solo corresponde a un comprobante de contingencia"},
		{"e-Ticket correcting", ETicket, func(r *Request) { r.Corrige = "x" }, nil, "corrige", "solo corresponde"},
		{"contingency form dated after its key-in", 201, func(r *Request) {
			r.CFE.IdDoc.Serie, r.CFE.IdDoc.Numero, r.CFE.IdDoc.FechaEmision = "A", 7, datep("2026-11-24")
		}, nil, "cfe.idDoc.fechaEmision", "no puede ser posterior a la de su ingreso"},
		{"contingency form without its date", 201, func(r *Request) {
			r.CFE.IdDoc.Serie, r.CFE.IdDoc.Numero, r.CFE.IdDoc.FechaEmision = "A", 7, nil
		}, nil, "cfe.idDoc.fechaEmision", "obligatoria"},
		{"serie with Ñ", ETicket, nil, func(c *CFE) { c.IdDoc.Serie = "AÑ" }, "cfe.idDoc.serie", "serie inválida"},
		{"serie digit first then digit", ETicket, nil, func(c *CFE) { c.IdDoc.Serie = "12" }, "cfe.idDoc.serie", "serie inválida"},
		{"issue date 61 days after signing", ETicket, func(r *Request) { r.CFE.IdDoc.FechaEmision = datep("2027-01-23") }, nil,
			"cfe.idDoc.fechaEmision", "60 días"},
		{"e-Ticket without payment form", ETicket, func(r *Request) { r.CFE.IdDoc.FormaPago = 0 }, nil,
			"cfe.idDoc.formaPago", "obligatoria"},
		{"e-Remito with payment form", ERemito, func(r *Request) { r.CFE.IdDoc.FormaPago = 1 }, nil,
			"cfe.idDoc.formaPago", "no corresponde en e-Remito"},
		{"e-Remito without transfer type", ERemito, func(r *Request) { r.CFE.IdDoc.TipoTraslado = 0 }, nil,
			"cfe.idDoc.tipoTraslado", "obligatorio"},
		{"IMEBA gross amounts outside e-Boleta", ETicket, func(r *Request) { r.CFE.IdDoc.MontoBruto = 2 }, nil,
			"cfe.idDoc.montoBruto", "solo corresponde a e-Boleta"},
		{"export without sale clause", EFacturaExp, func(r *Request) { r.CFE.IdDoc.ClausulaVenta = "" }, nil,
			"cfe.idDoc.clausulaVenta", "obligatoria"},
		{"professional secrecy 2 outside cuenta ajena", ETicket, func(r *Request) { r.CFE.IdDoc.SecretoProfesional = 2 }, nil,
			"cfe.idDoc.secretoProfesional", "cuenta ajena"},

		// Receptor.
		{"e-Factura without receptor", EFactura, func(r *Request) { r.CFE.Receptor = nil }, nil,
			"cfe.receptor", "se identifica con su RUC"},
		{"e-Factura receptor with C.I.", EFactura, func(r *Request) {
			r.CFE.Receptor.TipoDocumento, r.CFE.Receptor.Documento = 3, "12345672"
		}, nil, "cfe.receptor.tipoDocumento", "RUC (tipo 2)"},
		{"e-Factura receptor RUC check digit", EFactura, func(r *Request) { r.CFE.Receptor.Documento = "214844360017" }, nil,
			"cfe.receptor.documento", "RUC inválido"},
		{"e-Factura receptor without address", EFactura, func(r *Request) { r.CFE.Receptor.Direccion = "" }, nil,
			"cfe.receptor.direccion", "obligatorio"},
		// 5 000 UI × 6.4208 = 32 104.00 pesos; 2 × 16 100.00 = 32 200.00 net.
		{"e-Ticket above the UI threshold without receptor", ETicket, func(r *Request) {
			r.CFE.Detalles[0].PrecioUnitario = decp("16100")
		}, nil, "cfe.receptor", "supera el tope de 5000 UI (32104.00 pesos)"},
		{"e-Ticket with perception without receptor", ETicket, func(r *Request) {
			r.CFE.Detalles[0].RetencionesPercepciones = []RequestRetencion{{Codigo: "2183213", Valor: dec("10")}}
		}, nil, "cfe.receptor", "retenciones o percepciones"},
		{"receptor C.I. check digit", ETicket, func(r *Request) {
			r.CFE.Receptor = &RequestReceptor{TipoDocumento: 3, CodigoPais: "UY", Documento: "12345673"}
		}, nil, "cfe.receptor.documento", "C.I. inválida"},
		{"passport number in the Uruguayan document field", ETicket, func(r *Request) {
			r.CFE.Receptor = &RequestReceptor{TipoDocumento: 5, CodigoPais: "BR", Documento: "FZ123456"}
		}, nil, "cfe.receptor.documento", "use documentoExt"},
		{"DNI from outside the region", ETicket, func(r *Request) {
			r.CFE.Receptor = &RequestReceptor{TipoDocumento: 6, CodigoPais: "US", DocumentoExt: "30123456"}
		}, nil, "cfe.receptor.codigoPais", "AR, BR, CL o PY"},
		{"postal code with letters", ETicket, func(r *Request) {
			r.CFE.Receptor = &RequestReceptor{RazonSocial: "Ana", CodigoPostal: "11A00"}
		}, nil, "cfe.receptor.codigoPostal", "hasta 5 dígitos"},
		{"export without receptor country", EFacturaExp, func(r *Request) { r.CFE.Receptor.Pais = "" }, nil,
			"cfe.receptor.pais", "obligatorio"},

		// Lines.
		{"no lines", ETicket, func(r *Request) { r.CFE.Detalles = nil }, nil, "cfe.detalles", "al menos una línea"},
		{"701 lines in an e-Ticket", ETicket, func(r *Request) {
			r.CFE.Detalles = lines(r, 701)
			r.CFE.Detalles[0].PrecioUnitario = decp("0.01") // stay below the UI threshold
			for i := range r.CFE.Detalles {
				r.CFE.Detalles[i].PrecioUnitario = decp("0.01")
			}
		}, nil, "cfe.detalles", "como máximo 700 líneas"},
		{"201 lines in an e-Factura", EFactura, func(r *Request) { r.CFE.Detalles = lines(r, 201) }, nil,
			"cfe.detalles", "como máximo 200 líneas"},
		{"indicator 8 outside remitos", ETicket, func(r *Request) { r.CFE.Detalles[0].IndicadorFacturacion = 8 }, nil,
			"cfe.detalles[0].indicadorFacturacion", "solo se admite en e-Remito"},
		{"indicator 9 outside e-Resguardo", EFactura, func(r *Request) { r.CFE.Detalles[0].IndicadorFacturacion = 9 }, nil,
			"cfe.detalles[0].indicadorFacturacion", "solo se admite en e-Resguardo"},
		{"indicator 13 outside e-Boleta", ETicket, func(r *Request) { r.CFE.Detalles[0].IndicadorFacturacion = 13 }, nil,
			"cfe.detalles[0].indicadorFacturacion", "solo se admite en e-Boleta"},
		{"indicator 10 in e-Boleta", EBoleta, func(r *Request) { r.CFE.Detalles[0].IndicadorFacturacion = 10 }, nil,
			"cfe.detalles[0].indicadorFacturacion", "no admitido en las líneas de e-Boleta"},
		{"indicator 14 with a seller identified by C.I.", EBoleta, func(r *Request) { r.CFE.Detalles[0].IndicadorFacturacion = 14 }, nil,
			"cfe.detalles[0].indicadorFacturacion", "exige un vendedor identificado con RUC"},
		{"missing indicator in an e-Ticket", ETicket, func(r *Request) { r.CFE.Detalles[0].IndicadorFacturacion = 0 }, nil,
			"cfe.detalles[0].indicadorFacturacion", "obligatorio"},
		{"IVA mínimo gross amounts with a basic-rate line", ETicket, func(r *Request) { r.CFE.IdDoc.MontoBruto = 3 }, nil,
			"cfe.detalles[0].indicadorFacturacion", "montoBruto 3"},
		{"exonerated CAE with a basic-rate line", ETicket, nil, func(c *CFE) {
			c.CAEData = CAEData{CAEID: "90269999990", DNro: 1, HNro: 100, CAEEspecial: 1, CausalCAEEsp: 1}
		}, "cfe.detalles[0].indicadorFacturacion", "exonerado"},
		{"IVA mínimo CAE with MntBruto 1 (A-C10)", ETicket, func(r *Request) { r.CFE.IdDoc.MontoBruto = 1 }, func(c *CFE) {
			c.CAEData = CAEData{CAEID: "90269999990", DNro: 1, HNro: 100, CAEEspecial: 2}
		}, "cfe.idDoc.montoBruto", "debe ser 3"},
		{"IVA en suspenso in an e-Boleta without MntBruto 2 (A-C115)", EBoleta, func(r *Request) {
			r.CFE.Detalles[0].IndicadorFacturacion = indSuspenso
		}, nil, "cfe.idDoc.montoBruto", "debe ser 2"},
		{"IVA en suspenso in an e-Boleta with MntBruto 1 (A-C115)", EBoletaNC, func(r *Request) {
			r.CFE.Detalles[0].IndicadorFacturacion = indSuspenso
			r.CFE.IdDoc.MontoBruto = 1
		}, nil, "cfe.idDoc.montoBruto", "IVA en suspenso"},
		{"global IVA en suspenso surcharge in an e-Boleta (A-C115)", EBoleta, func(r *Request) {
			r.CFE.DescuentosRecargosGlobales = []RequestGlobalAdjust{{TipoMovimiento: "R", Tipo: 1, Glosa: "Flete",
				Valor: dec("10"), IndicadorFacturacion: indSuspenso}}
		}, nil, "cfe.idDoc.montoBruto", "debe ser 2"},
		{"MntBruto 3 in a sale on behalf of others (V25 K-C1)", ETicketCtaAjena, func(r *Request) {
			r.CFE.Detalles[0].IndicadorFacturacion = indVentaMinimo
			r.CFE.IdDoc.MontoBruto = 3
		}, nil, "cfe.idDoc.montoBruto", "indicador de facturación 16"},
		{"perception on a line without agent indicator (B-C6)", EFactura, func(r *Request) {
			r.CFE.Detalles[0].RetencionesPercepciones = []RequestRetencion{{Codigo: "2183213", Valor: dec("10")}}
		}, nil, "cfe.detalles[0].indicadorAgenteResponsable", "obligatorio cuando la línea tiene retenciones"},
		{"otra tasa net without its IVA (A-C123)", EFactura, func(r *Request) {
			r.CFE.Detalles[0].IndicadorFacturacion = indOtraTasa
			r.CFE.Totales = &RequestTotales{MontoIvaOtraTasa: decp("0")}
		}, nil, "cfe.totales.montoIvaOtraTasa", "mayor que 0"},
		{"period before October 2011 (A-C7)", EFactura, func(r *Request) {
			r.CFE.IdDoc.PeriodoDesde, r.CFE.IdDoc.PeriodoHasta = datep("2011-09-30"), datep("2011-10-31")
		}, nil, "cfe.idDoc.periodoDesde", "fuera del rango"},
		{"value date in a later month (V25 A-C5.1)", EResguardo, func(r *Request) {
			r.CFE.IdDoc.FechaValor = datep("2026-12-01")
		}, nil, "cfe.idDoc.fechaValor", "mes posterior"},
		{"mandante is the issuer (V25 K-C4)", ETicketCtaAjena, func(r *Request) {
			r.CFE.ComplementoFiscal.Documento = testParams().Emisor.RUCEmisor
		}, nil, "cfe.complementoFiscal.documento", "no puede ser la empresa que emite"},
		{"reference dated 61 days after signing (F-C7)", ETicketNC, func(r *Request) {
			r.CFE.Referencias[0].Fecha = datep("2027-01-23")
		}, nil, "cfe.referencias[0].fecha", "60 días"},
		{"the same CFE referenced twice (V25 F-C3)", ETicketNC, func(r *Request) {
			r.CFE.Referencias = append(r.CFE.Referencias, r.CFE.Referencias[0])
		}, nil, "cfe.referencias[1].numero", "repite la referencia de la línea 1"},
		{"zero price on a taxed line", ETicket, func(r *Request) { r.CFE.Detalles[0].PrecioUnitario = decp("0") }, nil,
			"cfe.detalles[0].precioUnitario", "mayor que 0"},
		{"price on a free delivery", ETicket, func(r *Request) { r.CFE.Detalles[0].IndicadorFacturacion = 5 }, nil,
			"cfe.detalles[0].precioUnitario", "debe ser 0 en una entrega gratuita"},
		{"price on an e-Remito line", ERemito, func(r *Request) { r.CFE.Detalles[0].PrecioUnitario = decp("10") }, nil,
			"cfe.detalles[0].precioUnitario", "no llevan precio"},
		{"quantity with four decimals", ETicket, func(r *Request) { r.CFE.Detalles[0].Cantidad = decp("1.0005") }, nil,
			"cfe.detalles[0].cantidad", "como máximo 3 decimales"},
		{"price with seven decimals", ETicket, func(r *Request) { r.CFE.Detalles[0].PrecioUnitario = decp("1.0000001") }, nil,
			"cfe.detalles[0].precioUnitario", "como máximo 6 decimales"},
		{"item name of 81 characters", ETicket, func(r *Request) { r.CFE.Detalles[0].NombreItem = strings.Repeat("ñ", 81) }, nil,
			"cfe.detalles[0].nombreItem", "como máximo 80 caracteres"},
		{"control character in an item name", ETicket, func(r *Request) { r.CFE.Detalles[0].NombreItem = "Yerba\x00" }, nil,
			"cfe.detalles[0].nombreItem", "caracteres no admitidos"},
		{"adenda that is not UTF-8", ETicket, func(r *Request) { r.Adenda = "Mesa \xff" }, nil,
			"adenda", "caracteres no admitidos"},
		{"foreign document with a control character", ETicket, func(r *Request) {
			r.CFE.Receptor = &RequestReceptor{TipoDocumento: 5, CodigoPais: "BR", DocumentoExt: "FZ\x01"}
		}, nil, "cfe.receptor.documentoExt", "caracteres no admitidos"},
		{"six item codes", ETicket, func(r *Request) {
			r.CFE.Detalles[0].CodigosItem = make([]RequestCodigoItem, 6)
			for i := range r.CFE.Detalles[0].CodigosItem {
				r.CFE.Detalles[0].CodigosItem[i] = RequestCodigoItem{Tipo: "INT1", Codigo: "SKU-1"}
			}
		}, nil, "cfe.detalles[0].codigosItem", "como máximo 5"},
		{"GTIN13 with a wrong check digit", ETicket, func(r *Request) {
			r.CFE.Detalles[0].CodigosItem = []RequestCodigoItem{{Tipo: "INT1", Codigo: "A1"}, {Tipo: "GTIN13", Codigo: "4006381333932"}}
		}, nil, "cfe.detalles[0].codigosItem[1].codigo", "dígito verificador GS1"},
		{"agent indicator without retention table", EFactura, func(r *Request) { r.CFE.Detalles[0].IndicadorAgenteResponsable = "R" }, nil,
			"cfe.detalles[0].retencionesPercepciones", "agente o responsable"},
		{"retention code with letters", EFactura, func(r *Request) {
			r.CFE.Detalles[0].RetencionesPercepciones = []RequestRetencion{{Codigo: "21A3213", Valor: dec("10")}}
		}, nil, "cfe.detalles[0].retencionesPercepciones[0].codigo", "código inválido"},
		{"fiscal credit in an e-Boleta", EBoleta, func(r *Request) {
			r.CFE.Detalles[0].RetencionesPercepciones = []RequestRetencion{{Codigo: "2181410", Valor: dec("10")}}
		}, nil, "cfe.detalles[0].retencionesPercepciones[0].codigo", "no se admiten en e-Boleta"},
		{"e-Resguardo line without retentions", EResguardo, func(r *Request) { r.CFE.Detalles[0].RetencionesPercepciones = nil }, nil,
			"cfe.detalles[0].retencionesPercepciones", "obligatorio en e-Resguardo"},
		{"e-Resguardo line with goods", EResguardo, func(r *Request) { r.CFE.Detalles[0].NombreItem = "Servicio" }, nil,
			"cfe.detalles[0]", "solo llevan"},
		{"line amount that disagrees", ETicket, func(r *Request) { r.CFE.Detalles[0].MontoItem = decp("299.99") }, nil,
			"cfe.detalles[0].montoItem", "= 300.00"},
		{"line number out of order", ETicket, func(r *Request) { r.CFE.Detalles[0].NumeroLineaDetalle = 2 }, nil,
			"cfe.detalles[0].numeroLineaDetalle", "debe ser 1"},

		// Global discounts and surcharges.
		{"21 global adjustments", ETicket, func(r *Request) {
			for range 21 {
				r.CFE.DescuentosRecargosGlobales = append(r.CFE.DescuentosRecargosGlobales,
					RequestGlobalAdjust{TipoMovimiento: "D", Tipo: 1, Glosa: "Promo", Valor: dec("1"), IndicadorFacturacion: 3})
			}
		}, nil, "cfe.descuentosRecargosGlobales", "como máximo 20"},
		{"global discount in an e-Remito", ERemito, func(r *Request) {
			r.CFE.DescuentosRecargosGlobales = []RequestGlobalAdjust{{TipoMovimiento: "D", Tipo: 1, Glosa: "x", Valor: dec("1"), IndicadorFacturacion: 3}}
		}, nil, "cfe.descuentosRecargosGlobales", "no corresponde en e-Remito"},
		{"global discount with an e-Boleta indicator", ETicket, func(r *Request) {
			r.CFE.DescuentosRecargosGlobales = []RequestGlobalAdjust{{TipoMovimiento: "D", Tipo: 1, Glosa: "x", Valor: dec("1"), IndicadorFacturacion: 13}}
		}, nil, "cfe.descuentosRecargosGlobales[0].indicadorFacturacion", "solo se admite en e-Boleta"},
		{"global discount larger than its lines", ETicket, func(r *Request) {
			r.CFE.DescuentosRecargosGlobales = []RequestGlobalAdjust{{TipoMovimiento: "D", Tipo: 1, Glosa: "x", Valor: dec("301"), IndicadorFacturacion: 3}}
		}, nil, "cfe.totales.montoNetoIvaTasaBasica", "resulta negativo (-1.00)"},
		{"global movement neither D nor R", ETicket, func(r *Request) {
			r.CFE.DescuentosRecargosGlobales = []RequestGlobalAdjust{{TipoMovimiento: "X", Tipo: 1, Glosa: "x", Valor: dec("1"), IndicadorFacturacion: 3}}
		}, nil, "cfe.descuentosRecargosGlobales[0].tipoMovimiento", "D (descuento) o R (recargo)"},

		// Payment means, references, own collection.
		{"41 payment lines", ETicket, func(r *Request) {
			for range 41 {
				r.CFE.MediosPago = append(r.CFE.MediosPago, RequestMedioPago{Glosa: "Efectivo", Valor: dec("1")})
			}
		}, nil, "cfe.mediosPago", "como máximo 40"},
		{"credit note without references", ETicketNC, func(r *Request) { r.CFE.Referencias = nil }, nil,
			"cfe.referencias", "se debe referenciar el comprobante que se corrige"},
		{"41 references", ETicketNC, func(r *Request) {
			r.CFE.Referencias = lineRefs(41)
		}, nil, "cfe.referencias", "como máximo 40"},
		{"global reference without reason", ETicketNC, func(r *Request) {
			r.CFE.Referencias = []RequestReferencia{{IndicadorGlobal: 1}}
		}, nil, "cfe.referencias[0].razon", "obligatorio"},
		{"global reference that names a CFE", ETicketNC, func(r *Request) {
			r.CFE.Referencias[0].IndicadorGlobal = 1
		}, nil, "cfe.referencias[0].indicadorGlobal", "no se informan tipoCfe"},
		{"reference without serie", EFacturaND, func(r *Request) { r.CFE.Referencias[0].Serie = "" }, nil,
			"cfe.referencias[0].serie", "obligatoria"},
		{"reference with a lowercase serie", EFacturaND, func(r *Request) { r.CFE.Referencias[0].Serie = "a" }, nil,
			"cfe.referencias[0].serie", "serie inválida"},
		{"e-Remito deduction line without reference", ERemito, func(r *Request) { r.CFE.Detalles[0].IndicadorFacturacion = 8 }, nil,
			"cfe.referencias", "indicador 8"},
		{"own collection with a taxed line", ETicket, func(r *Request) {
			r.CFE.IdDoc.IndicadorCobranzaPropia = 1
			r.CFE.Referencias = lineRefs(1)
		}, nil, "cfe.detalles[0].indicadorFacturacion", "cobranza propia"},
		{"own collection on a credit note", ETicketNC, func(r *Request) {
			r.CFE.IdDoc.IndicadorCobranzaPropia = 1
			r.CFE.Detalles[0].IndicadorFacturacion = 6
		}, nil, "cfe.idDoc.indicadorCobranzaPropia", "no a sus notas"},
		{"own collection without references", EFactura, func(r *Request) {
			r.CFE.IdDoc.IndicadorCobranzaPropia = 1
			r.CFE.Detalles[0].IndicadorFacturacion = 6
		}, nil, "cfe.referencias", "cobranza propia"},
		{"own collection with a global discount", EFactura, func(r *Request) {
			r.CFE.IdDoc.IndicadorCobranzaPropia = 1
			r.CFE.Detalles[0].IndicadorFacturacion = 6
			r.CFE.Referencias = lineRefs(1)
			r.CFE.DescuentosRecargosGlobales = []RequestGlobalAdjust{{TipoMovimiento: "D", Tipo: 1, Glosa: "x", Valor: dec("1"), IndicadorFacturacion: 6}}
		}, nil, "cfe.descuentosRecargosGlobales", "cobranza propia"},

		// Totals, currency, zone K, emitter.
		{"foreign currency without exchange rate", ETicket, func(r *Request) {
			r.CFE.Totales = &RequestTotales{TipoMoneda: "USD"}
		}, nil, "cfe.totales.tipoCambio", "obligatorio cuando la moneda no es UYU"},
		{"other-rate IVA line without its IVA", EFactura, func(r *Request) { r.CFE.Detalles[0].IndicadorFacturacion = 4 }, nil,
			"cfe.totales.montoIvaOtraTasa", "obligatorio"},
		{"declared total that disagrees", ETicket, func(r *Request) {
			r.CFE.Totales = &RequestTotales{MontoTotal: decp("366.01")}
		}, nil, "cfe.totales.montoTotal", "(366.00)"},
		{"declared line count that disagrees", ETicket, func(r *Request) {
			r.CFE.Totales = &RequestTotales{CantidadLineasDetalle: 2}
		}, nil, "cfe.totales.cantidadLineasDetalle", "debe ser 1"},
		{"cuenta ajena without mandante", ETicketCtaAjena, func(r *Request) { r.CFE.ComplementoFiscal = nil }, nil,
			"cfe.complementoFiscal", "obligatorio"},
		{"mandante on an e-Ticket", ETicket, func(r *Request) {
			r.CFE.ComplementoFiscal = &RequestComplementoFiscal{TipoDocumento: 2, CodigoPais: "UY", Documento: "214844360018", Nombre: "X"}
		}, nil, "cfe.complementoFiscal", "solo corresponde"},
		{"emitter RUC other than the profile's", ETicket, func(r *Request) {
			r.CFE.Emisor = &RequestEmisor{RUC: "214844360018"}
		}, nil, "cfe.emisor.ruc", "no coincide con la empresa configurada"},
		{"three emitter phones", ETicket, func(r *Request) {
			r.CFE.Emisor = &RequestEmisor{Telefonos: []string{"1", "2", "3"}}
		}, nil, "cfe.emisor.telefonos", "como máximo 2"},
	}
	if len(tests) < 30 {
		t.Fatalf("only %d invalid requests", len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := validRequest(ETicket)
			if info, ok := tt.typ.Info(); ok && !info.Contingency {
				r = validRequest(tt.typ)
			} else {
				r.CFE.IdDoc.TipoCfe = tt.typ
			}
			if tt.mutate != nil {
				tt.mutate(r)
			}
			c, err := r.ToCFE(testParams())
			if err == nil {
				if tt.mutateCFE != nil {
					tt.mutateCFE(c)
				}
				err = Validate(c, DefaultTaxConfig())
			}
			wantField(t, err, tt.campo, tt.fragment)
			for _, f := range ErrorFields(err) {
				if f.Campo != "cfe.idDoc.serie" && !requestHasPath(f.Campo) {
					t.Errorf("Campo %q is not a field of the request", f.Campo)
				}
			}
			if RespuestaOf(err) != RespRechazoValidacion {
				t.Errorf("codigo_respuesta %q, want %q", RespuestaOf(err), RespRechazoValidacion)
			}
		})
	}
}

// lineRefs returns n references to e-Tickets A-1 … A-n.
func lineRefs(n int) []RequestReferencia {
	out := make([]RequestReferencia, n)
	for i := range out {
		out[i] = RequestReferencia{TipoCfe: ETicket, Serie: "A", Numero: int64(i + 1)}
	}
	return out
}

func TestValidate_lineLimitsAreInclusive(t *testing.T) {
	t.Parallel()
	r := validRequest(ETicket)
	r.CFE.Detalles = lines(r, 700)
	for i := range r.CFE.Detalles {
		r.CFE.Detalles[i].PrecioUnitario = decp("0.01")
	}
	if _, err := issue(r); err != nil {
		t.Fatalf("700 lines in an e-Ticket: %v", err)
	}
	r = validRequest(EFactura)
	r.CFE.Detalles = lines(r, 200)
	if _, err := issue(r); err != nil {
		t.Fatalf("200 lines in an e-Factura: %v", err)
	}
}

func TestValidate_reportsEveryFailure(t *testing.T) {
	t.Parallel()
	r := validRequest(EFactura)
	r.CFE.Receptor.Documento = "214844360017"
	r.CFE.Detalles[0].NombreItem = ""
	r.CFE.Detalles = append(r.CFE.Detalles, RequestDetalle{IndicadorFacturacion: 9, NombreItem: "x",
		Cantidad: decp("1"), PrecioUnitario: decp("1")})
	_, err := issue(r)
	wantField(t, err, "cfe.receptor.documento", "RUC inválido")
	wantField(t, err, "cfe.detalles[0].nombreItem", "obligatorio")
	wantField(t, err, "cfe.detalles[1].indicadorFacturacion", "solo se admite en e-Resguardo")
	for _, f := range ErrorFields(err) {
		n := 0
		for _, g := range ErrorFields(err) {
			if f == g {
				n++
			}
		}
		if n > 1 {
			t.Errorf("field error repeated %d times: %v", n, f)
		}
	}
}

func TestValidate_badTaxConfigIsInternal(t *testing.T) {
	t.Parallel()
	c, err := validRequest(ETicket).ToCFE(testParams())
	if err != nil {
		t.Fatal(err)
	}
	if err := Validate(c, TaxConfig{IVATasaBasica: dec("22"), IVATasaMin: dec("10")}); ErrorCode(err) != EINTERNAL {
		t.Fatalf("Validate with no UI threshold: %v, want EINTERNAL", err)
	}
}

// CheckEmisor names the fields without the request's prefix, so that the
// profiles can report them under their own keys.
func TestCheckEmisor(t *testing.T) {
	t.Parallel()
	if fs := CheckEmisor(testEmisor); len(fs) != 0 {
		t.Fatalf("CheckEmisor(testEmisor) = %v, want no problems", fs)
	}
	e := testEmisor
	e.RUCEmisor = "219999830018" // check digit 9, not 8
	e.RznSoc = "Almacén\x07"     // a control character
	e.Telefono = []string{"2900 1234", strings.Repeat("9", 21)}
	e.CdgDGISucur = 0
	var got []string
	for _, f := range CheckEmisor(e) {
		got = append(got, f.Campo)
	}
	want := []string{"ruc", "razonSocial", "telefonos[1]", "codigoSucursal"}
	if !slices.Equal(got, want) {
		t.Errorf("CheckEmisor fields = %v, want %v", got, want)
	}
}

func TestValidate_eBoletaIVASuspensoWithMntBruto2(t *testing.T) {
	t.Parallel()
	for _, typ := range []Type{EBoleta, EBoletaNC, EBoletaND} {
		t.Run(typ.String(), func(t *testing.T) {
			r := validRequest(typ)
			r.CFE.Detalles[0].IndicadorFacturacion = indSuspenso
			r.CFE.IdDoc.MontoBruto = 2
			c, err := issue(r)
			if err != nil {
				t.Fatalf("A-C115 met, yet: %v\n%s", err, describeFields(ErrorFields(err)))
			}
			if c.Totales.MntIVaenSusp == nil || !c.Totales.MntIVaenSusp.Equal(dec("300")) {
				t.Fatalf("MntIVaenSusp %v, want 300.00", c.Totales.MntIVaenSusp)
			}
		})
	}
}

func TestCheckCAE(t *testing.T) {
	t.Parallel()
	cae := func(especial int) CAEData {
		d := CAEData{CAEID: "90269999990", DNro: 1, HNro: 100, FecVenc: Date{2027, 12, 31}, CAEEspecial: especial}
		if especial == 1 {
			d.CausalCAEEsp = 1
		}
		return d
	}
	// ivaMinimo makes the line a sale of an IVA mínimo taxpayer (indicator 16),
	// which montoBruto 3 admits, and sets montoBruto 3.
	ivaMinimo := func(r *Request) {
		r.CFE.Detalles[0].IndicadorFacturacion = indVentaMinimo
		r.CFE.IdDoc.MontoBruto = 3
	}
	tests := []struct {
		name     string
		typ      Type
		mutate   func(*Request)
		especial int
		campo    string // "" when the CFE fits the CAE
		fragment string
	}{
		{"ordinary CAE, MntBruto 0", ETicket, nil, 0, "", ""},
		{"ordinary CAE, MntBruto 1", ETicket, func(r *Request) { r.CFE.IdDoc.MontoBruto = 1 }, 0, "", ""},
		{"ordinary CAE, MntBruto 3", ETicket, ivaMinimo, 0, "cfe.idDoc.montoBruto", "solo corresponde con un rango CAE especial"},
		{"ordinary CAE, MntBruto 3, e-Factura", EFactura, ivaMinimo, 0, "cfe.idDoc.montoBruto", "CAEEspecial 2, 3 o 4"},
		{"exonerated CAE, MntBruto 3", ETicket, ivaMinimo, 1, "cfe.idDoc.montoBruto", "no lo es"},
		{"IVA mínimo CAE, MntBruto 3", ETicket, ivaMinimo, 2, "", ""},
		{"Monotributo CAE, MntBruto 3", EFactura, ivaMinimo, 3, "", ""},
		{"Monotributo MIDES CAE, MntBruto 3", ETicketNC, ivaMinimo, 4, "", ""},
		{"IVA mínimo CAE, MntBruto 0", ETicket, nil, 2, "cfe.idDoc.montoBruto", "debe ser 3"},
		{"Monotributo CAE, MntBruto 1", EFactura, func(r *Request) { r.CFE.IdDoc.MontoBruto = 1 }, 3, "cfe.idDoc.montoBruto", "Monotributo (CAEEspecial 3)"},
		{"Monotributo MIDES CAE, e-Factura Exportación", EFacturaExp, nil, 4, "cfe.idDoc.montoBruto", "debe ser 3"},
		{"IVA mínimo CAE, e-Boleta with MntBruto 2", EBoleta, func(r *Request) { r.CFE.IdDoc.MontoBruto = 2 }, 2, "cfe.idDoc.montoBruto", "debe ser 3"},
		// A-C10's exception: sales on behalf of others.
		{"ordinary CAE, cuenta ajena", ETicketCtaAjena, nil, 0, "", ""},
		{"ordinary CAE, cuenta ajena, mandante's IVA mínimo line", EFacturaCtaAjena, func(r *Request) {
			r.CFE.Detalles[0].IndicadorFacturacion = indVentaMinimo
		}, 0, "", ""},
		// V25 G-C5: no sale on behalf of others with a special CAE.
		{"IVA mínimo CAE, cuenta ajena", ETicketCtaAjena, nil, 2, "cfe.idDoc.tipoCfe", "cuenta ajena"},
		{"Monotributo CAE, cuenta ajena note", EFacturaCtaAjenaNC, ivaMinimo, 3, "cfe.idDoc.tipoCfe", "CAEEspecial 3"},
		// A-C17: Monotributo issuers do not use IVA al día.
		{"Monotributo CAE with ivaAlDia", ETicket, func(r *Request) { ivaMinimo(r); r.CFE.IdDoc.IvaAlDia = 1 }, 3, "cfe.idDoc.ivaAlDia", "Monotributo"},
		{"Monotributo MIDES CAE with ivaAlDia", EFactura, func(r *Request) { ivaMinimo(r); r.CFE.IdDoc.IvaAlDia = 1 }, 4, "cfe.idDoc.ivaAlDia", "Monotributo MIDES"},
		{"IVA mínimo CAE with ivaAlDia", ETicket, func(r *Request) { ivaMinimo(r); r.CFE.IdDoc.IvaAlDia = 1 }, 2, "", ""},
		// Types without A-C10.
		{"IVA mínimo CAE, e-Remito", ERemito, nil, 2, "", ""},
		{"Monotributo CAE, e-Resguardo", EResguardo, nil, 3, "", ""},
		{"IVA mínimo CAE, e-Remito de Exportación", ERemitoExp, nil, 2, "", ""},
		// G-C5 1: an exonerated CAE bans the taxed indicators.
		{"exonerated CAE, basic-rate line", ETicket, nil, 1, "cfe.detalles[0].indicadorFacturacion", "exonerado"},
		{"exonerated CAE, exempt line", ETicket, func(r *Request) { r.CFE.Detalles[0].IndicadorFacturacion = indExento }, 1, "", ""},
		{"exonerated CAE, global surcharge at the basic rate", ETicket, func(r *Request) {
			r.CFE.Detalles[0].IndicadorFacturacion = indExento
			r.CFE.DescuentosRecargosGlobales = []RequestGlobalAdjust{{TipoMovimiento: "R", Tipo: 1, Glosa: "Flete",
				Valor: dec("10"), IndicadorFacturacion: indTasaBasica}}
		}, 1, "cfe.descuentosRecargosGlobales[0].indicadorFacturacion", "exonerado"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := validRequest(tt.typ)
			if tt.mutate != nil {
				tt.mutate(r)
			}
			c, err := r.ToCFE(testParams())
			if err != nil {
				t.Fatal(err)
			}
			err = CheckCAE(c, cae(tt.especial))
			if tt.campo == "" {
				if err != nil {
					t.Fatalf("refused: %v\n%s", err, describeFields(ErrorFields(err)))
				}
			} else {
				wantField(t, err, tt.campo, tt.fragment)
				if RespuestaOf(err) != RespRechazoValidacion {
					t.Errorf("codigo_respuesta %q, want %q", RespuestaOf(err), RespRechazoValidacion)
				}
			}
			// Validate applies the same rules once the CFE carries its CAE.
			c.CAEData = cae(tt.especial)
			verr := Validate(c, DefaultTaxConfig())
			if tt.campo == "" {
				if verr != nil {
					t.Fatalf("Validate with the CAE: %v\n%s", verr, describeFields(ErrorFields(verr)))
				}
			} else {
				wantField(t, verr, tt.campo, tt.fragment)
			}
		})
	}
}
