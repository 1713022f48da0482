package cfe

import (
	"time"

	"github.com/shopspring/decimal"
)

// The document model follows DGI's XML element names (CFEType.xsd), so that a
// reader can hold the code next to the specification. Optional amounts are
// pointers: nil means "the element is absent", which DGI distinguishes from 0.

// CFE is one electronic fiscal receipt: zones A to K of DGI's format, plus the
// Adenda, which travels beside the CFE and is never signed.
type CFE struct {
	TmstFirma    time.Time // zone H, signature time (always written with -03:00)
	IdDoc        IdDoc
	Emisor       Emisor
	Receptor     *Receptor
	Totales      Totales
	Items        []Item         // zone B, Detalle/Item
	SubTotInfo   []SubTotal     // zone C
	DscRcgGlobal []GlobalAdjust // zone D
	MediosPago   []MedioPago    // zone E
	Referencias  []Referencia   // zone F
	CAEData      CAEData        // zone G
	ComplFiscal  *ComplFiscal   // zone K (clear form only)
	Adenda       string         // zone J, not part of the signed CFE
}

// Type returns IdDoc.TipoCFE.
func (c *CFE) Type() Type { return c.IdDoc.TipoCFE }

// IdDoc is zone A, "Identificación del comprobante". Fields that only some types
// carry are zero when absent (0 for the integer indicators, "" for text).
type IdDoc struct {
	TipoCFE      Type
	Serie        string
	Nro          int64
	NroInterno   string
	FchEmis      Date
	FchValor     *Date // e-Resguardo only
	PeriodoDesde *Date
	PeriodoHasta *Date
	MntBruto     int // 1 lines include IVA; 2 IMEBA (e-Boleta); 3 IVA mínimo / monotributo
	FmaPago      int // 1 contado, 2 crédito (0 = absent: remitos, resguardos)
	FchVenc      *Date
	ClauVenta    string // export
	ModVenta     int    // export and tax free
	ViaTransp    int    // export
	// InfoAdicionalDoc is a free legend (printed when legal).
	InfoAdicionalDoc string
	IVAalDia         int // presence (1..3) means the emitter is NOT al día with IVA
	SecProf          int
	IndPagCta3ros    int
	IndCobPropia     int // 1 = own collection ("Cobranza")
	// e-Remito and e-Remito de Exportación.
	TipoTraslado int // 1 venta, 2 traslado interno
	IndPropiedad int // 1 goods of third parties
	TipoDocProp  int
	CodPaisProp  string
	DocProp      string
	DocPropExt   string
	RznSocProp   string
	// e-Boleta.
	IndCompraMEReventa int
}

// Emisor is the issuing company, zone A C40-C51.
type Emisor struct {
	RUCEmisor           string
	RznSoc              string
	NomComercial        string
	GiroEmis            string
	Telefono            []string // at most 2
	CorreoEmisor        string
	EmiSucursal         string
	CdgDGISucur         int
	DomFiscal           string
	Ciudad              string
	Departamento        string
	InfoAdicionalEmisor string
}

// Receptor is the customer, zone A C60-C70.
type Receptor struct {
	TipoDocRecep  int    // 1 NIE, 2 RUC, 3 C.I., 4 otros, 5 pasaporte, 6 DNI, 7 NIFE
	CodPaisRecep  string // ISO 3166 alpha-2
	DocRecep      string // for TipoDocRecep 1, 2, 3
	DocRecepExt   string // for TipoDocRecep 4 to 7
	RznSocRecep   string
	DirRecep      string
	CiudadRecep   string
	DeptoRecep    string
	PaisRecep     string
	CP            string
	InfoAdicional string
	LugarDestEnt  string
	CompraID      string
}

