package apitype

import (
	"time"

	"github.com/shopspring/decimal"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// The shop's own screens (/caja): GET /comprobantes finds receipts, GET
// /cierre adds up a day.

// Comprobantes is the answer of GET /comprobantes: one page of the
// receipts a search found, newest first.
type Comprobantes struct {
	// Total is how many receipts match, on every page.
	Total int `json:"total"`
	// Pagina and PorPagina are the page answered (from 1) and its size.
	Pagina    int `json:"pagina"`
	PorPagina int `json:"por_pagina"`
	// Limitado: a word of texto is in so many receipts that only its most
	// recent 10 000 were considered (Total counts those).
	Limitado     bool          `json:"limitado"`
	Comprobantes []Comprobante `json:"comprobantes"`
}

// Comprobante is one receipt found.
type Comprobante struct {
	UUID    string   `json:"uuid"`
	TipoCFE cfe.Type `json:"tipo_cfe"`
	Nombre  string   `json:"nombre"` // the type's name: e-Ticket, e-Factura, ...
	Serie   string   `json:"serie"`
	Numero  int64    `json:"numero"`
	// FechaFirma is the signature time, in Montevideo (RFC 3339, -03:00).
	FechaFirma time.Time       `json:"fecha_firma"`
	Moneda     string          `json:"moneda"` // ISO 4217: UYU, USD, ...
	Total      decimal.Decimal `json:"total"`
	// Receptor is the receiver; null for a receipt to a final consumer
	// that names none.
	Receptor *Receptor `json:"receptor"`
	// Envio is the delivery to the hosted service: pendiente, aceptado,
	// rechazado or cuarentena (the cfe.Delivery* values, as /state's
	// entrega).
	Envio string `json:"envio"`
	// IDServicio is the hosted service's id of the receipt once delivered
	// (what its e-mail endpoint takes); 0 before.
	IDServicio int64 `json:"id_servicio,omitempty"`
	// DGI is DGI's state of the receipt; null for an archived receipt
	// (signed in an earlier year and moved to its yearly archive).
	DGI *ComprobanteDGI `json:"dgi"`
	// Items are the names of the lines.
	Items []string `json:"items"`
}

// Receptor is the receiver of a receipt.
type Receptor struct {
	Nombre    string `json:"nombre"`
	Documento string `json:"documento"`
}

// ComprobanteDGI is DGI's state of one receipt.
type ComprobanteDGI struct {
	// Estado is one of pendiente, en_sobre, enviado, aceptado, rechazado,
	// observado, desconocido (cfe.DGI* values).
	Estado string `json:"estado"`
	// Explicacion says in Spanish what the state means for the shop.
	Explicacion string `json:"explicacion"`
	// Motivos are DGI's codes for a rejected or observed receipt.
	Motivos []MotivoDGI `json:"motivos,omitempty"`
}

// MotivoDGI is one of DGI's codes (RESP 4.3, 4.4) with its meaning and
// what the shop should do.
type MotivoDGI struct {
	Codigo      string `json:"codigo"`
	Glosa       string `json:"glosa"`             // DGI's text for the code
	Detalle     string `json:"detalle,omitempty"` // DGI's detail, when it gave one
	Significado string `json:"significado"`
	QueHacer    string `json:"que_hacer"`
}

// Cierre is the answer of GET /cierre: a day's close, per till.
type Cierre struct {
	Fecha string `json:"fecha"` // YYYY-MM-DD (signature date, Montevideo)
	// Cantidad is how many receipts were signed that day (every type).
	Cantidad int `json:"cantidad"`
	// Cajas are the tills, one per serie and CodSuc (sucursal), in order.
	Cajas []CierreCaja `json:"cajas"`
	// Totales are the day's net totals by currency, every till together:
	// sales minus credit notes.
	Totales []CierreMoneda `json:"totales"`
	// Reporte is the state of the day's report to DGI (as /state's
	// dgi.reportes items); null when the agent knows none for the day (a
	// day it does not report on, today, or the state could not be read).
	Reporte *DailyReportReport `json:"reporte"`
}

// CierreCaja is one till's day.
type CierreCaja struct {
	Serie    string `json:"serie"`
	CodSuc   int    `json:"cod_suc"`
	Cantidad int    `json:"cantidad"`
	// Tipos are the receipts by type: count and totals by currency
	// (credit notes with their own positive amounts: Neto subtracts them).
	Tipos []CierreTipo `json:"tipos"`
	// Neto is, by currency, sales minus credit notes, by means of payment
	// and by IVA rate.
	Neto []CierreMoneda `json:"neto"`
}

// CierreTipo is one type of receipt in a till's day.
type CierreTipo struct {
	TipoCFE  cfe.Type        `json:"tipo_cfe"`
	Nombre   string          `json:"nombre"`
	Signo    int             `json:"signo"` // 1 a sale, -1 a credit note, 0 neither (a remito, a resguardo)
	Cantidad int             `json:"cantidad"`
	Montos   []CierreImporte `json:"montos"` // by currency
}

// CierreImporte is the receipts of one type in one currency: how many and
// their total.
type CierreImporte struct {
	Moneda   string          `json:"moneda"`
	Cantidad int             `json:"cantidad"`
	Total    decimal.Decimal `json:"total"`
}

// CierreMoneda is a day's net in one currency.
type CierreMoneda struct {
	Moneda string          `json:"moneda"`
	Total  decimal.Decimal `json:"total"`
	// MediosPago: by means of payment (contado, crédito, and the lines of
	// MediosPago when the receipts carry them).
	MediosPago []CierreLinea `json:"medios_pago"`
	// IVA: by rate (básica, mínima, exento, ...): the net amounts and the
	// tax.
	IVA []CierreIVA `json:"iva"`
}

// CierreLinea is one row of a breakdown.
type CierreLinea struct {
	Nombre string          `json:"nombre"`
	Total  decimal.Decimal `json:"total"`
}

// CierreIVA is one IVA rate of a breakdown.
type CierreIVA struct {
	Tasa     string          `json:"tasa"` // básica, mínima, otra, exento, no gravado, exportación, suspenso, percibido
	Neto     decimal.Decimal `json:"neto"`
	Impuesto decimal.Decimal `json:"impuesto"`
}

// ComprobantesQuery is what GET /comprobantes reads from its query: every
// field may be left out.
type ComprobantesQuery struct {
	Desde, Hasta cfe.Date // signature dates, inclusive
	Tipo         cfe.Type
	Serie        string
	Numero       int64
	Texto        string
	Pagina       int // from 1; 1 when absent
	PorPagina    int // 1 to 100; 20 when absent
}

// CajaInfo is what the /caja page needs to know of the agent (GET
// /caja/info).
type CajaInfo struct {
	Perfil    string `json:"perfil"`
	Impresora string `json:"impresora"` // the default printer; "" when none
	// NotasCredito says whether the page may issue credit notes: only with
	// a supervisor PIN configured; Motivo says why not, in Spanish.
	NotasCredito bool   `json:"notas_credito"`
	Motivo       string `json:"motivo,omitempty"`
	// Hoy is today's date in Montevideo (YYYY-MM-DD).
	Hoy string `json:"hoy"`
}

// VentaCaja is a manual sale or credit note issued from the /caja page
// (POST /caja/venta). The agent turns it into a signing request (the body
// of POST /sign-cfe) and issues it through the same issuer and checks.
type VentaCaja struct {
	// UUID is the idempotency key the page made for this sale.
	UUID string `json:"uuid"`
	// Tipo is 101 (e-Ticket), 111 (e-Factura) or, with Referencia, 102 or
	// 112 (their credit notes).
	Tipo cfe.Type `json:"tipo"`
	// Receptor is required for an e-Factura (a RUC).
	Receptor *VentaReceptor `json:"receptor,omitempty"`
	Lineas   []VentaLinea   `json:"lineas"`
	// PreciosSinIVA: the prices do not include IVA (they do by default).
	PreciosSinIVA bool `json:"precios_sin_iva,omitempty"`
	// FormaPago: 1 contado (default), 2 crédito.
	FormaPago int `json:"forma_pago,omitempty"`
	// Referencia is the receipt a credit note corrects (its uuid), with the
	// reason.
	Referencia *VentaReferencia `json:"referencia,omitempty"`
	// PIN is the supervisor's PIN, required for a credit note.
	PIN string `json:"pin,omitempty"`
	// Impresora is the printer ("" the default one); NoImprimir skips
	// printing.
	Impresora  string `json:"impresora,omitempty"`
	NoImprimir bool   `json:"no_imprimir,omitempty"`
	// Formulario is a paper contingency form keyed in (Tipo 201 or 211,
	// the types replacing an e-Ticket and an e-Factura): its serie, number
	// and date, and the observed receipt it corrects. A keyed-in form needs
	// the supervisor's PIN and is never printed.
	Formulario *VentaFormulario `json:"formulario,omitempty"`
}

// VentaFormulario is what a contingency form carries printed, as the
// signing request's idDoc.serie, idDoc.numero and fechaEmision, and
// corrige.
type VentaFormulario struct {
	Serie   string    `json:"serie"`
	Numero  int64     `json:"numero"`
	Fecha   *cfe.Date `json:"fecha"` // AAAA-MM-DD
	Corrige string    `json:"corrige,omitempty"`
}

// IsKeyed reports whether v keys in a contingency form.
func (v *VentaCaja) IsKeyed() bool {
	info, ok := v.Tipo.Info()
	return v.Formulario != nil || ok && info.Contingency
}

// VentaReceptor is the receiver of a manual e-Factura (or an e-Ticket that
// names one).
type VentaReceptor struct {
	TipoDocumento int    `json:"tipo_documento"` // 2 RUC, 3 C.I.
	Documento     string `json:"documento"`
	Nombre        string `json:"nombre"`
	Direccion     string `json:"direccion,omitempty"`
	Ciudad        string `json:"ciudad,omitempty"`
	Departamento  string `json:"departamento,omitempty"`
}

// VentaLinea is one line of a manual sale.
type VentaLinea struct {
	Nombre   string          `json:"nombre"`
	Cantidad decimal.Decimal `json:"cantidad"`
	Precio   decimal.Decimal `json:"precio"` // unit price, IVA included unless PreciosSinIVA
	// IVA is basica (default), minima or exento.
	IVA string `json:"iva,omitempty"`
}

// VentaReferencia names the receipt a credit note corrects.
type VentaReferencia struct {
	UUID  string `json:"uuid"`
	Razon string `json:"razon"`
}

// VentaCajaResultado is the answer of POST /caja/venta: the signing
// answer, and what printing did.
type VentaCajaResultado struct {
	Firma SignResponse `json:"firma"`
	// Impreso: sent to Impresora. ErrorImpresion says why not, when it
	// failed (the receipt is signed all the same).
	Impreso        bool   `json:"impreso"`
	Impresora      string `json:"impresora,omitempty"`
	ErrorImpresion string `json:"error_impresion,omitempty"`
}

// OpVentaRefused is the Op of the *cfe.Error with which the application
// refuses a manual sale before it reaches the issuer (its fields, its
// reference): POST /caja/venta answers it 4xx, not as a signing rejection.
const OpVentaRefused = "caja.venta"
