package cfe

import (
	"time"

	"github.com/shopspring/decimal"
)

// Request is the body of an emission request as point-of-sale software sends
// it: the hosted service's "emitir" body, which the agent's local module
// accepts unchanged. Field names are the hosted API's camelCase ones where
// they are known (idDoc.tipoCfe, detalles[].indicadorFacturacion, …) and
// DGI's names spelled out in the same style elsewhere.
//
// The hosted top-level fields that identify the company, branch and terminal
// or drive the hosted service's e-mail and bookkeeping (idEmpresa, codComercio,
// codTerminal, destinatariosPdf, origen, esAppMovil, idComprobanteGuardado,
// idVendedor, idCaja, registrarComprobanteInterno) are accepted and ignored:
// the agent's profile says which company it signs for.
type Request struct {
	UUID   string      `json:"uuid"`   // the caller's idempotency key
	Adenda string      `json:"adenda"` // zone J, travels beside the CFE, never signed
	CFE    *RequestCFE `json:"cfe"`
	// Corrige is, for a contingency receipt (2xx) DGI observed (CE), the
	// uuid it was keyed in under: this request sends the same serie and
	// number again, corrected (docs/contingencia.md). Only for 2xx.
	Corrige string `json:"corrige"`
}

// RequestCFE is the receipt itself.
type RequestCFE struct {
	IdDoc                      RequestIdDoc              `json:"idDoc"`
	Emisor                     *RequestEmisor            `json:"emisor"`
	Receptor                   *RequestReceptor          `json:"receptor"`
	Totales                    *RequestTotales           `json:"totales"`
	Detalles                   []RequestDetalle          `json:"detalles"`
	SubTotalesInfo             []RequestSubTotal         `json:"subTotalesInfo"`
	DescuentosRecargosGlobales []RequestGlobalAdjust     `json:"descuentosRecargosGlobales"`
	MediosPago                 []RequestMedioPago        `json:"mediosPago"`
	Referencias                []RequestReferencia       `json:"referencias"`
	ComplementoFiscal          *RequestComplementoFiscal `json:"complementoFiscal"`
}

// RequestIdDoc is zone A, "Identificación del comprobante". Serie and number
// are taken from the CAE range when the agent signs, except for a paper
// contingency receipt (types 2xx) keyed in afterwards: it carries the serie
// and number printed on the form, and its fechaEmision is the paper's date.
type RequestIdDoc struct {
	TipoCfe                     Type   `json:"tipoCfe"`
	Serie                       string `json:"serie"`  // 2xx only: the form's serie
	Numero                      int64  `json:"numero"` // 2xx only: the form's number
	NumeroInterno               string `json:"numeroInterno"`
	FechaEmision                *Date  `json:"fechaEmision"` // default: the signing date
	FechaValor                  *Date  `json:"fechaValor"`
	PeriodoDesde                *Date  `json:"periodoDesde"`
	PeriodoHasta                *Date  `json:"periodoHasta"`
	MontoBruto                  int    `json:"montoBruto"`
	FormaPago                   int    `json:"formaPago"`
	FechaVencimiento            *Date  `json:"fechaVencimiento"`
	ClausulaVenta               string `json:"clausulaVenta"`
	ModalidadVenta              int    `json:"modalidadVenta"`
	ViaTransporte               int    `json:"viaTransporte"`
	InformacionAdicional        string `json:"informacionAdicional"`
	IvaAlDia                    int    `json:"ivaAlDia"`
	SecretoProfesional          int    `json:"secretoProfesional"`
	IndicadorPagoCuentaTerceros int    `json:"indicadorPagoCuentaTerceros"`
	IndicadorCobranzaPropia     int    `json:"indicadorCobranzaPropia"`
	TipoTraslado                int    `json:"tipoTraslado"`
	IndicadorPropiedad          int    `json:"indicadorPropiedad"`
	TipoDocumentoPropietario    int    `json:"tipoDocumentoPropietario"`
	CodigoPaisPropietario       string `json:"codigoPaisPropietario"`
	DocumentoPropietario        string `json:"documentoPropietario"`
	DocumentoPropietarioExt     string `json:"documentoPropietarioExt"`
	RazonSocialPropietario      string `json:"razonSocialPropietario"`
	IndicadorCompraMonedaExt    int    `json:"indicadorCompraMonedaExtranjera"`
}

