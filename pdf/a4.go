package pdf

import (
	"strconv"

	"github.com/shopspring/decimal"
)

func a4Geometry(fontSize float64) geometry {
	g := geometry{pageW: 210, pageH: 297, margin: 10, size: 9, qrSide: 25}
	if fontSize != 0 {
		g.size = fontSize
	}
	return g
}

// A4 positions: the emitter on the left, the document box on the right
// (DGI's zones 1 and 2), the receptor box under the emitter.
const (
	a4SideW = 80.0 // document and facts boxes, on the right
	a4Gap   = 5.0
)

// a flowItem is a block of the body; rows of the table carry their amount
// for the running sum; a part of the Adenda keeps adendaGap from the header
// and the footer.
type flowItem struct {
	b      block
	row    bool
	adenda bool
	amount decimal.Decimal
}

// a4 lays the receipt out on A4 pages. Every page repeats the header
// (emitter, document, receptor), the Sello Digital and "Página x de y"; the
// table's header is repeated on every page that has lines; when lines go on
// to the next page, their running sum is written at the bottom of the page
// and again at the top of the next one ("Transporte"); the footer (CAE,
// Fecha de vencimiento, verification) is on the last page only.
func (l *layout) a4() []page {
	w := l.pageW - 2*l.margin
	header := l.a4Header(w)
	sello := l.sello()
	pageNo := column{w: w}
	pageNo.line(l.body(), right, "Página 1 de 1")
	footerTop := l.pageH - l.margin - pageNo.b.h - max(sello.h, l.a4Pie(w, sello.w).h)
	bodyTop := l.margin + header.h + 4
	tableHead := l.a4TableHeader(w)
	carry := l.a4Carry(w, decimal.Zero)
	bottom := footerTop - 2
	if l.r.table.sums {
		bottom -= carry.h // room for "Transporte" at the foot of the page
	}

	var pages []page
	var cur *page
	var y float64
	sum := decimal.Zero
	place := func(b block) {
		for _, o := range b.ops {
			o.x += l.margin
			o.y += y
			cur.ops = append(cur.ops, o)
		}
		y += b.h
	}
	newPage := func(next flowItem) {
		pages = append(pages, page{w: l.pageW, h: l.pageH})
		cur, y = &pages[len(pages)-1], l.margin
		place(header)
		y = bodyTop
		if next.adenda {
			y = max(y, l.margin+header.h+adendaGap)
		}
		if next.row {
			place(tableHead)
			if len(pages) > 1 && l.r.table.sums {
				place(l.a4Carry(w, sum))
			}
		}
	}
	flow := l.a4Flow(w)
	for i, it := range flow {
		limit := bottom
		if it.adenda {
			limit = footerTop - adendaGap
		}
		if i == 0 {
			newPage(it)
		} else if y+it.b.h > limit && y > bodyTop+tableHead.h+carry.h {
			if it.row && l.r.table.sums {
				place(l.a4Carry(w, sum))
			}
			newPage(it)
		}
		place(it.b)
		if it.row {
			sum = sum.Add(it.amount)
		}
	}
	if len(pages) == 0 {
		newPage(flowItem{})
	}

	for i := range pages {
		p := &pages[i]
		y = footerTop
		cur = p
		place(sello)
		if i == len(pages)-1 {
			y = footerTop
			pie := l.a4Pie(w, sello.w)
			pie.ops = offsetOps(pie.ops, sello.w+a4Gap)
			place(pie)
		}
		num := column{w: w}
		num.line(l.body(), right, "Página "+strconv.Itoa(i+1)+" de "+strconv.Itoa(len(pages)))
		y = l.pageH - l.margin - num.b.h
		place(num.b)
		if l.test {
			marks := watermarks(l.margin, bodyTop, w, footerTop-bodyTop, a4WatermarkAngle)
			p.ops = append(marks, p.ops...)
		}
	}
	return pages
}

// a4WatermarkAngle is the slope of the watermark on A4 (50°).
const a4WatermarkAngle = 0.8726646259971648

func offsetOps(ops []op, dx float64) []op {
	for i := range ops {
		ops[i].x += dx
	}
	return ops
}

// a4Header is the part repeated on every page: the test banner, the emitter
// and the document box, then the receptor box and the document's facts,
// then its legends.
func (l *layout) a4Header(w float64) block {
	var h block
	if l.bannered() {
		h.below(0, l.banner(w))
	}
	leftW := w - a4SideW - a4Gap
	em := column{w: leftW}
	em.put(l.logoBlock(leftW, 40, 20, left), 0)
	if l.logo != nil {
		em.space(2)
	}
	em.put(l.emitter(leftW, left), 0)
	doc := boxedMin(l.document(a4SideW-6), a4SideW, 3, 25)

	var top block
	top.add(0, 0, em.b)
	top.add(w-a4SideW, 0, doc)
	h.below(2, top)

	var second block
	second.add(0, 0, l.receptor(leftW))
	second.add(w-a4SideW, 0, boxedMin(l.facts(a4SideW-6, "", l.r.facts), a4SideW, 3, 10))
	h.below(4, second)
	h.below(2, l.legends(w, left))
	return h
}

