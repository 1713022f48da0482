package pdf

import "rsc.io/qr"

// Layout works on a display list: each section of the printed representation
// is built as a block of drawing operations relative to its own top-left
// corner, measured in millimetres; the template then places blocks on pages
// (translating them) and only the painter talks to the PDF library. This
// keeps measuring apart from drawing, so that a roll's length can be fitted
// to its content and "Página x de y" known before anything is drawn.

// opKind says what an op draws.
type opKind uint8

const (
	opText      opKind = iota // text with its baseline at (x, y)
	opRule                    // a line from (x, y) to (x+w, y+h)
	opBox                     // a rectangle outline at (x, y) of w × h
	opQR                      // a QR code in the square (x, y) of side w
	opLogo                    // the template's logo in the box (x, y, w, h)
	opWatermark               // WatermarkText outlined, centred on (x, y), w mm per em, turned by angle
)

// An op is one drawing operation.
type op struct {
	kind       opKind
	x, y, w, h float64
	face       *face
	size       float64 // points
	text       string
	angle      float64 // radians, rising to the right
	code       *qr.Code
}

// A block is a laid-out piece of content of a known height (and width, for
// boxes).
type block struct {
	w, h float64
	ops  []op
}

// add appends the ops of b placed at (x, y) of this block, and grows this
// block's height to cover it.
func (k *block) add(x, y float64, b block) {
	for _, o := range b.ops {
		o.x += x
		o.y += y
		k.ops = append(k.ops, o)
	}
	k.h = max(k.h, y+b.h)
}

// below appends b under everything already in the block, after a gap.
func (k *block) below(gap float64, b block) {
	if len(b.ops) == 0 {
		return
	}
	if len(k.ops) == 0 {
		gap = 0
	}
	k.add(0, k.h+gap, b)
}

// A style is a face at a size.
type style struct {
	face *face
	size float64 // points
}

// leading is the height of one line of text, in millimetres.
func (s style) leading() float64 { return s.size * 1.2 * ptToMM }

// ascent is how far the baseline sits below a line's top, in millimetres:
// the font's ascent, which clears accented capitals.
func (s style) ascent() float64 { return s.size * ptToMM * s.face.ascent }

// alignment of text in a column.
type alignment uint8

const (
	left alignment = iota
	center
	right
)

// column builds a block of stacked text lines of a fixed width.
type column struct {
	w float64
	b block
}

// line writes s on one line, aligned in the column. Text wider than the
// column is not wrapped: use para for text of unknown length.
func (c *column) line(st style, a alignment, s string) {
	s = st.face.clean(s)
	if s != "" {
		c.b.ops = append(c.b.ops, textOp(st, alignX(st, a, s, 0, c.w), c.b.h+st.ascent(), s))
	}
	c.b.h += st.leading()
}

// para writes s wrapped to the column's width.
func (c *column) para(st style, a alignment, s string) {
	for _, l := range st.face.wrap(s, st.size, c.w) {
		c.line(st, a, l)
	}
}

// pair writes a label on the left and a value on the right of a line. The
// label wraps so that its last line leaves room for the value; a value too
// wide for that gets a line of its own, under the label.
func (c *column) pair(st style, label, value string) {
	value = st.face.clean(value)
	room := c.w - st.face.width(value, st.size) - pairGap
	if room < c.w/3 {
		c.para(st, left, label)
		c.line(st, right, value)
		return
	}
	lines := st.face.wrap(label, st.size, room)
	if len(lines) == 0 {
		lines = []string{""}
	}
	for _, l := range lines[:len(lines)-1] {
		c.line(st, left, l)
	}
	top := c.b.h
	c.line(st, left, lines[len(lines)-1])
	c.b.ops = append(c.b.ops, textOp(st, alignX(st, right, value, 0, c.w), top+st.ascent(), value))
}

// pairGap is the least room between a label and its value.
const pairGap = 2

// space adds vertical room.
func (c *column) space(h float64) { c.b.h += h }

// rule draws a horizontal line across the column and leaves a little room.
func (c *column) rule() {
	c.b.h += 0.8
	c.b.ops = append(c.b.ops, op{kind: opRule, x: 0, y: c.b.h, w: c.w})
	c.b.h += 1.2
}

func textOp(st style, x, baseline float64, s string) op {
	return op{kind: opText, x: x, y: baseline, face: st.face, size: st.size, text: s}
}

// put places b at the current height, x millimetres from the left.
func (c *column) put(b block, x float64) { c.b.add(x, c.b.h, b) }

// alignX returns where text s starts in the span [x0, x0+w].
func alignX(st style, a alignment, s string, x0, w float64) float64 {
	return x0 + offset(a, w-st.face.width(s, st.size))
}

// offset is where something narrower than its span by room starts.
func offset(a alignment, room float64) float64 {
	switch a {
	case center:
		return room / 2
	case right:
		return room
	}
	return 0
}

// boxedMin surrounds content (laid out pad millimetres inside a box of width
// w) with a rectangle at least minH tall.
func boxedMin(content block, w, pad, minH float64) block {
	h := max(content.h+2*pad, minH)
	out := block{w: w, h: h, ops: []op{{kind: opBox, w: w, h: h}}}
	out.add(pad, pad+(h-2*pad-content.h)/2, content)
	return out
}
