package cfe

import (
	"strings"
	"testing"
)

// TestValidate_DGIRules refuses, one per rule, requests that break a rule of
// Formato de los CFE (V24, and V25 where named) not already covered by
// TestValidate_invalidRequests. Each subtest is named after the rule's id, as
// docs/dgi-rules.md cites it.
func TestValidate_DGIRules(t *testing.T) {
	t.Parallel()
	compraME := func(ind int) func(*Request) {
		return func(r *Request) {
			r.CFE.IdDoc.IndicadorCompraMonedaExt = ind
		}
	}
	tests := []struct {
		rule     string
		typ      Type
		mutate   func(*Request)
		campo    string
		fragment string
	}{
		{"A-C5.1 value date outside e-Resguardo", ETicket, func(r *Request) { r.CFE.IdDoc.FechaValor = datep("2026-11-01") },
			"cfe.idDoc.fechaValor", "solo corresponde a e-Resguardo"},
		{"A-C6 transfer type 3", ERemito, func(r *Request) { r.CFE.IdDoc.TipoTraslado = 3 }, "cfe.idDoc.tipoTraslado", "no admitido"},
		{"A-C6 transfer type outside remitos", ETicket, func(r *Request) { r.CFE.IdDoc.TipoTraslado = 1 }, "cfe.idDoc.tipoTraslado", "no corresponde"},
		{"A-C6.1 owner data outside remitos", EFactura, func(r *Request) { r.CFE.IdDoc.IndicadorPropiedad = 1 },
			"cfe.idDoc.indicadorPropiedad", "solo corresponden a remitos"},
		{"A-C6.2 third-party goods without owner document", ERemito, func(r *Request) {
			r.CFE.IdDoc.IndicadorPropiedad, r.CFE.IdDoc.RazonSocialPropietario = 1, "Dueño SA"
		}, "cfe.idDoc.tipoDocumentoPropietario", "obligatorio"},
		{"A-C6.4 owner RUC check digit", ERemito, func(r *Request) {
			r.CFE.IdDoc.IndicadorPropiedad, r.CFE.IdDoc.TipoDocumentoPropietario = 1, 2
			r.CFE.IdDoc.CodigoPaisPropietario, r.CFE.IdDoc.DocumentoPropietario = "UY", "214844360017"
			r.CFE.IdDoc.RazonSocialPropietario = "Dueño SA"
		}, "cfe.idDoc.documentoPropietario", "RUC inválido"},
		{"A-C6.6 third-party goods without owner name", ERemito, func(r *Request) {
			r.CFE.IdDoc.IndicadorPropiedad, r.CFE.IdDoc.TipoDocumentoPropietario = 1, 2
			r.CFE.IdDoc.CodigoPaisPropietario, r.CFE.IdDoc.DocumentoPropietario = "UY", "214844360018"
		}, "cfe.idDoc.razonSocialPropietario", "obligatorio"},
		{"A-C7 period in a remito", ERemito, func(r *Request) { r.CFE.IdDoc.PeriodoDesde = datep("2026-11-01") },
			"cfe.idDoc.periodoDesde", "no corresponde"},
		{"A-C8 period ends before it starts", ETicket, func(r *Request) {
			r.CFE.IdDoc.PeriodoDesde, r.CFE.IdDoc.PeriodoHasta = datep("2026-11-10"), datep("2026-11-01")
		}, "cfe.idDoc.periodoHasta", "anterior a periodoDesde"},
		{"A-C10 value 4", ETicket, func(r *Request) { r.CFE.IdDoc.MontoBruto = 4 }, "cfe.idDoc.montoBruto", "no admitido"},
		{"A-C10 in an e-Remito", ERemito, func(r *Request) { r.CFE.IdDoc.MontoBruto = 1 }, "cfe.idDoc.montoBruto", "no corresponde"},
		{"A-C11 payment form 3", EFactura, func(r *Request) { r.CFE.IdDoc.FormaPago = 3 }, "cfe.idDoc.formaPago", "1 (contado) o 2 (crédito)"},
		{"A-C12 due date in an e-Resguardo", EResguardo, func(r *Request) { r.CFE.IdDoc.FechaVencimiento = datep("2026-12-01") },
			"cfe.idDoc.fechaVencimiento", "no corresponde"},
		{"A-C13 sale clause outside exports", ETicket, func(r *Request) { r.CFE.IdDoc.ClausulaVenta = "FOB" },
			"cfe.idDoc.clausulaVenta", "no corresponde"},
		{"A-C14 export without sale modality", EFacturaExp, func(r *Request) { r.CFE.IdDoc.ModalidadVenta = 0 },
			"cfe.idDoc.modalidadVenta", "obligatoria"},
		{"A-C14 Tax Free on an e-Factura", EFactura, func(r *Request) { r.CFE.IdDoc.ModalidadVenta = 80 },
			"cfe.idDoc.modalidadVenta", "no admitido"},
		{"A-C14 modality on a cuenta ajena e-Ticket", ETicketCtaAjena, func(r *Request) { r.CFE.IdDoc.ModalidadVenta = 90 },
			"cfe.idDoc.modalidadVenta", "no corresponde"},
		{"A-C15 export without transport", EFacturaExp, func(r *Request) { r.CFE.IdDoc.ViaTransporte = 0 },
			"cfe.idDoc.viaTransporte", "obligatoria"},
		{"A-C15 transport outside exports", ETicket, func(r *Request) { r.CFE.IdDoc.ViaTransporte = 1 },
			"cfe.idDoc.viaTransporte", "no corresponde"},
		{"A-C17 IVA al día in an e-Boleta", EBoleta, func(r *Request) { r.CFE.IdDoc.IvaAlDia = 1 }, "cfe.idDoc.ivaAlDia", "no corresponde"},
		{"A-C18 value 3", ETicket, func(r *Request) { r.CFE.IdDoc.SecretoProfesional = 3 }, "cfe.idDoc.secretoProfesional", "no admitido"},
		{"A-C18 with A-C21 2", EBoleta, func(r *Request) {
			compraME(2)(r)
			r.CFE.IdDoc.SecretoProfesional = 1
			r.CFE.Detalles[0].IndicadorFacturacion = indCompraME
		}, "cfe.idDoc.secretoProfesional", "moneda extranjera por cuenta ajena"},
		{"A-C19 in an e-Remito", ERemito, func(r *Request) { r.CFE.IdDoc.IndicadorPagoCuentaTerceros = 1 },
			"cfe.idDoc.indicadorPagoCuentaTerceros", "no corresponde"},
		{"A-C20 in an e-Boleta", EBoleta, func(r *Request) { r.CFE.IdDoc.IndicadorCobranzaPropia = 1 },
			"cfe.idDoc.indicadorCobranzaPropia", "solo corresponde a e-Ticket y e-Factura"},
		{"A-C21 outside e-Boleta", ETicket, compraME(1), "cfe.idDoc.indicadorCompraMonedaExtranjera", "solo corresponde a e-Boleta"},
		{"A-C21 requires indicator 17", EBoleta, compraME(1), "cfe.detalles[0].indicadorFacturacion", "solo se admite el indicador 17"},
		{"A-C40 emitter RUC check digit", ETicket, nil, "cfe.emisor.ruc", "RUC inválido"},
		{"A-C60 e-Remito without receptor", ERemito, func(r *Request) { r.CFE.Receptor = nil }, "cfe.receptor", "siempre se identifica"},
		{"A-C60 e-Resguardo without receptor", EResguardo, func(r *Request) { r.CFE.Receptor = nil }, "cfe.receptor", "retenido"},
		{"A-C60 e-Boleta without seller", EBoleta, func(r *Request) { r.CFE.Receptor = nil }, "cfe.receptor", "vendedor"},
		{"A-C61 RUC from another country", ETicket, func(r *Request) {
			r.CFE.Receptor = &RequestReceptor{TipoDocumento: 2, CodigoPais: "AR", Documento: "214844360018"}
		}, "cfe.receptor.codigoPais", "debe ser UY"},
		{"A-C62 NIE with letters", ETicket, func(r *Request) {
			r.CFE.Receptor = &RequestReceptor{TipoDocumento: 1, CodigoPais: "UY", Documento: "9123456A"}
		}, "cfe.receptor.documento", "NIE inválido"},
		{"A-C62.1 foreign document in an e-Factura", EFactura, func(r *Request) { r.CFE.Receptor.DocumentoExt = "X123" },
			"cfe.receptor.documentoExt", "no corresponde"},
		{"A-C63 e-Factura without receptor name", EFactura, func(r *Request) { r.CFE.Receptor.RazonSocial = "" },
			"cfe.receptor.razonSocial", "obligatorio"},
		{"A-C66 export without receptor region", EFacturaExp, func(r *Request) { r.CFE.Receptor.Departamento = "" },
			"cfe.receptor.departamento", "obligatorio"},
		{"A-C69 delivery place in an e-Resguardo", EResguardo, func(r *Request) { r.CFE.Receptor.LugarEntrega = "Puerto" },
			"cfe.receptor.lugarEntrega", "no corresponde"},
		{"A-C110 foreign currency purchase not in UYU", EBoleta, func(r *Request) {
			compraME(1)(r)
			r.CFE.Detalles[0].IndicadorFacturacion = indCompraME
			r.CFE.Totales = &RequestTotales{TipoMoneda: "USD", TipoCambio: decp("40")}
		}, "cfe.totales.tipoMoneda", "debe ser UYU"},
		{"A-C111 exchange rate with 4 decimals", EFacturaExp, func(r *Request) { r.CFE.Totales.TipoCambio = decp("40.1234") },
			"cfe.totales.tipoCambio", "3 decimales"},
		{"A-C111 exchange rate for pesos", ETicket, func(r *Request) {
			r.CFE.Totales = &RequestTotales{TipoMoneda: "UYU", TipoCambio: decp("0")}
		}, "cfe.totales.tipoCambio", "mayor que 0"},
		{"A-C117 declared net that disagrees", ETicket, func(r *Request) {
			r.CFE.Totales = &RequestTotales{MontoNetoIvaTasaBasica: decp("299.99")}
		}, "cfe.totales.montoNetoIvaTasaBasica", "no coincide"},
		{"A-C122 declared IVA that disagrees", ETicket, func(r *Request) {
			r.CFE.Totales = &RequestTotales{MontoIvaTasaBasica: decp("66.01")}
		}, "cfe.totales.montoIvaTasaBasica", "no coincide"},
		{"A-C125 declared retentions that disagree", EResguardo, func(r *Request) {
			r.CFE.Totales = &RequestTotales{MontoRetenido: decp("1000")}
		}, "cfe.totales.montoRetenido", "no coincide"},
		{"A-C130 declared amount to pay that disagrees", ETicket, func(r *Request) {
			r.CFE.Totales = &RequestTotales{MontoPagar: decp("365")}
		}, "cfe.totales.montoPagar", "no coincide"},
		{"B-C4 indicator 13 with a RUC seller", EBoleta, func(r *Request) { r.CFE.Receptor = receptorRUC() },
			"cfe.detalles[0].indicadorFacturacion", "no admite un vendedor identificado con RUC"},
		{"B-C4 indicator 15 with a C.I. seller", EBoleta, func(r *Request) { r.CFE.Detalles[0].IndicadorFacturacion = indBoletaIMEBA },
			"cfe.detalles[0].indicadorFacturacion", "exige un vendedor identificado con RUC"},
		{"B-C4 indicator 17 without A-C21", EBoleta, func(r *Request) { r.CFE.Detalles[0].IndicadorFacturacion = indCompraME },
			"cfe.detalles[0].indicadorFacturacion", "exige idDoc.indicadorCompraMonedaExtranjera"},
		{"B-C4 indicator 9 without reference", EResguardo, func(r *Request) { r.CFE.Detalles[0].IndicadorFacturacion = indAnulaResg },
			"cfe.referencias", "anulan un resguardo"},
		{"B-C6 value X", ETicket, func(r *Request) {
			r.CFE.Detalles[0].IndicadorAgenteResponsable = "X"
			r.CFE.Detalles[0].RetencionesPercepciones = []RequestRetencion{{Codigo: "2183213", Valor: dec("10")}}
		}, "cfe.detalles[0].indicadorAgenteResponsable", "R (responsable"},
		{"B-C7 item without name", ETicket, func(r *Request) { r.CFE.Detalles[0].NombreItem = "" },
			"cfe.detalles[0].nombreItem", "obligatorio"},
		{"B-C7.1 NCM outside exports", ETicket, func(r *Request) { r.CFE.Detalles[0].NCM = "0201.10" }, "cfe.detalles[0].ncm", "no corresponde"},
		{"B-C10 unit of 5 characters", ETicket, func(r *Request) { r.CFE.Detalles[0].UnidadMedida = "caja6" },
			"cfe.detalles[0].unidadMedida", "como máximo 4"},
		{"B-C12 discount percentage with 4 decimals", ETicket, func(r *Request) { r.CFE.Detalles[0].DescuentoPorcentaje = decp("1.2345") },
			"cfe.detalles[0].descuentoPorcentaje", "como máximo 3 decimales"},
		{"B-C14 sub-discount type 3", ETicket, func(r *Request) {
			r.CFE.Detalles[0].DescuentoMonto = decp("1")
			r.CFE.Detalles[0].SubDescuentos = []RequestSubAjuste{{Tipo: 3, Valor: dec("1")}}
		}, "cfe.detalles[0].subDescuentos[0].tipo", "no admitido"},
		{"B-C12 discount in an e-Remito de Exportación", ERemitoExp, func(r *Request) { r.CFE.Detalles[0].DescuentoMonto = decp("1") },
			"cfe.detalles[0].descuentoMonto", "no corresponde"},
		{"B-C22 subject amount 0", EResguardo, func(r *Request) { r.CFE.Detalles[0].RetencionesPercepciones[0].MontoSujeto = decp("0") },
			"cfe.detalles[0].retencionesPercepciones[0].montoSujeto", "mayor que 0"},
		{"B-C22 e-Resguardo without subject amount", EResguardo, func(r *Request) { r.CFE.Detalles[0].RetencionesPercepciones[0].MontoSujeto = nil },
			"cfe.detalles[0].retencionesPercepciones[0].montoSujeto", "obligatorio"},
		{"B-C23 retention value 0", EResguardo, func(r *Request) { r.CFE.Detalles[0].RetencionesPercepciones[0].Valor = dec("0") },
			"cfe.detalles[0].retencionesPercepciones[0].valor", "mayor que 0"},
		{"B retentions in an e-Remito", ERemito, func(r *Request) {
			r.CFE.Detalles[0].RetencionesPercepciones = []RequestRetencion{{Codigo: "2183213", Valor: dec("10")}}
		}, "cfe.detalles[0].retencionesPercepciones", "no corresponde"},
		{"C-C1 subtotal number 21", ETicket, func(r *Request) {
			r.CFE.SubTotalesInfo = []RequestSubTotal{{Numero: 21, Glosa: "Bebidas", Valor: dec("1")}}
		}, "cfe.subTotalesInfo[0].numero", "de 1 a 20"},
		{"C-C2 subtotal without title", ETicket, func(r *Request) {
			r.CFE.SubTotalesInfo = []RequestSubTotal{{Numero: 1, Valor: dec("1")}}
		}, "cfe.subTotalesInfo[0].glosa", "obligatorio"},
		{"D-C3 type 3", ETicket, func(r *Request) {
			r.CFE.DescuentosRecargosGlobales = []RequestGlobalAdjust{{TipoMovimiento: "D", Tipo: 3, Glosa: "x", Valor: dec("1"), IndicadorFacturacion: indTasaBasica}}
		}, "cfe.descuentosRecargosGlobales[0].tipo", "obligatorio"},
		{"D-C5 without gloss", ETicket, func(r *Request) {
			r.CFE.DescuentosRecargosGlobales = []RequestGlobalAdjust{{TipoMovimiento: "D", Tipo: 1, Valor: dec("1"), IndicadorFacturacion: indTasaBasica}}
		}, "cfe.descuentosRecargosGlobales[0].glosa", "obligatorio"},
		{"D-C7 without indicator", ETicket, func(r *Request) {
			r.CFE.DescuentosRecargosGlobales = []RequestGlobalAdjust{{TipoMovimiento: "D", Tipo: 1, Glosa: "x", Valor: dec("1")}}
		}, "cfe.descuentosRecargosGlobales[0].indicadorFacturacion", "obligatorio"},
		{"D-C7 taxed indicator with MntBruto 3", ETicket, func(r *Request) {
			r.CFE.IdDoc.MontoBruto = 3
			r.CFE.Detalles[0].IndicadorFacturacion = indVentaMinimo
			r.CFE.DescuentosRecargosGlobales = []RequestGlobalAdjust{{TipoMovimiento: "R", Tipo: 1, Glosa: "x", Valor: dec("1"), IndicadorFacturacion: indTasaBasica}}
		}, "cfe.descuentosRecargosGlobales[0].indicadorFacturacion", "montoBruto 3"},
		{"E-C3 payment without gloss", ETicket, func(r *Request) {
			r.CFE.MediosPago = []RequestMedioPago{{Codigo: 1, Valor: dec("366")}}
		}, "cfe.mediosPago[0].glosa", "obligatorio"},
		{"E payment in an e-Remito", ERemito, func(r *Request) {
			r.CFE.MediosPago = []RequestMedioPago{{Codigo: 1, Glosa: "Efectivo", Valor: dec("1")}}
		}, "cfe.mediosPago", "no corresponde"},
		{"F-C1 debit note without reference", EFacturaND, func(r *Request) { r.CFE.Referencias = nil },
			"cfe.referencias", "obligatorio en Nota de Débito"},
		{"F-C3 reference to an unknown type", ETicketNC, func(r *Request) { r.CFE.Referencias[0].TipoCfe = 100 },
			"cfe.referencias[0].tipoCfe", "obligatorio"},
		{"F-C5 reference number 0", ETicketNC, func(r *Request) { r.CFE.Referencias[0].Numero = 0 },
			"cfe.referencias[0].numero", "obligatorio"},
		{"F-C7 reference before October 2011", ETicketNC, func(r *Request) { r.CFE.Referencias[0].Fecha = datep("2011-09-30") },
			"cfe.referencias[0].fecha", "fuera del rango"},
		{"K-C1 another RUC", ETicketCtaAjena, func(r *Request) { r.CFE.ComplementoFiscal.RUCEmisor = "214844360018" },
			"cfe.complementoFiscal.rucEmisor", "debe ser el RUC de la empresa"},
		{"K-C2 C.I. mandante of a currency purchase", EBoleta, func(r *Request) {
			compraME(2)(r)
			r.CFE.Detalles[0].IndicadorFacturacion = indCompraME
			r.CFE.ComplementoFiscal = &RequestComplementoFiscal{TipoDocumento: 3, CodigoPais: "UY", Documento: "12345672", Nombre: "Juan"}
		}, "cfe.complementoFiscal.tipoDocumento", "NIE, RUC o NIFE"},
		{"K-C4 mandante RUC check digit", EFacturaCtaAjena, func(r *Request) { r.CFE.ComplementoFiscal.Documento = "214844360017" },
			"cfe.complementoFiscal.documento", "RUC inválido"},
		{"K-C5 mandante without name", ETicketCtaAjena, func(r *Request) { r.CFE.ComplementoFiscal.Nombre = "" },
			"cfe.complementoFiscal.nombre", "obligatorio"},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			r := validRequest(tt.typ)
			if tt.mutate != nil {
				tt.mutate(r)
			}
			var err error
			if strings.HasPrefix(tt.rule, "A-C40") {
				p := testParams()
				p.Emisor.RUCEmisor = "219999830018"
				c, e := r.ToCFE(p)
				if err = e; err == nil {
					err = Validate(c, p.Tax)
				}
			} else {
				_, err = issue(r)
			}
			wantField(t, err, tt.campo, tt.fragment)
			if RespuestaOf(err) != RespRechazoValidacion {
				t.Errorf("codigo_respuesta %q, want %q", RespuestaOf(err), RespRechazoValidacion)
			}
		})
	}
}