// a4Columns returns the x and width of each column of the table.
func (l *layout) a4Columns(w float64) (xs, ws []float64) {
	fixed := 0.0
	for _, c := range l.r.table.cols {
		fixed += c.width
	}
	x := 0.0
	for _, c := range l.r.table.cols {
		cw := c.width
		if cw == 0 {
			cw = w - fixed
		}
		xs, ws = append(xs, x), append(ws, cw)
		x += cw
	}
	return xs, ws
}

// cellPad is the room between a cell's text and its column's edges.
const cellPad = 1.2

// a4Cells lays out one line of the table: each cell wrapped in its column,
// the notes under the wide column.
func (l *layout) a4Cells(w float64, st style, cells []string, notes []string) block {
	xs, ws := l.a4Columns(w)
	var b block
	for i, s := range cells {
		c := column{w: ws[i] - 2*cellPad}
		c.space(0.8)
		c.para(st, l.r.table.cols[i].align, s)
		if i == l.wide() {
			for _, n := range notes {
				c.para(l.small(), left, n)
			}
		}
		c.space(0.8)
		b.add(xs[i]+cellPad, 0, c.b)
	}
	return b
}

func (l *layout) a4TableHeader(w float64) block {
	titles := make([]string, len(l.r.table.cols))
	for i, c := range l.r.table.cols {
		titles[i] = c.title
	}
	b := l.a4Cells(w, l.strong(), titles, nil)
	b.ops = append(b.ops, op{kind: opRule, w: w}, op{kind: opRule, y: b.h, w: w})
	return b
}

// a4Carry is the "Transporte" line: the sum of the lines so far.
func (l *layout) a4Carry(w float64, sum decimal.Decimal) block {
	cells := make([]string, len(l.r.table.cols))
	cells[l.wide()] = "Transporte"
	cells[len(cells)-1] = money(sum)
	b := l.a4Cells(w, l.strong(), cells, nil)
	b.ops = append(b.ops, op{kind: opRule, w: w}, op{kind: opRule, y: b.h, w: w})
	return b
}

// a4Flow is the body: the lines of the table, the totals beside the
// discounts, subtotals and payments, the references, the Adenda and the
// template's legends.
func (l *layout) a4Flow(w float64) []flowItem {
	var flow []flowItem
	for _, r := range l.r.table.rows {
		flow = append(flow, flowItem{b: l.a4Cells(w, l.body(), r.cells, r.notes), row: true, amount: r.amount})
	}
	adenda := false // what push adds is part of the Adenda
	push := func(gap float64, bs ...block) {
		for i, b := range bs {
			if len(b.ops) > 0 {
				if i > 0 {
					gap = 0
				}
				flow = append(flow, flowItem{b: spaced(gap, b), adenda: adenda})
			}
		}
	}
	if len(flow) > 0 {
		push(0, ruled(w))
	}
	half := (w - a4Gap) / 2
	side := column{w: half}
	for _, b := range []block{
		l.facts(half, TitleAdjusts, l.r.adjusts),
		l.facts(half, TitleSubtotals, l.r.subtotals),
		l.facts(half, TitlePayments, l.r.payments),
	} {
		if len(b.ops) > 0 {
			side.put(b, 0)
			side.space(2)
		}
	}
	var summary block
	summary.add(0, 0, side.b)
	summary.add(w-half, 0, l.facts(half, "", l.r.totals))
	push(2, summary)
	push(3, l.references(w)...)
	legendsGap := 3.0
	if blocks := l.adenda(w); blocks != nil {
		adenda = true
		push(adendaGap, blocks...)
		adenda = false
		legendsGap = adendaGap
	}
	push(legendsGap, l.extra(w, left))
	return flow
}

// a4Pie is the footer of the last page, right of the Sello Digital: the CAE
// data and verification text, and the Fecha de vencimiento box at the right.
func (l *layout) a4Pie(w, selloW float64) block {
	v := l.vencimiento(w / 3)
	textW := w - selloW - a4Gap - v.w - a4Gap
	var b block
	b.add(0, qrMargin, l.pie(textW, left))
	b.add(w-selloW-a4Gap-v.w, qrMargin, v)
	return b
}