// Totales is zone A C110-C130.
type Totales struct {
	TpoMoneda            string
	TpoCambio            *decimal.Decimal
	MntNoGrv             *decimal.Decimal
	MntExpoyAsim         *decimal.Decimal
	MntImpuestoPerc      *decimal.Decimal
	MntIVaenSusp         *decimal.Decimal
	MntNetoIvaTasaMin    *decimal.Decimal
	MntNetoIVATasaBasica *decimal.Decimal
	MntNetoIVAOtra       *decimal.Decimal
	IVATasaMin           *decimal.Decimal
	IVATasaBasica        *decimal.Decimal
	MntIVATasaMin        *decimal.Decimal
	MntIVATasaBasica     *decimal.Decimal
	MntIVAOtra           *decimal.Decimal
	MntTotal             *decimal.Decimal
	MntTotRetenido       *decimal.Decimal
	MntTotCredFisc       *decimal.Decimal
	CantLinDet           int
	RetencPercep         []RetPerc // at most 20, one per code
	MontoNF              *decimal.Decimal
	MntPagar             *decimal.Decimal
}

// RetPerc is one accumulated retention or perception code in Totales.
type RetPerc struct {
	CodRet     string
	ValRetPerc decimal.Decimal
}

// Item is one detail line, zone B.
type Item struct {
	NroLinDet      int
	CodItem        []CodItem // at most 5
	IndFact        int       // 0 = absent (optional in remitos and resguardos)
	IndAgenteResp  string    // "R" or "A"
	NomItem        string
	NCM            string // export
	DscItem        string
	Cantidad       decimal.Decimal
	UniMed         string
	PrecioUnitario decimal.Decimal
	DescuentoPct   *decimal.Decimal
	DescuentoMonto *decimal.Decimal
	SubDescuento   []SubAdjust // at most 5
	RecargoPct     *decimal.Decimal
	RecargoMnt     *decimal.Decimal
	SubRecargo     []SubAdjust // at most 5
	RetencPercep   []ItemRetPerc
	MontoItem      decimal.Decimal
}

// CodItem is an item code (TpoCod GTIN8/12/13/14, PLU, INT1, INT2, ARCE).
type CodItem struct {
	TpoCod string
	Cod    string
}

// SubAdjust splits an item discount or surcharge: Tipo 1 = amount, 2 = percent.
type SubAdjust struct {
	Tipo int
	Val  decimal.Decimal
}

// ItemRetPerc is a retention or perception on one line.
type ItemRetPerc struct {
	CodRet           string
	Tasa             *decimal.Decimal
	MntSujetoaRet    *decimal.Decimal
	InfoAdicionalRet string
	ValRetPerc       decimal.Decimal
}

// SubTotal is an informative subtotal, zone C.
type SubTotal struct {
	NroSTI       int
	GlosaSTI     string
	OrdenSTI     int
	ValSubtotSTI decimal.Decimal
}

// GlobalAdjust is a global discount (TpoMovDR "D") or surcharge ("R"), zone D.
type GlobalAdjust struct {
	NroLinDR  int
	TpoMovDR  string // "D" or "R"
	TpoDR     int    // 1 = amount, 2 = percent
	CodDR     int
	GlosaDR   string
	ValorDR   decimal.Decimal
	IndFactDR int
}

// MedioPago is a payment means line, zone E (informative).
type MedioPago struct {
	NroLinMP  int
	CodMP     int
	GlosaMP   string
	OrdenMP   int
	ValorPago decimal.Decimal
}

// Referencia is one reference line, zone F.
type Referencia struct {
	NroLinRef   int
	IndGlobal   int // 1 = the referenced documents cannot be identified
	TpoDocRef   Type
	Serie       string
	NroCFERef   int64
	RazonRef    string
	FechaCFEref *Date
}

// CAEData is zone G: the CAE that authorizes the number.
type CAEData struct {
	CAEID        string // CAE_ID, 11 digits
	DNro         int64
	HNro         int64
	FecVenc      Date
	CAEEspecial  int
	CausalCAEEsp int
}

// ComplFiscal is zone K in clear: the principal (mandante) of a sale on behalf of others.
type ComplFiscal struct {
	RUCEmisor   string
	TipoDocMdte int
	Pais        string
	DocMdte     string
	NombreMdte  string
}