// RequestEmisor is the issuing company. The agent's profile is authoritative:
// the identity fields (ruc, razonSocial, codigoSucursal, domicilioFiscal,
// ciudad, departamento) are checked against it when sent, and the optional
// presentation fields replace the profile's for this receipt when not empty.
type RequestEmisor struct {
	RUC                  string   `json:"ruc"`
	RazonSocial          string   `json:"razonSocial"`
	NombreComercial      string   `json:"nombreComercial"`
	Giro                 string   `json:"giro"`
	Telefonos            []string `json:"telefonos"`
	Correo               string   `json:"correo"`
	Sucursal             string   `json:"sucursal"`
	CodigoSucursal       int      `json:"codigoSucursal"`
	DomicilioFiscal      string   `json:"domicilioFiscal"`
	Ciudad               string   `json:"ciudad"`
	Departamento         string   `json:"departamento"`
	InformacionAdicional string   `json:"informacionAdicional"`
}

// RequestReceptor is the customer.
type RequestReceptor struct {
	TipoDocumento        int    `json:"tipoDocumento"`
	CodigoPais           string `json:"codigoPais"`
	Documento            string `json:"documento"`    // NIE, RUC or C.I. (tipoDocumento 1 to 3)
	DocumentoExt         string `json:"documentoExt"` // other documents (tipoDocumento 4 to 7)
	RazonSocial          string `json:"razonSocial"`
	Direccion            string `json:"direccion"`
	Ciudad               string `json:"ciudad"`
	Departamento         string `json:"departamento"`
	Pais                 string `json:"pais"`
	CodigoPostal         string `json:"codigoPostal"`
	InformacionAdicional string `json:"informacionAdicional"`
	LugarEntrega         string `json:"lugarEntrega"`
	IdCompraCliente      string `json:"idCompraCliente"`
	// IdCliente names a customer of the hosted service's master data. The
	// agent keeps none: it is ignored, and the receptor's data must be sent.
	IdCliente int `json:"idCliente"`
}

// RequestTotales are zone A's totals. All are optional: the agent computes
// them, and every total the request does carry must equal the computed one to
// the cent. tipoMoneda (default UYU), tipoCambio and montoIvaOtraTasa are
// inputs no formula gives. An e-Remito has no currency: it takes neither
// tipoMoneda nor tipoCambio.
type RequestTotales struct {
	TipoMoneda              string                `json:"tipoMoneda"`
	TipoCambio              *decimal.Decimal      `json:"tipoCambio"`
	MontoNoGravado          *decimal.Decimal      `json:"montoNoGravado"`
	MontoExportacion        *decimal.Decimal      `json:"montoExportacion"`
	MontoImpuestoPercibido  *decimal.Decimal      `json:"montoImpuestoPercibido"`
	MontoIvaSuspenso        *decimal.Decimal      `json:"montoIvaSuspenso"`
	MontoNetoIvaTasaMinima  *decimal.Decimal      `json:"montoNetoIvaTasaMinima"`
	MontoNetoIvaTasaBasica  *decimal.Decimal      `json:"montoNetoIvaTasaBasica"`
	MontoNetoIvaOtraTasa    *decimal.Decimal      `json:"montoNetoIvaOtraTasa"`
	TasaIvaMinima           *decimal.Decimal      `json:"tasaIvaMinima"`
	TasaIvaBasica           *decimal.Decimal      `json:"tasaIvaBasica"`
	MontoIvaTasaMinima      *decimal.Decimal      `json:"montoIvaTasaMinima"`
	MontoIvaTasaBasica      *decimal.Decimal      `json:"montoIvaTasaBasica"`
	MontoIvaOtraTasa        *decimal.Decimal      `json:"montoIvaOtraTasa"`
	MontoTotal              *decimal.Decimal      `json:"montoTotal"`
	MontoRetenido           *decimal.Decimal      `json:"montoRetenido"`
	MontoCreditoFiscal      *decimal.Decimal      `json:"montoCreditoFiscal"`
	CantidadLineasDetalle   int                   `json:"cantidadLineasDetalle"`
	RetencionesPercepciones []RequestTotalRetPerc `json:"retencionesPercepciones"`
	MontoNoFacturable       *decimal.Decimal      `json:"montoNoFacturable"`
	MontoPagar              *decimal.Decimal      `json:"montoPagar"`
}

// RequestTotalRetPerc is one retention or perception code accumulated in the totals.
type RequestTotalRetPerc struct {
	Codigo string          `json:"codigo"`
	Valor  decimal.Decimal `json:"valor"`
}

