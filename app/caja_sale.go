package app

import (
	"cmp"
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/issuer"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
	"github.com/cfe-agent/cfe-agent/printing"
)

// The manual sale of the /caja page (POST /caja/venta): an e-Ticket or an
// e-Factura, or the credit note of a found receipt, typed by the cashier
// when the point-of-sale software is down. It becomes the same signing
// request a POS sends to POST /sign-cfe and goes through the same issuer
// and checks; then it is printed on the default printer (or the one the
// page names).

// CajaInfo answers GET /caja/info: the profile, the default printer and
// whether credit notes may be issued from the page.
func (f *Facade) CajaInfo(ctx context.Context) apitype.CajaInfo {
	info := apitype.CajaInfo{Perfil: f.a.Name, Impresora: f.a.Profile.DefaultPrinter, NotasCredito: f.a.Profile.Caja.HasPIN(),
		Hoy: cfe.DateOf(f.now().In(cfe.Montevideo)).String()}
	if !info.NotasCredito {
		info.Motivo = "Las notas de crédito desde esta página están desactivadas: no hay un PIN de supervisor configurado " +
			"(el técnico lo configura con «cfe-agent caja pin»)."
	}
	return info
}

// SupervisorPIN reports whether a supervisor PIN is configured and whether
// pin is it (bcrypt; it takes the same time either way).
func (f *Facade) SupervisorPIN(pin string) (configured, ok bool) {
	c := f.a.Profile.Caja
	return c.HasPIN(), c.CheckPIN(pin)
}

// Comprobante returns the stored receipt uuid (live or archived), with its
// signed XML: the /caja page's XML download.
//
// Errors: ENOTFOUND, EINVALID for an empty uuid, EUNAVAILABLE.
func (f *Facade) Comprobante(ctx context.Context, uuid string) (*cfe.Issued, error) {
	return f.a.DB.FindByUUID(ctx, uuid)
}

// ivaIndicators are the page's IVA names and their IndFact (table of
// Formato de los CFE, B-C4).
var ivaIndicators = map[string]int{"": 3, "basica": 3, "minima": 2, "exento": 1}

