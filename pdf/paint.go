package pdf

import (
	"time"

	"github.com/signintech/gopdf"
)

// A page is a laid-out page: its size in millimetres and its ops.
type page struct {
	w, h float64
	ops  []op
}

// paintInfo is the document information of the PDF.
type paintInfo struct {
	title   string
	created time.Time // the signature time, so that a CFE always gives the same bytes
	logo    []byte
}

// paint draws the pages with gopdf and returns the PDF.
func paint(pages []page, info paintInfo) ([]byte, error) {
	fc, err := fonts()
	if err != nil {
		return nil, err
	}
	gp := &gopdf.GoPdf{}
	gp.Start(gopdf.Config{Unit: gopdf.UnitMM, PageSize: gopdf.Rect{W: pages[0].w, H: pages[0].h}})
	// Page content is left uncompressed: gopdf always compresses the
	// embedded fonts, which make most of the file, and compressing the few
	// kilobytes of drawing operators would cost more time than it saves on
	// a document bound for a local printer.
	gp.SetNoCompression()
	for _, f := range []*face{regular, bold} {
		if err := gp.AddTTFFontFromFontContainer(f.family, fc); err != nil {
			return nil, err
		}
	}
	gp.SetInfo(gopdf.PdfInfo{Title: info.title, Creator: "cfe-agent", Producer: "cfe-agent",
		CreationDate: info.created})

	var logo gopdf.ImageHolder
	if info.logo != nil {
		if logo, err = gopdf.ImageHolderByBytes(info.logo); err != nil {
			return nil, err
		}
	}
	p := painter{gp: gp, logo: logo}
	for _, pg := range pages {
		gp.AddPageWithOption(gopdf.PageOption{PageSize: &gopdf.Rect{W: pg.w, H: pg.h}})
		p.font, p.size = nil, 0
		for _, o := range pg.ops {
			if err := p.paint(o); err != nil {
				return nil, err
			}
		}
	}
	return gp.GetBytesPdfReturnErr()
}

// painter tracks gopdf's current font to set it only when it changes.
type painter struct {
	gp   *gopdf.GoPdf
	logo gopdf.ImageHolder
	font *face
	size float64
}

func (p *painter) paint(o op) error {
	gp := p.gp
	switch o.kind {
	case opText:
		if o.face != p.font || o.size != p.size {
			if err := gp.SetFont(o.face.family, "", o.size); err != nil {
				return err
			}
			p.font, p.size = o.face, o.size
		}
		gp.SetXY(o.x, o.y)
		return gp.Text(o.text)
	case opRule:
		gp.SetLineWidth(lineWidth)
		gp.Line(o.x, o.y, o.x+o.w, o.y+o.h)
	case opBox:
		gp.SetLineWidth(lineWidth)
		gp.RectFromUpperLeftWithStyle(o.x, o.y, o.w, o.h, "D")
	case opQR:
		gp.SetFillColor(0, 0, 0)
		qrRuns(o.code, o.x, o.y, o.w, func(x, y, w, h float64) {
			gp.RectFromUpperLeftWithStyle(x, y, w, h, "F")
		})
	case opLogo:
		if p.logo != nil {
			return gp.ImageByHolder(p.logo, o.x, o.y, &gopdf.Rect{W: o.w, H: o.h})
		}
	case opWatermark:
		gp.SetStrokeColor(150, 150, 150)
		gp.SetLineWidth(0.25)
		var pts []gopdf.Point
		for _, c := range placeOutline(o.x, o.y, o.w, o.angle) {
			pts = pts[:0]
			for _, pt := range c {
				pts = append(pts, gopdf.Point{X: pt.x, Y: pt.y})
			}
			gp.Polygon(pts, "D")
		}
		gp.SetStrokeColor(0, 0, 0)
	}
	return nil
}

// lineWidth is the width of rules and boxes, in millimetres.
const lineWidth = 0.25