// RequestDetalle is one line (zone B). numeroLineaDetalle and montoItem are
// optional: computed when absent, checked when present.
type RequestDetalle struct {
	NumeroLineaDetalle         int                 `json:"numeroLineaDetalle"`
	CodigosItem                []RequestCodigoItem `json:"codigosItem"`
	IndicadorFacturacion       int                 `json:"indicadorFacturacion"`
	IndicadorAgenteResponsable string              `json:"indicadorAgenteResponsable"`
	NombreItem                 string              `json:"nombreItem"`
	NCM                        string              `json:"ncm"`
	Descripcion                string              `json:"descripcion"`
	Cantidad                   *decimal.Decimal    `json:"cantidad"`
	UnidadMedida               string              `json:"unidadMedida"` // default "N/A"
	PrecioUnitario             *decimal.Decimal    `json:"precioUnitario"`
	DescuentoPorcentaje        *decimal.Decimal    `json:"descuentoPorcentaje"`
	DescuentoMonto             *decimal.Decimal    `json:"descuentoMonto"` // derived from the percentage when absent
	SubDescuentos              []RequestSubAjuste  `json:"subDescuentos"`
	RecargoPorcentaje          *decimal.Decimal    `json:"recargoPorcentaje"`
	RecargoMonto               *decimal.Decimal    `json:"recargoMonto"` // derived from the percentage when absent
	SubRecargos                []RequestSubAjuste  `json:"subRecargos"`
	RetencionesPercepciones    []RequestRetencion  `json:"retencionesPercepciones"`
	MontoItem                  *decimal.Decimal    `json:"montoItem"`
}

// RequestCodigoItem is an item code: tipo GTIN8, GTIN12, GTIN13, GTIN14, PLU, INT1, INT2 or ARCE.
type RequestCodigoItem struct {
	Tipo   string `json:"tipo"`
	Codigo string `json:"codigo"`
}

// RequestSubAjuste is one part of a line discount or surcharge: tipo 1 amount, 2 percent.
type RequestSubAjuste struct {
	Tipo  int             `json:"tipo"`
	Valor decimal.Decimal `json:"valor"`
}

// RequestRetencion is a retention, perception or fiscal credit on one line.
type RequestRetencion struct {
	Codigo               string           `json:"codigo"`
	Tasa                 *decimal.Decimal `json:"tasa"`
	MontoSujeto          *decimal.Decimal `json:"montoSujeto"`
	InformacionAdicional string           `json:"informacionAdicional"`
	Valor                decimal.Decimal  `json:"valor"`
}

// RequestSubTotal is an informative subtotal (zone C).
type RequestSubTotal struct {
	Numero int             `json:"numero"`
	Glosa  string          `json:"glosa"`
	Orden  int             `json:"orden"`
	Valor  decimal.Decimal `json:"valor"`
}

// RequestGlobalAdjust is a global discount or surcharge (zone D): tipoMovimiento
// "D" or "R"; with tipo 1 valor is an amount, with tipo 2 a percentage of the
// lines that carry the same indicadorFacturacion. Either way the CFE carries
// the amount in ValorDR (with TpoDR 2 for a percentage).
type RequestGlobalAdjust struct {
	NumeroLinea          int             `json:"numeroLinea"`
	TipoMovimiento       string          `json:"tipoMovimiento"`
	Tipo                 int             `json:"tipo"`
	Codigo               int             `json:"codigo"`
	Glosa                string          `json:"glosa"`
	Valor                decimal.Decimal `json:"valor"`
	IndicadorFacturacion int             `json:"indicadorFacturacion"`
}

// RequestMedioPago is a payment means line (zone E). Each field also takes
// the name production integrations of the hosted service send (alias tag);
// the names of their fields that DGI's CFE has no place for are accepted and
// ignored (ignoredFields).
type RequestMedioPago struct {
	NumeroLinea int             `json:"numeroLinea" alias:"numeroLineaMedioPago"` // NroLinMP
	Codigo      int             `json:"codigo" alias:"idMedioPago"`               // CodMP
	Glosa       string          `json:"glosa" alias:"glosaMedioPago"`             // GlosaMP
	Orden       int             `json:"orden" alias:"ordenMedioPago"`             // OrdenMP
	Valor       decimal.Decimal `json:"valor" alias:"valorPago"`                  // ValorPago

	// The payment's currency and exchange rate, as hosted integrations send
	// them. DGI's zone E has no place for either and ValorPago is in the
	// CFE's currency, so they are accepted only when they restate the CFE's
	// own currency and rate (checkPaymentCurrency), then dropped: a payment in
	// another currency would otherwise be signed as an amount in the CFE's.
	TipoMoneda string           `json:"tipoMonedaMedioPago"`
	TipoCambio *decimal.Decimal `json:"tipoCambioMedioPago"`
}

func (RequestMedioPago) ignoredFields() []string {
	return []string{"idCuentaBanco", "titular", "nomDoc", "proveedorPos"}
}

// RequestReferencia is a reference to another document (zone F), with the
// hosted integrations' names as aliases (see RequestMedioPago).
type RequestReferencia struct {
	NumeroLinea     int    `json:"numeroLinea" alias:"numeroLineaReferencia"` // NroLinRef
	IndicadorGlobal int    `json:"indicadorGlobal"`                           // IndGlobal
	TipoCfe         Type   `json:"tipoCfe" alias:"tipoDocumentoReferencia"`   // TpoDocRef
	Serie           string `json:"serie" alias:"serieFacturaReferencia"`      // Serie
	Numero          int64  `json:"numero" alias:"numeroFacturaReferencia"`    // NroCFERef
	Razon           string `json:"razon" alias:"razonReferencia"`             // RazonRef
	Fecha           *Date  `json:"fecha" alias:"fechaFacturaReferencia"`      // FechaCFEref
}

