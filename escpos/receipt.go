package escpos

import (
	"strings"
	"unicode/utf8"

	"rsc.io/qr"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/pdf"
)

// Render returns the ESC/POS bytes of one copy of the receipt r on the
// printer o describes: reset and code page, the receipt in DGI's order (the
// Rollo template's), the QR code 22 to 30 mm wide, the drawer pulse when
// asked, and the cut. It returns EINVALID for bad options (naming the
// option) and EINTERNAL when the QR code cannot be made at DGI's size on
// this printer.
func Render(r *pdf.Receipt, o Options) ([]byte, error) {
	const op = "escpos.Render"
	o, err := o.normalize()
	if err != nil {
		return nil, err
	}
	cp := codePages[o.CodePage]
	table := cp.epson
	if o.CodeTable != 0 {
		table = o.CodeTable
	}
	w := &writer{e: encoder{buf: make([]byte, 0, 4096), table: cp.table}, cols: o.Columns}
	w.e.init(table)
	if r.Test || r.KeyedCopy {
		w.banner(r)
	}
	if len(r.Logo) > 0 {
		if err := w.logo(r.Logo, o); err != nil {
			return nil, &cfe.Error{Code: cfe.EINTERNAL, Op: op, Message: "no se pudo imprimir el logo de la plantilla", Err: err}
		}
	}
	w.header(r)
	w.receptor(r.Receptor)
	w.detail(r)
	w.sums(r)
	if err := w.footer(r, o); err != nil {
		return nil, &cfe.Error{Code: cfe.EINTERNAL, Op: op, Message: "no se pudo generar el código QR", Err: err}
	}
	if r.Test || r.KeyedCopy {
		w.banner(r)
	}
	if o.DrawerKick {
		w.e.kick()
	}
	w.e.cut(o.Cut)
	return w.e.buf, nil
}

// logo prints the template's logo centred, as wide as the head and at most
// 20 mm high. A byte of the image that would start a real-time command
// (DLE EOT, ...) loses its one dot: a printer obeys them inside image data.
func (w *writer) logo(b []byte, o Options) error {
	head, maxH := int(o.printableMM()*o.dotsPerMM()), int(logoMaxMM*o.dotsPerMM())
	bits, wb, h, err := logoBitmap(b, head, maxH)
	if err != nil {
		return err
	}
	for i := 0; i+1 < len(bits); i++ {
		if bits[i] == dle && hasRealTime(bits[i:i+2]) {
			bits[i] = 0
		}
	}
	w.e.align(alignCenter)
	w.e.raster(bits, wb, h)
	w.e.line("")
	w.e.align(alignLeft)
	return nil
}

// writer lays text out in columns of a fixed-width font.
type writer struct {
	e    encoder
	cols int
}

// para writes text wrapped to the line width.
func (w *writer) para(s string) {
	for _, l := range wrap(s, w.cols) {
		w.e.line(l)
	}
}

// strong writes text wrapped and emphasised.
func (w *writer) strong(s string) {
	if strings.TrimSpace(s) == "" {
		return
	}
	w.e.bold(true)
	w.para(s)
	w.e.bold(false)
}

// big writes text emphasised in double height, for the emitter's name and
// the document's identification. (Font A's 24-dot cell is 3 mm at 203 dpi:
// all text is at least DGI's 2 and 3 mm.)
func (w *writer) big(s string) {
	if strings.TrimSpace(s) == "" {
		return
	}
	w.e.tall(true)
	w.strong(s)
	w.e.tall(false)
}

// rule is a line of dashes across the width.
func (w *writer) rule(c string) { w.e.line(strings.Repeat(c, w.cols)) }

// pair writes label at the left and value at the right of one line, or of
// two when they do not fit together.
func (w *writer) pair(label, value string) {
	lw, vw := utf8.RuneCountInString(label), utf8.RuneCountInString(value)
	switch {
	case value == "":
		w.para(label)
	case label == "":
		w.right(value)
	case lw+1+vw <= w.cols:
		w.e.line(label + strings.Repeat(" ", w.cols-lw-vw) + value)
	default:
		w.para(label)
		w.right(value)
	}
}

