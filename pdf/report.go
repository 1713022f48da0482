package pdf

import (
	"time"

	"github.com/shopspring/decimal"
)

// A Report is a plain printed report that is no fiscal document (the day's
// close): a title, lines of text and label/value rows, drawn by
// RenderReport on A4 or on an 80 mm roll, and by escpos.RenderReport on a
// thermal printer.
type Report struct {
	Title    string
	Subtitle []string // under the title, one line each
	Lines    []ReportLine
	Created  time.Time // the PDF's creation date
}

// ReportKind is what a ReportLine is.
type ReportKind int

// The kinds of report lines.
const (
	ReportRow     ReportKind = iota // label at the left, value at the right
	ReportHeading                   // a section's heading, emphasised
	ReportTotal                     // a row emphasised
	ReportRule                      // a horizontal rule
)

// ReportLine is one line of a Report.
type ReportLine struct {
	Kind         ReportKind
	Label, Value string
	Indent       int // levels of indentation of the label
}

// FormatMoney formats an amount the Uruguayan way with its currency code:
// "UYU 1.234,50", as the receipts print amounts.
func FormatMoney(currency string, d decimal.Decimal) string { return moneyIn(currency, d) }

// ReportPaper is the paper of a report PDF.
type ReportPaper string

// The report papers.
const (
	PaperA4   ReportPaper = "a4"
	PaperRoll ReportPaper = "rollo" // 80 mm wide, as long as the report
)

// reportGeometry is a report's page in millimetres.
type reportGeometry struct {
	w, h, margin, size, lead float64
}

func (p ReportPaper) geometry() reportGeometry {
	if p == PaperRoll {
		return reportGeometry{w: 80, margin: 4, size: 8, lead: 4}
	}
	return reportGeometry{w: 210, h: 297, margin: 18, size: 10, lead: 5.2}
}

// RenderReport draws r as a PDF on paper: A4 pages (as many as needed) or
// one 80 mm page as long as the report.
func RenderReport(r Report, paper ReportPaper) ([]byte, error) {
	g := paper.geometry()
	w := g.w - 2*g.margin
	var ops []op
	y := g.margin
	var pages []page
	flush := func() {
		pages = append(pages, page{w: g.w, h: g.h, ops: ops})
		ops, y = nil, g.margin
	}
	text := func(f *face, size float64, s string, x float64) {
		ops = append(ops, op{kind: opText, face: f, size: size, x: x, y: y + f.ascent*size*ptToMM, text: f.clean(s)})
	}
	advance := func(h float64) {
		y += h
		if g.h > 0 && y > g.h-g.margin-g.lead {
			flush()
		}
	}
	size := g.size
	for _, l := range regular.wrap(r.Title, size*1.4, w) {
		text(bold, size*1.4, l, g.margin)
		advance(g.lead * 1.4)
	}
	for _, s := range r.Subtitle {
		for _, l := range regular.wrap(s, size, w) {
			text(regular, size, l, g.margin)
			advance(g.lead)
		}
	}
	advance(g.lead / 2)
	for _, ln := range r.Lines {
		f := regular
		switch ln.Kind {
		case ReportRule:
			ops = append(ops, op{kind: opRule, x: g.margin, y: y + g.lead/2, w: w})
			advance(g.lead)
			continue
		case ReportHeading:
			f = bold
			advance(g.lead / 3)
		case ReportTotal:
			f = bold
		}
		indent := float64(ln.Indent) * size * 0.5
		vw := f.width(ln.Value, size)
		labels := f.wrap(ln.Label, size, w-indent-vw-2)
		if len(labels) == 0 {
			labels = []string{""}
		}
		for i, l := range labels {
			text(f, size, l, g.margin+indent)
			if i == 0 && ln.Value != "" {
				text(f, size, ln.Value, g.margin+w-vw)
			}
			advance(g.lead)
		}
	}
	if g.h == 0 { // the roll: one page as long as the report
		g.h = y + g.margin
		flush()
		pages[len(pages)-1].h = g.h
	} else if len(ops) > 0 || len(pages) == 0 {
		flush()
	}
	return paint(pages, paintInfo{title: r.Title, created: r.Created})
}