func (RequestReferencia) ignoredFields() []string { return []string{"tipoMonedaCfeReferencia"} }

// RequestComplementoFiscal identifies the principal (mandante) of a sale on
// behalf of others (zone K). rucEmisor defaults to the company's RUC.
type RequestComplementoFiscal struct {
	RUCEmisor     string `json:"rucEmisor"`
	TipoDocumento int    `json:"tipoDocumento"`
	CodigoPais    string `json:"codigoPais"`
	Documento     string `json:"documento"`
	Nombre        string `json:"nombre"`
}

// IssueParams carries what an emission takes from configuration and the clock
// rather than from the request.
type IssueParams struct {
	Emisor   Emisor    // the company and branch of the agent's profile
	Tax      TaxConfig // IVA rates and the e-Ticket threshold
	SignedAt time.Time // when the CFE is signed (TmstFirma); its date is the default FchEmis
}

// ToCFE maps the request onto the document model: the emitter comes from p,
// line numbers, line amounts, discounts given as percentages and every total
// are computed with DGI's formulas, and whatever of those the request carries
// must agree with the computed value to the cent. Serie, number and CAE are
// left for the issuer, which takes them from a CAE range.
//
// ToCFE does not apply DGI's business rules: call Validate on the result. It
// returns EINVALID, naming every field of the request that is missing,
// disagrees with a computed value or with the agent's profile; when the lines
// break a rule the totals depend on (an indicator the type does not admit),
// the error is Validate's, with every rule the receipt breaks. It returns
// EINTERNAL when p.Tax is not a usable configuration.
func (r *Request) ToCFE(p IssueParams) (*CFE, error) {
	const op = "cfe.Request.ToCFE"
	if r.CFE == nil {
		return nil, Invalid(op, FieldError{"cfe", "obligatorio: el comprobante a emitir"})
	}
	rc := r.CFE
	m := mapper{}
	c := &CFE{
		TmstFirma:   p.SignedAt,
		IdDoc:       rc.IdDoc.toModel(p.SignedAt),
		Emisor:      m.emisor(rc.Emisor, p.Emisor),
		Receptor:    rc.Receptor.toModel(),
		Adenda:      r.Adenda,
		ComplFiscal: m.complFiscal(rc.ComplementoFiscal, p.Emisor.RUCEmisor),
	}
	if rc.IdDoc.TipoCfe == 0 {
		m.add("cfe.idDoc.tipoCfe", "obligatorio: el tipo de CFE (101 e-Ticket, 111 e-Factura, …)")
	}
	m.keyedIn(r, c)
	fam := ElemTicket
	if info, ok := c.Type().Info(); ok {
		fam = info.Element
	}
	c.Items = m.items(rc.Detalles, fam)
	c.SubTotInfo = m.subtotals(rc.SubTotalesInfo)
	c.DscRcgGlobal = m.globals(rc.DescuentosRecargosGlobales, c.Items)
	c.MediosPago = m.payments(rc.MediosPago)
	c.Referencias = m.references(rc.Referencias)

	declared := rc.Totales.toModel()
	c.Totales = Totales{TpoMoneda: declared.TpoMoneda, TpoCambio: declared.TpoCambio, MntIVAOtra: declared.MntIVAOtra}
	if c.Totales.TpoMoneda == "" && fam != ElemRemito {
		c.Totales.TpoMoneda = "UYU"
	}
	if fam == ElemRemito {
		m.remitoCurrency(rc.Totales)
	}
	m.checkPaymentCurrency(rc.MediosPago, c.Totales)
	if len(m.probs) > 0 {
		return nil, m.probs.err(op)
	}
	computed, err := ComputeTotals(c, p.Tax)
	if ErrorCode(err) == EINVALID {
		// The lines break a rule the totals depend on: answer with every
		// rule the receipt breaks, not only those.
		if verr := Validate(c, p.Tax); verr != nil {
			err = verr
		}
	}
	if err != nil {
		return nil, err
	}
	m.probs = compareTotals(declared, computed, true)
	if len(m.probs) > 0 {
		return nil, m.probs.err(op)
	}
	c.Totales = computed
	return c, nil
}

// mapper collects the problems found while mapping a request. Pointers are
// copied (clonePtr): the model never shares memory with the request.
type mapper struct{ probs problems }

func (m *mapper) add(campo, format string, args ...any) { m.probs.add(campo, format, args...) }