// right writes text aligned to the right, wrapped.
func (w *writer) right(s string) {
	for _, l := range wrap(s, w.cols) {
		w.e.line(strings.Repeat(" ", w.cols-utf8.RuneCountInString(l)) + l)
	}
}

// banner is the legends of a copy that is no fiscal document, emphasised and
// centred: pdf.KeyedCopyText for a contingency receipt keyed in, the test
// legend (pdf.WatermarkText) outside production.
func (w *writer) banner(r *pdf.Receipt) {
	w.e.align(alignCenter)
	if r.KeyedCopy {
		w.strong(pdf.KeyedCopyText)
	}
	if r.Test {
		w.strong(pdf.WatermarkText)
	}
	w.e.align(alignLeft)
	w.e.line("")
}

// header is zones 1 and 2: the emitter, its special box, and the
// document's identification, centred; then the document's legends and facts.
func (w *writer) header(r *pdf.Receipt) {
	w.e.align(alignCenter)
	w.big(r.EmitterName)
	for _, s := range r.EmitterInfo {
		w.para(s)
	}
	if len(r.Special) > 0 {
		w.box(r.Special)
	}
	w.e.line("")
	w.big(r.RUC)
	w.big(r.TypeName)
	w.big(r.Number)
	w.strong(r.Payment)
	for _, s := range r.Legends {
		w.strong(s)
	}
	w.e.align(alignLeft)
	w.e.line("")
	for _, f := range r.Facts {
		w.pair(f.Label+":", f.Value)
	}
}

// box frames lines in bold with + - |, each centred in the box, as wide as the
// longest line and at most the line width.
func (w *writer) box(lines []string) {
	inner := 0
	for _, s := range lines {
		inner = max(inner, utf8.RuneCountInString(s))
	}
	inner = min(inner+2, w.cols-2)
	edge := "+" + strings.Repeat("-", inner) + "+"
	w.e.line(edge)
	w.e.bold(true)
	for _, s := range lines {
		for _, l := range wrap(s, inner-2) {
			pad := inner - utf8.RuneCountInString(l)
			w.e.line("|" + strings.Repeat(" ", pad/2) + l + strings.Repeat(" ", pad-pad/2) + "|")
		}
	}
	w.e.bold(false)
	w.e.line(edge)
}

// receptor is zone 3: the box titled CONSUMO FINAL, RUC COMPRADOR, ...
func (w *writer) receptor(p *pdf.Party) {
	if p == nil {
		return
	}
	w.e.line("")
	w.rule("-")
	w.big(p.Title)
	w.strong(p.Doc)
	for _, s := range p.Lines {
		w.para(s)
	}
	w.rule("-")
}

// detail is the table of lines as the Rollo template prints it: the
// description (wrapped) and its notes, then the other cells on one line,
// "Cant. x P. unitario" at the left and the amount at the right; an
// e-Remito's two columns put the quantity beside the description.
func (w *writer) detail(r *pdf.Receipt) {
	if len(r.Columns) == 0 {
		return
	}
	wide := 0
	for i, c := range r.Columns {
		if c.Wide {
			wide = i
		}
	}
	cells := func(cell func(int) string) (detail, last string) {
		var parts []string
		for i := range r.Columns {
			if i == wide {
				continue
			}
			if last != "" {
				parts = append(parts, last)
			}
			last = cell(i)
		}
		return strings.Join(parts, " x "), last
	}
	w.e.line("")
	w.e.bold(true)
	detail, last := cells(func(i int) string { return r.Columns[i].Title })
	if len(r.Columns) == 2 {
		w.pair(r.Columns[wide].Title, last)
	} else {
		w.e.line(r.Columns[wide].Title)
		w.pair(detail, last)
	}
	w.e.bold(false)
	w.rule("-")
	for _, row := range r.Rows {
		detail, last := cells(func(i int) string { return row.Cells[i] })
		if len(r.Columns) == 2 {
			w.pair(row.Cells[wide], last)
		} else {
			w.para(row.Cells[wide])
		}
		for _, n := range row.Notes {
			for _, l := range wrap(n, w.cols-2) {
				w.e.line("  " + l)
			}
		}
		if len(r.Columns) > 2 {
			w.pair(detail, last)
		}
	}
	w.rule("-")
}

