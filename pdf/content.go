package pdf

import (
	"strings"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// Receipt is the content of the printed representation as text, in DGI's
// order: what the Rollo templates print, for renderers that draw it in
// another language (ESC/POS for thermal printers). It is the model the PDF
// layouts use, copied out so that no renderer shares the PDF's drawing code.
type Receipt struct {
	// Test is true outside production: WatermarkText is printed at the
	// top and at the end.
	Test bool
	// KeyedCopy is true for a contingency receipt keyed in (2xx): its copy
	// is marked KeyedCopyText at the top and at the end.
	KeyedCopy bool
	// Logo is the template's logo (PNG or JPEG), printed above the emitter
	// at most 20 mm high on rolls; nil when the template has none.
	Logo []byte

	// Zone 1, emitter.
	EmitterName string
	EmitterInfo []string // nombre comercial, giro, domicilio, city, branch, phones, e-mail
	Special     []string // the box of an exonerated / IVA mínimo / monotributo emitter
	// Zone 2, document identification.
	RUC      string // "RUC 219999830019"
	TypeName string // "e-Ticket", "e-Factura Cobranza"
	Number   string // "Serie A Nº 1"
	Payment  string // "Forma de pago: Contado"; "" when the CFE has none
	Facts    []Fact // date, currency, ...
	Legends  []string
	// Zone 3, receptor; nil when there is none to print.
	Receptor *Party
	// Zone 4, body.
	Columns    []Column
	Rows       []Row
	Adjusts    []Fact // global discounts and surcharges
	Subtotals  []Fact
	Totals     []Fact
	Payments   []Fact
	References []string
	Adenda     string // printed in a box titled ADENDA; line breaks kept
	// Zone 5, footer (Sello Digital and CAE data).
	QRData       string // DGI's verification URL, the QR's content
	SecurityCode string // the 6 characters printed under "Código de seguridad"
	EmitterSince string // "Fecha emisor: dd/mm/aaaa" or "Res. ..."; may be ""
	Verify       string // "Puede verificar comprobante en ..."
	IVAalDia     string // the constancia, or A-C17's meaning (NoIVAalDia); "" when neither is printed
	CAE          string // "CAE Nº 90120000194"
	CAERange     string // "Serie A del 1 al 100"
	CAEExpiry    string // dd/mm/aaaa, printed under "Fecha de vencimiento"
	Extra        []string
}

// A Fact is a label and its value; Strong ones (the totals to pay) are
// emphasised.
type Fact struct {
	Label, Value string
	Strong       bool
}

// A Party is the receptor box: its title (CONSUMO FINAL, RUC COMPRADOR, ...),
// the receptor's document and its name and address lines.
type Party struct {
	Title string
	Doc   string
	Lines []string
}

// A Column of the detail: its title, and whether it is the wide one (the
// description), which takes the room the others leave.
type Column struct {
	Title     string
	Wide      bool
	AlignLeft bool
}

// A Row is one detail line: a cell per column and the notes printed under
// the description (discounts, retentions, ...).
type Row struct {
	Cells []string
	Notes []string
}

// NewReceipt reads a signed CFE and returns what its printed representation
// shows with opts (Template's web site and legends, Production, Adenda,
// Footer). It returns EINVALID when signedXML is not a signed CFE.
func NewReceipt(signedXML []byte, opts Options) (*Receipt, error) {
	c, err := cfe.ParseXML(signedXML)
	if err != nil {
		return nil, err
	}
	digest, err := cfe.DigestValue(signedXML)
	if err != nil {
		return nil, err
	}
	r := newReceipt(c, digest, &opts).export(!opts.Production)
	r.Logo = opts.Template.Logo
	info, _ := c.Type().Info()
	r.KeyedCopy = info.Contingency
	return r, nil
}

// export copies r into a Receipt.
func (r *receipt) export(test bool) *Receipt {
	facts := func(in []fact) []Fact {
		out := make([]Fact, len(in))
		for i, f := range in {
			out[i] = Fact{Label: f.label, Value: f.value, Strong: f.strong}
		}
		return out
	}
	out := &Receipt{
		Test:         test,
		EmitterName:  r.emitterName,
		EmitterInfo:  r.emitterInfo,
		Special:      r.special,
		RUC:          r.ruc,
		TypeName:     r.typeName,
		Number:       r.number,
		Payment:      r.payment,
		Facts:        facts(r.facts),
		Legends:      r.legends,
		Adjusts:      facts(r.adjusts),
		Subtotals:    facts(r.subtotals),
		Totals:       facts(r.totals),
		Payments:     facts(r.payments),
		References:   r.references,
		Adenda:       r.adenda,
		QRData:       r.qrData,
		SecurityCode: r.securityCode,
		EmitterSince: r.emitterSince,
		Verify:       r.verify,
		IVAalDia:     r.ivaAlDia,
		CAE:          r.cae,
		CAERange:     r.caeRange,
		CAEExpiry:    r.caeExpiry,
		Extra:        r.extra,
	}
	if p := r.receptor; p != nil {
		out.Receptor = &Party{Title: p.title, Doc: p.doc, Lines: p.lines}
	}
	for _, c := range r.table.cols {
		out.Columns = append(out.Columns, Column{Title: c.title, Wide: c.width == 0, AlignLeft: c.align == left})
	}
	for _, row := range r.table.rows {
		out.Rows = append(out.Rows, Row{Cells: row.cells, Notes: row.notes})
	}
	return out
}

// The titles the printed representation gives its parts, whatever draws it.
const (
	TitleAdjusts      = "Descuentos y recargos"
	TitleSubtotals    = "Subtotales"
	TitlePayments     = "Medios de pago"
	TitleReferences   = "Referencias"
	TitleAdenda       = "ADENDA"
	TitleSecurityCode = "Código de seguridad"
	TitleCAEExpiry    = "Fecha de vencimiento"
)

// Texts lists every text the receipt prints, in no particular order, but
// the QR data and the test legend: what any rendering of it must show.
func (r *Receipt) Texts() []string {
	out := []string{r.EmitterName, r.RUC, r.TypeName, r.Number, r.Payment, r.Adenda, r.SecurityCode,
		r.EmitterSince, r.Verify, r.IVAalDia, r.CAE, r.CAERange, r.CAEExpiry, TitleSecurityCode, TitleCAEExpiry}
	if r.Adenda != "" {
		out = append(out, TitleAdenda)
	}
	if len(r.References) > 0 {
		out = append(out, TitleReferences)
	}
	out = append(out, r.EmitterInfo...)
	out = append(out, r.Special...)
	out = append(out, r.Legends...)
	out = append(out, r.References...)
	out = append(out, r.Extra...)
	for _, fs := range [][]Fact{r.Facts, r.Adjusts, r.Subtotals, r.Totals, r.Payments} {
		for _, f := range fs {
			out = append(out, f.Label, f.Value)
		}
	}
	if p := r.Receptor; p != nil {
		out = append(append(out, p.Title, p.Doc), p.Lines...)
	}
	for _, row := range r.Rows {
		out = append(append(out, row.Cells...), row.Notes...)
	}
	kept := out[:0]
	for _, s := range out {
		if strings.TrimSpace(s) != "" {
			kept = append(kept, s)
		}
	}
	return kept
}
