package pdf

import (
	"bytes"
	"errors"
	"image"
	"strings"
	"time"

	"rsc.io/qr"
)

// geometry is the paper of a layout, in millimetres, and its text size.
type geometry struct {
	pageW, pageH float64 // pageH is 0 for rolls: the length follows the content
	margin       float64 // DGI: at least 5 mm without text
	size         float64 // body text, points
	qrSide       float64
}

// layout lays out one receipt; a4 and roll are its two forms.
type layout struct {
	geometry
	r       *receipt
	qr      *qr.Code
	logo    *logoImage
	isRoll  bool      // a roll layout, else A4
	test    bool      // outside production: watermark
	preview bool      // not an issued CFE: PreviewText banner
	keyed   bool      // a contingency receipt keyed in: KeyedCopyText banner
	created time.Time // the signature time
}

// pages lays the receipt out.
func (l *layout) pages() []page {
	if l.isRoll {
		return l.roll()
	}
	return l.a4()
}

// Text styles. DGI asks for characters of at least 2 mm, and "caracteres no
// inferiores a 3 mm de alto" for the mandated legends and boxes (the
// document's identification, the special CAE box, the receptor box, Fecha de
// vencimiento): a character's height is read as the ink of its capitals, so
// headings and legends are never smaller than legendCapMM of capital height
// (12 pt of Go Bold, whose capitals are 0.723 em: a 9 pt font's em is 3.2 mm
// but its capitals 2.3 mm). TestRender_LegendsThreeMillimetres measures them
// on the rasterised page.
func (l *layout) body() style    { return style{regular, l.size} }
func (l *layout) small() style   { return style{regular, max(l.size-1, MinFontSize)} }
func (l *layout) strong() style  { return style{bold, l.size} }
func (l *layout) heading() style { return style{bold, max(l.size+3, bold.sizeForCaps(legendCapMM))} }
func (l *layout) legend() style  { return style{bold, max(l.size+1, bold.sizeForCaps(legendCapMM))} }

// legendCapMM is the capital height of the mandated legends: DGI's 3 mm and
// a margin for the printer's rounding.
const legendCapMM = 3.05

// logoImage is the template's logo: its pixel size, to keep its proportions.
type logoImage struct{ w, h int }

func decodeLogo(b []byte) (*logoImage, error) {
	if err := checkLogo(b); err != nil {
		return nil, err
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(b))
	if err != nil {
		return nil, errors.New("el logo debe ser una imagen PNG o JPEG")
	}
	return &logoImage{w: cfg.Width, h: cfg.Height}, nil
}

// logoBlock fits the logo in a box of at most w × h, aligned in width w.
func (l *layout) logoBlock(w, maxW, maxH float64, a alignment) block {
	if l.logo == nil {
		return block{}
	}
	lw, lh := maxW, maxW*float64(l.logo.h)/float64(l.logo.w)
	if lh > maxH {
		lw, lh = maxH*float64(l.logo.w)/float64(l.logo.h), maxH
	}
	x := 0.0
	switch a {
	case center:
		x = (w - lw) / 2
	case right:
		x = w - lw
	}
	return block{h: lh, ops: []op{{kind: opLogo, x: x, w: lw, h: lh}}}
}

// bannered reports whether pages carry a banner.
func (l *layout) bannered() bool { return l.test || l.preview || l.keyed }

// banner is PreviewText for a preview and WatermarkText outside production,
// each on one line across width w, in bold when that fits at the body size,
// else in regular type as large as fits (about 6 pt on a 58 mm roll: the
// banner is a marker, not DGI content, and must stay on one line for text
// extraction to return it whole).
func (l *layout) banner(w float64) block {
	c := column{w: w}
	for _, text := range []string{PreviewText, KeyedCopyText, WatermarkText} {
		if (text == PreviewText && !l.preview) || (text == WatermarkText && !l.test) || (text == KeyedCopyText && !l.keyed) {
			continue
		}
		st := style{bold, max(l.size, MinFontSize)}
		if st.face.width(text, st.size) > w {
			st.face = regular
			st.size = min(st.size, st.size*w/st.face.width(text, st.size))
		}
		c.line(st, center, text)
	}
	return c.b
}

// emitter is zone 1: name, nombre comercial, address, special CAE box.
func (l *layout) emitter(w float64, a alignment) block {
	c := column{w: w}
	c.para(l.heading(), a, l.r.emitterName)
	for _, s := range l.r.emitterInfo {
		c.para(l.body(), a, s)
	}
	if len(l.r.special) > 0 {
		// At least 4 cm wide (DGI), wider when a legend needs it and the
		// column has room, so that 3 mm capitals keep it on one line.
		inW := 40.0
		for _, s := range l.r.special {
			inW = max(inW, min(l.legend().face.width(s, l.legend().size), w-4))
		}
		in := column{w: inW}
		for _, s := range l.r.special {
			in.para(l.legend(), center, s)
		}
		box := boxedMin(in.b, inW+4, 2, 10)
		c.space(1.5)
		c.put(box, offset(a, w-box.w))
	}
	return c.b
}

// document is zone 2, in DGI's order (V24 "Identificación del
// comprobante", top right): RUC, type name, serie and number, forma de pago,
// all at least 3 mm high.
func (l *layout) document(w float64) block {
	c := column{w: w}
	c.para(l.heading(), center, l.r.ruc)
	c.para(l.heading(), center, l.r.typeName)
	c.para(l.heading(), center, l.r.number)
	c.para(l.legend(), center, l.r.payment)
	return c.b
}

