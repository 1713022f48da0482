package pdf

import "strings"

// Roll geometry. The page is as wide as the paper; the content keeps DGI's
// 5 mm margins, which also keeps it inside the printable width of thermal
// printers (72 mm of an 80 mm roll, 48 mm of a 58 mm roll).
const (
	rollMinLength = 150.0  // DGI's minimum document size is 15 × 5.7 cm
	rollMaxLength = 5000.0 // PDF viewers and drivers handle pages up to 200 in
)

func rollGeometry(b Base, fontSize float64) geometry {
	g := geometry{pageW: 80, margin: 5, size: 8, qrSide: 25}
	if b == Rollo58 {
		g = geometry{pageW: 58, margin: 5, size: 7.5, qrSide: 24}
	}
	if fontSize != 0 {
		g.size = fontSize
	}
	return g
}

// roll lays the receipt out in one column, in DGI's order for paper that
// cannot keep the A4 positions: emitter, document, receptor, body, footer.
// The page is as long as the content; a receipt longer than a PDF page may
// be continued on further pages of the same width.
func (l *layout) roll() []page {
	w := l.pageW - 2*l.margin
	var blocks []block
	push := func(gap float64, bs ...block) {
		for i, b := range bs {
			if len(b.ops) == 0 {
				continue
			}
			if i > 0 {
				gap = 0 // a sequence that may break across pages
			}
			blocks = append(blocks, spaced(gap, b))
		}
	}
	if l.bannered() {
		push(0, l.banner(w))
	}
	push(1, l.logoBlock(w, w, 20, center))
	push(1, l.emitter(w, center))
	push(2, l.document(w))
	push(1, l.legends(w, center))
	push(2, l.facts(w, "", l.r.facts))
	push(2, l.receptor(w))
	push(2, l.rollHeader(w))
	for _, r := range l.r.table.rows {
		push(0.6, l.rollRow(w, r))
	}
	push(1, ruled(w))
	push(1, l.facts(w, TitleAdjusts, l.r.adjusts))
	push(1, l.facts(w, TitleSubtotals, l.r.subtotals))
	push(1, l.facts(w, "", l.r.totals))
	push(2, l.facts(w, TitlePayments, l.r.payments))
	push(2, l.references(w)...)
	footerGap := 3.0
	if adenda := l.adenda(w); adenda != nil {
		push(adendaGap, adenda...)
		footerGap = adendaGap
	}
	footer := len(blocks)
	push(footerGap, l.rollFooter(w))
	push(2, l.extra(w, center))
	if l.bannered() {
		push(2, l.banner(w))
	}
	return l.rollPages(blocks, footer)
}

// spaced returns b preceded by gap millimetres.
func spaced(gap float64, b block) block {
	out := block{w: b.w}
	out.add(0, gap, b)
	return out
}

// ruled is a rule across the width.
func ruled(w float64) block {
	c := column{w: w}
	c.rule()
	return c.b
}

// rollHeader titles the lines: on a roll a line is its description, then
// its other cells on one line (Cant. x P. unitario ... Importe).
func (l *layout) rollHeader(w float64) block {
	c := column{w: w}
	c.rule()
	title := func(i int) string { return l.r.table.cols[i].title }
	detail, last := l.rollCells(title)
	if detail == "" {
		detail = title(l.wide())
	}
	c.pair(l.strong(), detail, last)
	c.rule()
	return c.b
}

// rollRow is one detail line: the description (wrapped), its notes, then
// the other cells; a table of two columns (e-Remito) puts the quantity on
// the description's line.
func (l *layout) rollRow(w float64, r row) block {
	c := column{w: w}
	detail, last := l.rollCells(func(i int) string { return r.cells[i] })
	name := r.cells[l.wide()]
	if len(l.r.table.cols) == 2 {
		c.pair(l.body(), name, last)
	} else {
		c.para(l.body(), left, name)
	}
	for _, n := range r.notes {
		c.para(l.small(), left, n)
	}
	if len(l.r.table.cols) > 2 {
		c.pair(l.body(), detail, last)
	}
	return c.b
}

// wide is the index of the column that takes the remaining width.
func (l *layout) wide() int {
	for i, c := range l.r.table.cols {
		if c.width == 0 {
			return i
		}
	}
	return 0
}

// rollCells returns, for the columns other than the wide one, the last
// one's cell (the amount, or the quantity of an e-Remito) and the others'
// joined with " x " (quantity x unit price, rate x base).
func (l *layout) rollCells(cell func(int) string) (detail, last string) {
	var parts []string
	for i := range l.r.table.cols {
		if i == l.wide() {
			continue
		}
		if last != "" {
			parts = append(parts, last)
		}
		last = cell(i)
	}
	return strings.Join(parts, " x "), last
}

// rollFooter is zone 5 on a roll: the Sello Digital centred, then the CAE
// data and the Fecha de vencimiento box.
func (l *layout) rollFooter(w float64) block {
	c := column{w: w}
	c.put(l.sello(), (w-(l.qrSide+2*qrMargin))/2)
	c.space(1)
	c.put(l.pie(w, center), 0)
	c.space(2)
	v := l.vencimiento(w)
	c.put(v, (w-v.w)/2)
	return c.b
}

// rollPages stacks the blocks on pages as long as their content, starting a
// new page only past rollMaxLength. Outside production the watermark covers
// each page down to the footer (blocks[footer:]), which holds the QR code.
func (l *layout) rollPages(blocks []block, footer int) []page {
	var pages []page
	cur := page{w: l.pageW}
	y, markEnd := l.margin, 0.0
	flush := func() {
		cur.h = max(y+l.margin, rollMinLength)
		if markEnd == 0 {
			markEnd = cur.h - l.margin
		}
		if l.test {
			marks := watermarks(l.margin, l.margin, cur.w-2*l.margin, markEnd-l.margin, rollWatermarkAngle)
			cur.ops = append(marks, cur.ops...)
		}
		pages = append(pages, cur)
		cur, y, markEnd = page{w: l.pageW}, l.margin, 0
	}
	for i, b := range blocks {
		if y+b.h > rollMaxLength-l.margin && len(cur.ops) > 0 {
			flush()
		}
		if i == footer {
			markEnd = y
		}
		for _, o := range b.ops {
			o.x += l.margin
			o.y += y
			cur.ops = append(cur.ops, o)
		}
		y += b.h
	}
	flush()
	return pages
}

// rollWatermarkAngle is the slope of the watermark on rolls (60°).
const rollWatermarkAngle = 1.0471975511965976