// sums are the global adjustments, subtotals, totals (those to pay
// emphasised), payments, references and the Adenda.
func (w *writer) sums(r *pdf.Receipt) {
	facts := func(title string, fs []pdf.Fact) {
		if len(fs) == 0 {
			return
		}
		if title != "" {
			w.strong(title)
		}
		for _, f := range fs {
			w.e.bold(f.Strong)
			w.pair(f.Label, f.Value)
			w.e.bold(false)
		}
		w.e.line("")
	}
	facts(pdf.TitleAdjusts, r.Adjusts)
	facts(pdf.TitleSubtotals, r.Subtotals)
	facts("", r.Totals)
	facts(pdf.TitlePayments, r.Payments)
	if len(r.References) > 0 {
		w.strong(pdf.TitleReferences)
		for _, s := range r.References {
			w.para(s)
		}
		w.e.line("")
	}
	if r.Adenda != "" {
		// DGI keeps 5 mm between the Adenda's area and the CFE's data: a
		// blank line (about 4 mm) plus the rules.
		w.e.line("")
		w.rule("=")
		w.strong(pdf.TitleAdenda)
		for _, para := range strings.Split(strings.ReplaceAll(r.Adenda, "\r\n", "\n"), "\n") {
			if para == "" {
				w.e.line("")
			}
			w.para(para)
		}
		w.rule("=")
		w.e.line("")
	}
}

// footer is zone 5: the Sello Digital (QR code and security code) centred,
// the footer texts in DGI's order, the Fecha de vencimiento box, and the
// template's legends.
func (w *writer) footer(r *pdf.Receipt, o Options) error {
	w.e.align(alignCenter)
	w.e.line("")
	code, err := qr.Encode(r.QRData, qr.M)
	if err != nil {
		return err
	}
	module, err := qrModule(code.Size, o.dotsPerMM())
	if err != nil {
		return err
	}
	if o.QR == QRRaster {
		// The clear margin: DGI's 3 mm, or the 4 modules QR asks when they
		// are wider, within the printable width of the head.
		head := int(o.printableMM() * o.dotsPerMM())
		quiet := min(max(4*module, int(qrClearMM*o.dotsPerMM()+0.5)), (head-code.Size*module)/2-8)
		bits, wb, h := qrBitmap(code, module, quiet)
		// A printer obeys DLE EOT and DLE ENQ wherever they appear, image
		// data included: widen the margin a dot at a time until the image
		// holds none.
		for i := 0; i < 8 && hasRealTime(bits); i++ {
			quiet++
			bits, wb, h = qrBitmap(code, module, quiet)
		}
		w.e.raster(bits, wb, h)
	} else {
		w.e.qr(r.QRData, module)
	}
	w.e.line("")
	w.para(pdf.TitleSecurityCode)
	w.big(r.SecurityCode)
	w.e.line("")
	w.para(r.EmitterSince)
	w.para(r.Verify)
	w.strong(r.IVAalDia)
	w.strong(r.CAE)
	w.para(r.CAERange)
	w.e.line("")
	w.box([]string{pdf.TitleCAEExpiry, r.CAEExpiry})
	for _, s := range r.Extra {
		w.para(s)
	}
	w.e.align(alignLeft)
	w.e.line("")
	return nil
}

// wrap splits s into lines of at most width characters, breaking at
// spaces, and words longer than a line wherever they reach its end.
func wrap(s string, width int) []string {
	var out []string
	var cur []rune
	flush := func() {
		out = append(out, strings.TrimRight(string(cur), " "))
		cur = cur[:0]
	}
	for _, word := range strings.Fields(s) {
		rw := []rune(word)
		if len(cur) > 0 && len(cur)+1+len(rw) > width {
			flush()
		}
		if len(cur) > 0 {
			cur = append(cur, ' ')
		}
		for len(rw) > width-len(cur) {
			n := width - len(cur)
			cur = append(cur, rw[:n]...)
			rw = rw[n:]
			flush()
		}
		cur = append(cur, rw...)
	}
	if len(cur) > 0 {
		flush()
	}
	return out
}
