package pdf

import (
	"fmt"
	"math"
	"sync"

	"github.com/cfe-agent/cfe-agent/assets"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
)

// WatermarkText marks every page printed outside production (seed interface
// §4.3.1). It is printed twice: as a line of text at the top of each page,
// which text extraction returns exactly, and as large outlined letters drawn
// diagonally across the page, which a reader cannot miss (drawn as shapes,
// because text extractors split diagonal text into scattered letters).
const WatermarkText = "Representacion impresa de prueba sin valor fiscal"

// A point is a position in ems (outline) or millimetres (page); y grows down.
type point struct{ x, y float64 }

// outline is WatermarkText in Go Bold as closed contours, with its origin at
// the left end of the baseline, in ems.
type outline struct {
	contours [][]point
	width    float64 // advance width, in ems
}

var watermarkOutline = sync.OnceValue(func() outline {
	o, err := textOutline(assets.Bold, WatermarkText)
	if err != nil {
		panic(fmt.Sprintf("pdf: watermark outline: %v", err))
	}
	return o
})

// textOutline converts text into polygons, flattening each quadratic or
// cubic curve into a few straight segments (fine enough for a watermark).
func textOutline(f assets.Font, text string) (outline, error) {
	parsed, err := sfnt.Parse(f.TTF)
	if err != nil {
		return outline{}, err
	}
	var buf sfnt.Buffer
	upem := float64(parsed.UnitsPerEm())
	ppem := fixed.Int26_6(parsed.UnitsPerEm()) << 6
	em := func(p fixed.Point26_6, pen float64) point {
		return point{pen + float64(p.X)/64/upem, float64(p.Y) / 64 / upem}
	}
	var o outline
	for _, r := range text {
		g, err := parsed.GlyphIndex(&buf, r)
		if err != nil {
			return outline{}, err
		}
		segs, err := parsed.LoadGlyph(&buf, g, ppem, nil)
		if err != nil {
			return outline{}, err
		}
		var cur []point
		for _, s := range segs {
			switch s.Op {
			case sfnt.SegmentOpMoveTo:
				if len(cur) > 1 {
					o.contours = append(o.contours, cur)
				}
				cur = []point{em(s.Args[0], o.width)}
			case sfnt.SegmentOpLineTo:
				cur = append(cur, em(s.Args[0], o.width))
			case sfnt.SegmentOpQuadTo:
				p0, c, p1 := cur[len(cur)-1], em(s.Args[0], o.width), em(s.Args[1], o.width)
				for _, t := range []float64{1.0 / 3, 2.0 / 3, 1} {
					u := 1 - t
					cur = append(cur, point{u*u*p0.x + 2*u*t*c.x + t*t*p1.x, u*u*p0.y + 2*u*t*c.y + t*t*p1.y})
				}
			case sfnt.SegmentOpCubeTo:
				p0, c1, c2, p1 := cur[len(cur)-1], em(s.Args[0], o.width), em(s.Args[1], o.width), em(s.Args[2], o.width)
				for _, t := range []float64{0.25, 0.5, 0.75, 1} {
					u := 1 - t
					cur = append(cur, point{
						u*u*u*p0.x + 3*u*u*t*c1.x + 3*u*t*t*c2.x + t*t*t*p1.x,
						u*u*u*p0.y + 3*u*u*t*c1.y + 3*u*t*t*c2.y + t*t*t*p1.y})
				}
			}
		}
		if len(cur) > 1 {
			o.contours = append(o.contours, cur)
		}
		adv, err := parsed.GlyphAdvance(&buf, g, ppem, 0)
		if err != nil {
			return outline{}, err
		}
		o.width += float64(adv) / 64 / upem
	}
	return o, nil
}

// watermarks returns the diagonal watermark ops for the region (x, y, w, h)
// of a page: as many copies as fit down the region, each as long as the
// region's width allows at the given angle (radians, rising to the right).
// Layouts keep the region clear of the QR code, which a line across it
// could make unreadable.
func watermarks(x, y, w, h, angle float64) []op {
	if w <= 0 || h <= 0 {
		return nil
	}
	o := watermarkOutline()
	span := min(w/math.Cos(angle), h/math.Sin(angle)) * 0.9
	size := span / o.width // mm per em
	count := max(1, int(h/(span*math.Sin(angle)+20)))
	ops := make([]op, 0, count)
	for i := range count {
		cy := y + h*(float64(i)+0.5)/float64(count)
		ops = append(ops, op{kind: opWatermark, x: x + w/2, y: cy, w: size, angle: angle})
	}
	return ops
}

// placeOutline returns the watermark's contours centred on (cx, cy), with
// size millimetres per em, rotated by angle radians (rising to the right).
func placeOutline(cx, cy, size, angle float64) [][]point {
	o := watermarkOutline()
	sin, cos := math.Sincos(angle)
	// The text's centre: half its width along the baseline, half its cap
	// height above it.
	mx, my := o.width/2, -0.35
	out := make([][]point, len(o.contours))
	for i, c := range o.contours {
		pts := make([]point, len(c))
		for j, p := range c {
			x, y := (p.x-mx)*size, (p.y-my)*size
			pts[j] = point{cx + x*cos + y*sin, cy - x*sin + y*cos}
		}
		out[i] = pts
	}
	return out
}