// keyedIn checks the fields only a contingency receipt keyed in from its
// paper form carries (serie, numero, corrige) and the ones it must carry
// (its serie, number and date: no default), and sets its serie and number.
func (m *mapper) keyedIn(r *Request, c *CFE) {
	d := r.CFE.IdDoc
	info, ok := d.TipoCfe.Info()
	if !ok {
		return
	}
	if !info.Contingency {
		const only = "solo corresponde a un comprobante de contingencia (2xx) ingresado desde su formulario en papel: el agente numera los CFE electrónicos"
		if d.Serie != "" {
			m.add("cfe.idDoc.serie", only)
		}
		if d.Numero != 0 {
			m.add("cfe.idDoc.numero", only)
		}
		if r.Corrige != "" {
			m.add("corrige", "solo corresponde a un comprobante de contingencia (2xx) que DGI observó")
		}
		return
	}
	if d.Serie == "" {
		m.add("cfe.idDoc.serie", "obligatoria: la serie impresa en el formulario de contingencia")
	}
	if d.Numero == 0 {
		m.add("cfe.idDoc.numero", "obligatorio: el número impreso en el formulario de contingencia")
	}
	if d.FechaEmision == nil {
		m.add("cfe.idDoc.fechaEmision", "obligatoria: la fecha escrita en el formulario de contingencia")
	}
	if r.Corrige != "" {
		m.probs = append(m.probs, prefixed("corrige", CheckUUID(r.Corrige))...)
	}
	c.IdDoc.Serie, c.IdDoc.Nro = d.Serie, d.Numero
}

// prefixed renames fields to campo (CheckUUID names its field "uuid").
func prefixed(campo string, fs []FieldError) []FieldError {
	for i := range fs {
		fs[i].Campo = campo
	}
	return fs
}

func (d RequestIdDoc) toModel(signedAt time.Time) IdDoc {
	id := IdDoc{
		TipoCFE:            d.TipoCfe,
		NroInterno:         d.NumeroInterno,
		FchValor:           clonePtr(d.FechaValor),
		PeriodoDesde:       clonePtr(d.PeriodoDesde),
		PeriodoHasta:       clonePtr(d.PeriodoHasta),
		MntBruto:           d.MontoBruto,
		FmaPago:            d.FormaPago,
		FchVenc:            clonePtr(d.FechaVencimiento),
		ClauVenta:          d.ClausulaVenta,
		ModVenta:           d.ModalidadVenta,
		ViaTransp:          d.ViaTransporte,
		InfoAdicionalDoc:   d.InformacionAdicional,
		IVAalDia:           d.IvaAlDia,
		SecProf:            d.SecretoProfesional,
		IndPagCta3ros:      d.IndicadorPagoCuentaTerceros,
		IndCobPropia:       d.IndicadorCobranzaPropia,
		TipoTraslado:       d.TipoTraslado,
		IndPropiedad:       d.IndicadorPropiedad,
		TipoDocProp:        d.TipoDocumentoPropietario,
		CodPaisProp:        d.CodigoPaisPropietario,
		DocProp:            d.DocumentoPropietario,
		DocPropExt:         d.DocumentoPropietarioExt,
		RznSocProp:         d.RazonSocialPropietario,
		IndCompraMEReventa: d.IndicadorCompraMonedaExt,
	}
	switch {
	case d.FechaEmision != nil:
		id.FchEmis = *d.FechaEmision
	case !signedAt.IsZero():
		id.FchEmis = DateOf(signedAt.In(Montevideo))
	}
	return id
}

// emisor returns the profile's emitter, with the request's optional
// presentation fields, after checking the request's identity fields against it.
func (m *mapper) emisor(re *RequestEmisor, profile Emisor) Emisor {
	e := profile
	e.Telefono = append([]string(nil), profile.Telefono...)
	if re == nil {
		return e
	}
	const mismatch = "no coincide con la empresa configurada en el agente (%s)"
	sameText := func(campo, sent, configured string) {
		if sent != "" && sent != configured {
			m.add(campo, mismatch, configured)
		}
	}
	sameText("cfe.emisor.ruc", re.RUC, profile.RUCEmisor)
	sameText("cfe.emisor.razonSocial", re.RazonSocial, profile.RznSoc)
	sameText("cfe.emisor.domicilioFiscal", re.DomicilioFiscal, profile.DomFiscal)
	sameText("cfe.emisor.ciudad", re.Ciudad, profile.Ciudad)
	sameText("cfe.emisor.departamento", re.Departamento, profile.Departamento)
	if re.CodigoSucursal != 0 && re.CodigoSucursal != profile.CdgDGISucur {
		m.add("cfe.emisor.codigoSucursal", mismatch, itoa(int64(profile.CdgDGISucur)))
	}
	override := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	override(&e.NomComercial, re.NombreComercial)
	override(&e.GiroEmis, re.Giro)
	override(&e.CorreoEmisor, re.Correo)
	override(&e.EmiSucursal, re.Sucursal)
	override(&e.InfoAdicionalEmisor, re.InformacionAdicional)
	if len(re.Telefonos) > 0 {
		e.Telefono = append([]string(nil), re.Telefonos...)
	}
	return e
}