// facts writes label–value pairs.
func (l *layout) facts(w float64, title string, facts []fact) block {
	c := column{w: w}
	if len(facts) == 0 {
		return c.b
	}
	if title != "" {
		c.line(l.strong(), left, title)
	}
	for _, f := range facts {
		st := l.body()
		if f.strong {
			st = l.legend()
		}
		c.pair(st, f.label, f.value)
	}
	return c.b
}

// legends are the document's extra legends (terceros, InfoAdicionalDoc...).
func (l *layout) legends(w float64, a alignment) block {
	c := column{w: w}
	for _, s := range l.r.legends {
		c.para(l.strong(), a, s)
	}
	return c.b
}

// receptor is zone 3: the box titled CONSUMO FINAL / RUC COMPRADOR / ...
// (at least 4 × 1 cm, DGI), with the receptor's document, name and address.
func (l *layout) receptor(w float64) block {
	p := l.r.receptor
	if p == nil {
		return block{}
	}
	const pad = 2
	in := column{w: w - 2*pad}
	in.para(l.legend(), left, p.title)
	in.para(l.legend(), left, p.doc)
	for _, s := range p.lines {
		in.para(l.body(), left, s)
	}
	return boxedMin(in.b, w, pad, 10)
}

// textLines splits free text (the Adenda) into lines no wider than w, keeping
// its line breaks.
func textLines(st style, text string, w float64) []string {
	var out []string
	for _, para := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		lines := st.face.wrap(para, st.size, w)
		if len(lines) == 0 {
			lines = []string{""}
		}
		out = append(out, lines...)
	}
	return out
}

// framed returns a box titled title around lines, as one block per line so
// that it may continue on the next page: the first block draws the top of
// the box, every block its sides, the last one its bottom.
func (l *layout) framed(w float64, title string, lines []string) []block {
	const pad = 2.5
	st := l.body()
	var out []block
	side := func(b *block) {
		b.ops = append(b.ops, op{kind: opRule, x: 0, y: 0, h: b.h}, op{kind: opRule, x: w, y: 0, h: b.h})
	}
	head := column{w: w - 2*pad}
	head.space(pad)
	head.line(l.legend(), left, title)
	top := block{}
	top.add(pad, 0, head.b)
	top.ops = append(top.ops, op{kind: opRule, w: w})
	side(&top)
	out = append(out, top)
	for i, s := range lines {
		c := column{w: w - 2*pad}
		c.line(st, left, s)
		if i == len(lines)-1 {
			c.space(pad)
		}
		b := block{}
		b.add(pad, 0, c.b)
		side(&b)
		out = append(out, b)
	}
	last := &out[len(out)-1]
	last.ops = append(last.ops, op{kind: opRule, y: last.h, w: w})
	return out
}

// adendaGap is the least room between the Adenda's box and the CFE's data
// above and below it: DGI's 5 mm (V24 Adenda: "dentro del cuerpo del CFE,
// manteniendo márgenes de 5 mm con los datos del comprobante"), and half a
// millimetre for the width of the box's rules.
const adendaGap = 5.5

// adenda is the Adenda in its box (V24: inside a delimited area titled
// "ADENDA").
func (l *layout) adenda(w float64) []block {
	if l.r.adenda == "" {
		return nil
	}
	return l.framed(w, TitleAdenda, textLines(l.body(), l.r.adenda, w-5))
}

// references lists zone F under its title, one block per line.
func (l *layout) references(w float64) []block {
	if len(l.r.references) == 0 {
		return nil
	}
	title := column{w: w}
	title.line(l.strong(), left, TitleReferences)
	out := []block{title.b}
	for _, s := range l.r.references {
		c := column{w: w}
		c.para(l.body(), left, s)
		out = append(out, c.b)
	}
	return out
}

// sello is the Sello Digital: the QR with its clear margin, and the security
// code under it.
func (l *layout) sello() block {
	side := l.qrSide + 2*qrMargin
	b := block{w: side, h: side, ops: []op{{kind: opQR, x: qrMargin, y: qrMargin, w: l.qrSide, code: l.qr}}}
	c := column{w: side}
	c.para(l.small(), center, TitleSecurityCode)
	c.line(l.legend(), center, l.r.securityCode)
	b.add(0, side, c.b)
	return b
}

// pie is the footer text beside or under the Sello Digital, in DGI's order
// (V24/V25 "Pie del comprobante"): Fecha emisor or resolution, where to
// verify, below them the IVA constancia, below it the CAE number and range.
func (l *layout) pie(w float64, a alignment) block {
	c := column{w: w}
	c.para(l.body(), a, l.r.emitterSince)
	c.para(l.body(), a, l.r.verify)
	c.para(l.strong(), a, l.r.ivaAlDia)
	c.para(l.strong(), a, l.r.cae)
	c.para(l.body(), a, l.r.caeRange)
	return c.b
}

// vencimiento is the box with the CAE's expiry (at least 2 × 1 cm, 3 mm
// text), no wider than maxW.
func (l *layout) vencimiento(maxW float64) block {
	st := l.legend()
	const label = TitleCAEExpiry
	w := min(max(st.face.width(label, st.size)+6, 30), maxW)
	c := column{w: w - 4}
	c.para(st, center, label)
	c.line(st, center, l.r.caeExpiry)
	return boxedMin(c.b, w, 2, 10)
}

// extra are the template's own legends.
func (l *layout) extra(w float64, a alignment) block {
	c := column{w: w}
	for _, s := range l.r.extra {
		c.para(l.body(), a, s)
	}
	return c.b
}
