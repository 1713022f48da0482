package escpos

import (
	"strings"

	"github.com/cfe-agent/cfe-agent/pdf"
)

// RenderReport returns the ESC/POS bytes of the plain report r (the day's
// close) on the printer o describes: reset and code page as for receipts,
// the title in double height, each row's label at the left and its value
// at the right, headings and totals emphasised, then the cut. It returns
// EINVALID for bad options, naming the option.
func RenderReport(r pdf.Report, o Options) ([]byte, error) {
	o, err := o.normalize()
	if err != nil {
		return nil, err
	}
	cp := codePages[o.CodePage]
	table := cp.epson
	if o.CodeTable != 0 {
		table = o.CodeTable
	}
	w := &writer{e: encoder{buf: make([]byte, 0, 2048), table: cp.table}, cols: o.Columns}
	w.e.init(table)
	w.e.align(alignCenter)
	w.big(r.Title)
	for _, s := range r.Subtitle {
		w.para(s)
	}
	w.e.align(alignLeft)
	w.rule("=")
	for _, l := range r.Lines {
		label := strings.Repeat(" ", l.Indent) + l.Label
		switch l.Kind {
		case pdf.ReportRule:
			w.rule("-")
		case pdf.ReportHeading, pdf.ReportTotal:
			w.e.bold(true)
			w.pair(label, l.Value)
			w.e.bold(false)
		default:
			w.pair(label, l.Value)
		}
	}
	w.rule("=")
	w.e.cut(o.Cut)
	return w.e.buf, nil
}