// VentaRequest turns a manual sale into the signing request POST /sign-cfe
// would receive. A credit note's receiver, currency and reference come from
// the receipt it corrects, read from the store. The caller checked the
// supervisor's PIN.
//
// Errors: EINVALID (with the fields) for a sale the page should not have
// sent: an unknown type, no lines, a line without name or with a quantity
// or price that is not positive, an e-Factura without a RUC, a credit note
// without its reference or of a receipt that is not an e-Ticket or an
// e-Factura; ENOTFOUND for a reference that does not exist.
func (f *Facade) VentaRequest(ctx context.Context, v *apitype.VentaCaja) (*cfe.Request, error) {
	const op = "app.Venta"
	var fs []cfe.FieldError
	bad := func(campo, msg string) { fs = append(fs, cfe.FieldError{Campo: campo, Mensaje: msg}) }
	credit := v.Tipo == cfe.ETicketNC || v.Tipo == cfe.EFacturaNC
	keyed := v.IsKeyed()
	base := v.Tipo // the type whose rules apply: a form's replaced type
	if keyed {
		base = v.Tipo - 100
	}
	switch {
	case keyed:
		if v.Tipo != cfe.ETicket+100 && v.Tipo != cfe.EFactura+100 {
			bad("tipo", "se espera 201 (e-Ticket en contingencia) o 211 (e-Factura en contingencia)")
		}
		if v.Referencia != nil {
			bad("referencia", "un formulario de contingencia no lleva referencia")
		}
		if v.Formulario == nil {
			bad("formulario", "indique la serie, el número y la fecha del formulario")
		}
	case v.Tipo == cfe.ETicket || v.Tipo == cfe.EFactura:
		if v.Referencia != nil {
			bad("referencia", "solo una nota de crédito lleva referencia")
		}
	case credit:
		if v.Referencia == nil || strings.TrimSpace(v.Referencia.UUID) == "" {
			bad("referencia.uuid", "la nota de crédito debe referir el comprobante que corrige")
		} else if strings.TrimSpace(v.Referencia.Razon) == "" {
			bad("referencia.razon", "indique el motivo de la nota de crédito")
		}
	default:
		bad("tipo", "se espera 101 (e-Ticket), 111 (e-Factura), 102 o 112 (sus notas de crédito)")
	}
	if strings.TrimSpace(v.UUID) == "" {
		bad("uuid", "es obligatorio")
	}
	if len(v.Lineas) == 0 {
		bad("lineas", "agregue al menos una línea")
	}
	req := &cfe.Request{UUID: strings.TrimSpace(v.UUID), CFE: &cfe.RequestCFE{IdDoc: cfe.RequestIdDoc{TipoCfe: v.Tipo,
		FormaPago: cmp.Or(v.FormaPago, 1)}}}
	if !v.PreciosSinIVA {
		req.CFE.IdDoc.MontoBruto = 1
	}
	for i, l := range v.Lineas {
		at := "lineas[" + itoa(i) + "]"
		ind, ok := ivaIndicators[l.IVA]
		if !ok {
			bad(at+".iva", "se espera basica, minima o exento")
		}
		if strings.TrimSpace(l.Nombre) == "" {
			bad(at+".nombre", "es obligatorio")
		}
		if !l.Cantidad.IsPositive() {
			bad(at+".cantidad", "debe ser mayor que cero")
		}
		if !l.Precio.IsPositive() {
			bad(at+".precio", "debe ser mayor que cero")
		}
		qty, price := l.Cantidad, l.Precio
		req.CFE.Detalles = append(req.CFE.Detalles, cfe.RequestDetalle{IndicadorFacturacion: ind,
			NombreItem: strings.TrimSpace(l.Nombre), Cantidad: &qty, PrecioUnitario: &price})
	}
	if r := v.Receptor; r != nil && strings.TrimSpace(r.Documento) != "" {
		req.CFE.Receptor = &cfe.RequestReceptor{TipoDocumento: cmp.Or(r.TipoDocumento, 2), CodigoPais: "UY",
			Documento: strings.TrimSpace(r.Documento), RazonSocial: strings.TrimSpace(r.Nombre),
			Direccion: strings.TrimSpace(r.Direccion), Ciudad: strings.TrimSpace(r.Ciudad), Departamento: strings.TrimSpace(r.Departamento)}
	}
	if keyed && v.Formulario != nil {
		fo := v.Formulario
		req.CFE.IdDoc.Serie = strings.ToUpper(strings.TrimSpace(fo.Serie))
		req.CFE.IdDoc.Numero = fo.Numero
		req.CFE.IdDoc.FechaEmision = fo.Fecha
		req.Corrige = strings.TrimSpace(fo.Corrige)
		if fo.Fecha == nil || fo.Fecha.IsZero() {
			bad("formulario.fecha", "indique la fecha impresa en el formulario (dd/mm/aaaa)")
		}
	}
	if base == cfe.EFactura && (req.CFE.Receptor == nil || req.CFE.Receptor.TipoDocumento != 2) {
		bad("receptor.documento", "una e-Factura necesita el RUC del cliente")
	}
	if len(fs) > 0 {
		parts := make([]string, len(fs))
		for i, f := range fs {
			parts[i] = f.Campo + ": " + f.Mensaje
		}
		return nil, &cfe.Error{Code: cfe.EINVALID, Op: op, Fields: fs,
			Message: "la venta tiene datos incompletos o inválidos (" + strings.Join(parts, "; ") + ")"}
	}
	if credit {
		ref, err := f.a.DB.FindByUUID(ctx, strings.TrimSpace(v.Referencia.UUID))
		if err != nil {
			return nil, err
		}
		if ref.Type+1 != v.Tipo {
			return nil, &cfe.Error{Code: cfe.EINVALID, Op: op,
				Message: "la nota de crédito no corresponde al tipo del comprobante referido",
				Fields: []cfe.FieldError{{Campo: "tipo", Mensaje: "un " + ref.Type.Name() + " se corrige con una nota de crédito de su tipo (" +
					itoa(int(ref.Type)+1) + ")"}}}
		}
		doc, err := cfe.ParseXML(ref.XML)
		if err != nil {
			return nil, err
		}
		if r := doc.Receptor; r != nil && req.CFE.Receptor == nil {
			req.CFE.Receptor = &cfe.RequestReceptor{TipoDocumento: r.TipoDocRecep, CodigoPais: r.CodPaisRecep, Documento: r.DocRecep,
				DocumentoExt: r.DocRecepExt, RazonSocial: r.RznSocRecep, Direccion: r.DirRecep, Ciudad: r.CiudadRecep,
				Departamento: r.DeptoRecep, Pais: r.PaisRecep}
		}
		if c := doc.Totales.Currency(); c != cfe.CurrencyUYU {
			req.CFE.Totales = &cfe.RequestTotales{TipoMoneda: c, TipoCambio: doc.Totales.TpoCambio}
		}
		fecha := doc.IdDoc.FchEmis
		req.CFE.Referencias = []cfe.RequestReferencia{{NumeroLinea: 1, TipoCfe: ref.Type, Serie: ref.Serie, Numero: ref.Nro,
			Razon: strings.TrimSpace(v.Referencia.Razon), Fecha: &fecha}}
	}
	return req, nil
}

// Venta issues a manual sale (VentaRequest) through the issuer, then
// prints it unless asked not to. A printing failure leaves the sale signed:
// it is reported in the second result, in Spanish.
func (f *Facade) Venta(ctx context.Context, v *apitype.VentaCaja) (*issuer.Result, apitype.VentaCajaResultado, error) {
	var out apitype.VentaCajaResultado
	req, err := f.VentaRequest(ctx, v)
	if err != nil {
		return nil, out, refused(err)
	}
	res, err := f.Issue(ctx, req)
	if err != nil {
		return nil, out, err
	}
	if v.NoImprimir || v.IsKeyed() { // a keyed-in form is never printed: the customer holds the paper
		return res, out, nil
	}
	out.Impresora = cmp.Or(v.Impresora, f.a.Profile.DefaultPrinter)
	if out.Impresora == "" {
		out.ErrorImpresion = "no hay una impresora predeterminada: el comprobante se firmó; imprímalo desde la búsqueda eligiendo una impresora"
		return res, out, nil
	}
	doc, err := f.printing.Render(ctx, printing.CFERef{UUID: res.Issued.UUID}, "")
	if err == nil {
		_, err = f.printing.Print(ctx, doc, out.Impresora, 0)
	}
	if err != nil {
		out.ErrorImpresion = "el comprobante se firmó, pero no se pudo imprimir: " + cfe.ErrorMessage(err)
		return res, out, nil
	}
	out.Impreso = true
	return res, out, nil
}

func itoa(n int) string { return strconv.Itoa(n) }

// refused marks an error of VentaRequest as a refusal before the issuer
// (apitype.OpVentaRefused), keeping its code, message and fields.
func refused(err error) error {
	var ce *cfe.Error
	if !errors.As(err, &ce) {
		return &cfe.Error{Code: cfe.EINTERNAL, Op: apitype.OpVentaRefused, Err: err}
	}
	c := *ce
	c.Op, c.Err = apitype.OpVentaRefused, err
	return &c
}