func (r *RequestReceptor) toModel() *Receptor {
	if r == nil {
		return nil
	}
	return &Receptor{
		TipoDocRecep:  r.TipoDocumento,
		CodPaisRecep:  r.CodigoPais,
		DocRecep:      r.Documento,
		DocRecepExt:   r.DocumentoExt,
		RznSocRecep:   r.RazonSocial,
		DirRecep:      r.Direccion,
		CiudadRecep:   r.Ciudad,
		DeptoRecep:    r.Departamento,
		PaisRecep:     r.Pais,
		CP:            r.CodigoPostal,
		InfoAdicional: r.InformacionAdicional,
		LugarDestEnt:  r.LugarEntrega,
		CompraID:      r.IdCompraCliente,
	}
}

// items maps the lines, numbering them and computing their amounts.
func (m *mapper) items(ds []RequestDetalle, fam Element) []Item {
	items := make([]Item, len(ds))
	for i := range ds {
		d := &ds[i]
		m.lineNumber(itemPath(i, "numeroLineaDetalle"), d.NumeroLineaDetalle, i)
		it := Item{
			NroLinDet:     i + 1,
			IndFact:       d.IndicadorFacturacion,
			IndAgenteResp: d.IndicadorAgenteResponsable,
			NomItem:       d.NombreItem,
			NCM:           d.NCM,
			DscItem:       d.Descripcion,
			UniMed:        d.UnidadMedida,
			DescuentoPct:  clonePtr(d.DescuentoPorcentaje),
			RecargoPct:    clonePtr(d.RecargoPorcentaje),
		}
		for _, ci := range d.CodigosItem {
			it.CodItem = append(it.CodItem, CodItem{TpoCod: ci.Tipo, Cod: ci.Codigo})
		}
		for _, r := range d.RetencionesPercepciones {
			it.RetencPercep = append(it.RetencPercep, ItemRetPerc{CodRet: r.Codigo, Tasa: clonePtr(r.Tasa),
				MntSujetoaRet: clonePtr(r.MontoSujeto), InfoAdicionalRet: r.InformacionAdicional, ValRetPerc: r.Valor})
		}
		m.quantities(&it, d, i, fam)
		items[i] = it
	}
	return items
}

// quantities maps a line's quantity, unit, price, discounts and surcharges,
// and computes its amount (B-C24) where the type has one. e-Resguardo lines
// and e-Remito prices take none of these: they are mapped all the same, for
// Validate to reject them.
func (m *mapper) quantities(it *Item, d *RequestDetalle, i int, fam Element) {
	priced := fam != ElemRemito && fam != ElemResguardo
	if fam == ElemResguardo {
		// An e-Resguardo line has no quantity, price or amount (V24 zone B:
		// B-C9, B-C11 and B-C24 are "0", not applicable, for e-Resguardo). A
		// value sent, 0 included, is refused naming it rather than dropped;
		// Validate refuses the rest of what its lines cannot carry.
		for _, f := range []struct {
			name string
			v    *decimal.Decimal
		}{{"cantidad", d.Cantidad}, {"precioUnitario", d.PrecioUnitario}, {"montoItem", d.MontoItem}} {
			if f.v != nil {
				m.add(itemPath(i, f.name), "no corresponde en e-Resguardo: sus líneas solo llevan indicadorFacturacion y retencionesPercepciones")
			}
		}
	}
	if it.UniMed == "" && fam != ElemResguardo {
		it.UniMed = "N/A" // DGI: "En caso que no corresponda, poner N/A"
	}
	switch {
	case d.Cantidad != nil && d.Cantidad.IsZero() && fam != ElemResguardo:
		// A line of quantity 0 is refused, "0", "-0" and "0.000" alike. DGI
		// (Formato de los CFE V24, zone B, B-C9 Cantidad): "Cantidad del ítem.
		// Se admite negativo sólo para eliminar un ítem del propio CFE". A
		// quantity is what is sold, delivered or moved, and the one value
		// other than a positive one DGI admits is a negative that removes an
		// item of the same CFE. A quantity of 0 describes nothing: on an
		// e-Remito it moves nothing; priced, it is a line of amount 0 (B-C24 =
		// B-C9 × B-C11 − B-C13 + B-C17). The one line without value DGI
		// provides for is the free delivery (B-C4 = 5: B-C11 = 0, B-C24 = 0),
		// and it keeps its quantity ("docenas de trece").
		m.add(itemPath(i, "cantidad"), "debe ser distinta de 0: una línea con cantidad 0 no describe ningún bien ni servicio "+
			"(una entrega gratuita lleva su cantidad, con indicador 5 y precio 0; para quitar un ítem del mismo comprobante "+
			"se usa una cantidad negativa)")
	case d.Cantidad != nil:
		it.Cantidad = *d.Cantidad
	case fam != ElemResguardo:
		m.add(itemPath(i, "cantidad"), "obligatoria")
	}
	switch {
	case d.PrecioUnitario != nil:
		it.PrecioUnitario = *d.PrecioUnitario
	case priced:
		m.add(itemPath(i, "precioUnitario"), "obligatorio (0 en una entrega gratuita, indicador 5)")
	}
	for _, s := range d.SubDescuentos {
		it.SubDescuento = append(it.SubDescuento, SubAdjust{Tipo: s.Tipo, Val: s.Valor})
	}
	for _, s := range d.SubRecargos {
		it.SubRecargo = append(it.SubRecargo, SubAdjust{Tipo: s.Tipo, Val: s.Valor})
	}
	// C13 and C17 must exist when C12 and C16 do: derive the amounts.
	it.DescuentoMonto = optionalAmount(d.DescuentoMonto, d.DescuentoPorcentaje, itemDiscount(it))
	it.RecargoMnt = optionalAmount(d.RecargoMonto, d.RecargoPorcentaje, itemSurcharge(it))
	if !priced {
		if d.MontoItem != nil {
			it.MontoItem = *d.MontoItem
		}
		return
	}
	it.MontoItem = lineAmount(it)
	if d.MontoItem != nil && !d.MontoItem.Equal(it.MontoItem) {
		m.add(itemPath(i, "montoItem"), "no coincide con cantidad × precio unitario − descuento + recargo = %s", it.MontoItem.StringFixed(2))
	}
}

// optionalAmount returns the amount sent, or the one derived from the
// percentage sent, or nil when neither was.
func optionalAmount(sent, pct *decimal.Decimal, derived decimal.Decimal) *decimal.Decimal {
	switch {
	case sent != nil:
		return clonePtr(sent)
	case pct != nil:
		return ptr(derived)
	}
	return nil
}

// lineNumber checks a line number the request may carry: absent (0) or i+1.
func (m *mapper) lineNumber(campo string, sent, i int) {
	if sent != 0 && sent != i+1 {
		m.add(campo, "debe ser %d: las líneas se numeran en orden desde 1", i+1)
	}
}

func (m *mapper) subtotals(ss []RequestSubTotal) []SubTotal {
	out := make([]SubTotal, len(ss))
	for i, s := range ss {
		out[i] = SubTotal{NroSTI: s.Numero, GlosaSTI: s.Glosa, OrdenSTI: s.Orden, ValSubtotSTI: s.Valor}
	}
	return out
}

// globals maps zone D. A percentage (tipo 2) becomes the amount it gives on
// the lines of its indicator: DGI's ValorDR is an amount (D-C6) and the totals
// subtract it as it is.
func (m *mapper) globals(gs []RequestGlobalAdjust, items []Item) []GlobalAdjust {
	out := make([]GlobalAdjust, len(gs))
	for i, g := range gs {
		m.lineNumber(globalPath(i, "numeroLinea"), g.NumeroLinea, i)
		value := g.Valor
		if g.Tipo == 2 {
			switch {
			case !g.Valor.IsPositive():
				m.add(globalPath(i, "valor"), "debe ser mayor que 0 (el tipo de movimiento indica si descuenta o recarga)")
			case !percentage.fits(g.Valor):
				m.add(globalPath(i, "valor"), "con tipo 2 es un porcentaje: hasta 3 enteros y 3 decimales")
			default:
				value = globalPercentAmount(items, g.IndicadorFacturacion, g.Valor)
			}
		}
		out[i] = GlobalAdjust{NroLinDR: i + 1, TpoMovDR: g.TipoMovimiento, TpoDR: g.Tipo, CodDR: g.Codigo,
			GlosaDR: g.Glosa, ValorDR: value, IndFactDR: g.IndicadorFacturacion}
	}
	return out
}

// remitoCurrency refuses a currency or an exchange rate on an e-Remito. Its
// totals are CantLinDet only (CFEType.xsd, eRem's Totales; TpoMoneda and
// TpoCambio are in every other type's), so either would be dropped from what
// is signed while the caller believes it was: refused, naming the field,
// whatever its value.
func (m *mapper) remitoCurrency(t *RequestTotales) {
	if t == nil {
		return
	}
	const why = "no corresponde en e-Remito: DGI no le da moneda ni tipo de cambio (sus totales son solo la cantidad de líneas); no lo envíe"
	if t.TipoMoneda != "" {
		m.add("cfe.totales.tipoMoneda", why)
	}
	if t.TipoCambio != nil {
		m.add("cfe.totales.tipoCambio", why)
	}
}

func (m *mapper) payments(ps []RequestMedioPago) []MedioPago {
	out := make([]MedioPago, len(ps))
	for i, p := range ps {
		m.lineNumber(paymentPath(i, "numeroLinea"), p.NumeroLinea, i)
		out[i] = MedioPago{NroLinMP: i + 1, CodMP: p.Codigo, GlosaMP: p.Glosa, OrdenMP: p.Orden, ValorPago: p.Valor}
	}
	return out
}

// checkPaymentCurrency refuses a payment line whose currency or rate is not
// the CFE's (t): the rate sent must equal TpoCambio (1 for a CFE in pesos);
// 0 counts as not sent.
func (m *mapper) checkPaymentCurrency(ps []RequestMedioPago, t Totales) {
	rate := decimal.NewFromInt(1)
	if t.TpoCambio != nil {
		rate = *t.TpoCambio
	}
	for i, p := range ps {
		if p.TipoMoneda != "" && p.TipoMoneda != t.TpoMoneda {
			m.add(paymentPath(i, "tipoMonedaMedioPago"), "debe ser la moneda del comprobante (%s): el CFE no admite medios de pago en otra moneda", t.TpoMoneda)
		}
		if p.TipoCambio != nil && !p.TipoCambio.IsZero() && !p.TipoCambio.Equal(rate) {
			m.add(paymentPath(i, "tipoCambioMedioPago"), "debe ser el tipo de cambio del comprobante (%s)", rate.String())
		}
	}
}

func (m *mapper) references(rs []RequestReferencia) []Referencia {
	out := make([]Referencia, len(rs))
	for i, r := range rs {
		m.lineNumber(referencePath(i, "numeroLinea"), r.NumeroLinea, i)
		out[i] = Referencia{NroLinRef: i + 1, IndGlobal: r.IndicadorGlobal, TpoDocRef: r.TipoCfe, Serie: r.Serie,
			NroCFERef: r.Numero, RazonRef: r.Razon, FechaCFEref: clonePtr(r.Fecha)}
	}
	return out
}

func (m *mapper) complFiscal(k *RequestComplementoFiscal, ruc string) *ComplFiscal {
	if k == nil {
		return nil
	}
	if k.RUCEmisor != "" && k.RUCEmisor != ruc {
		m.add("cfe.complementoFiscal.rucEmisor", "debe ser el RUC de la empresa que emite (%s)", ruc)
	}
	return &ComplFiscal{RUCEmisor: ruc, TipoDocMdte: k.TipoDocumento, Pais: k.CodigoPais,
		DocMdte: k.Documento, NombreMdte: k.Nombre}
}

// toModel returns the totals the request declares; nil fields were not sent.
func (t *RequestTotales) toModel() Totales {
	if t == nil {
		return Totales{}
	}
	out := Totales{
		TpoMoneda:            t.TipoMoneda,
		TpoCambio:            clonePtr(t.TipoCambio),
		MntNoGrv:             clonePtr(t.MontoNoGravado),
		MntExpoyAsim:         clonePtr(t.MontoExportacion),
		MntImpuestoPerc:      clonePtr(t.MontoImpuestoPercibido),
		MntIVaenSusp:         clonePtr(t.MontoIvaSuspenso),
		MntNetoIvaTasaMin:    clonePtr(t.MontoNetoIvaTasaMinima),
		MntNetoIVATasaBasica: clonePtr(t.MontoNetoIvaTasaBasica),
		MntNetoIVAOtra:       clonePtr(t.MontoNetoIvaOtraTasa),
		IVATasaMin:           clonePtr(t.TasaIvaMinima),
		IVATasaBasica:        clonePtr(t.TasaIvaBasica),
		MntIVATasaMin:        clonePtr(t.MontoIvaTasaMinima),
		MntIVATasaBasica:     clonePtr(t.MontoIvaTasaBasica),
		MntIVAOtra:           clonePtr(t.MontoIvaOtraTasa),
		MntTotal:             clonePtr(t.MontoTotal),
		MntTotRetenido:       clonePtr(t.MontoRetenido),
		MntTotCredFisc:       clonePtr(t.MontoCreditoFiscal),
		CantLinDet:           t.CantidadLineasDetalle,
		MontoNF:              clonePtr(t.MontoNoFacturable),
		MntPagar:             clonePtr(t.MontoPagar),
	}
	for _, r := range t.RetencionesPercepciones {
		out.RetencPercep = append(out.RetencPercep, RetPerc{CodRet: r.Codigo, ValRetPerc: r.Valor})
	}
	return out
}
