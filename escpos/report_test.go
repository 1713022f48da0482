package escpos

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/pdf"
)

func closeReport() pdf.Report {
	return pdf.Report{Title: "Cierre del día 28/11/2026", Subtitle: []string{"Perfil: tienda"}, Lines: []pdf.ReportLine{
		{Kind: pdf.ReportHeading, Label: "Caja serie A, sucursal 1", Value: "3 comprobantes"},
		{Kind: pdf.ReportRow, Indent: 1, Label: "Nota de Crédito de e-Ticket (1), resta"},
		{Kind: pdf.ReportRow, Indent: 2, Label: "UYU (1)", Value: "UYU -186,05"},
		{Kind: pdf.ReportRow, Indent: 1, Label: "Pago Tarjeta de crédito con un nombre muy largo que no entra", Value: "UYU 1.234.567,89"},
		{Kind: pdf.ReportRule},
		{Kind: pdf.ReportTotal, Label: "Neto UYU", Value: "UYU 18.003,95"},
	}}
}

// TestRenderReport_text: esc2text reads the report as the printer prints
// it on 42 and 48 columns: accents through the code page, each value at
// the right edge of its label's line (or of the next line when they do not
// fit together), no line wider than the head.
func TestRenderReport_text(t *testing.T) {
	t.Parallel()
	for _, cols := range []int{42, 48} {
		b, err := RenderReport(closeReport(), Options{Columns: cols, CodePage: "cp858"})
		if err != nil {
			t.Fatal(err)
		}
		text := decodeText(t, b, charmap.CodePage858)
		lines := strings.Split(text, "\n")
		for _, l := range lines {
			if n := utf8.RuneCountInString(l); n > cols {
				t.Errorf("%d columns: a line of %d: %q", cols, n, l)
			}
		}
		has := func(want string) string {
			for _, l := range lines {
				if strings.Contains(l, want) {
					return l
				}
			}
			t.Errorf("%d columns: no line has %q:\n%s", cols, want, text)
			return ""
		}
		for _, want := range []string{"Cierre del día 28/11/2026", "Nota de Crédito de e-Ticket (1), resta"} {
			has(want)
		}
		for label, value := range map[string]string{"Neto UYU": "UYU 18.003,95", "  UYU (1)": "UYU -186,05",
			"Caja serie A, sucursal 1": "3 comprobantes"} {
			l := has(label)
			if !strings.HasPrefix(l, label) || !strings.HasSuffix(l, value) || utf8.RuneCountInString(l) != cols {
				t.Errorf("%d columns: %q is not %q at the left and %q at the right edge", cols, l, label, value)
			}
		}
		if l := has("UYU 1.234.567,89"); utf8.RuneCountInString(l) != cols || strings.Contains(l, "Pago") {
			t.Errorf("%d columns: the long row's value %q is not alone at the right edge", cols, l)
		}
	}
}

// TestRenderReport_badOptions: options the receipts refuse, the report
// refuses too (EINVALID).
func TestRenderReport_badOptions(t *testing.T) {
	t.Parallel()
	_, err := RenderReport(closeReport(), Options{CodePage: "klingon"})
	var ce *cfe.Error
	if !errors.As(err, &ce) || ce.Code != cfe.EINVALID {
		t.Fatalf("an unknown code page: %v", err)
	}
}

// BenchmarkRenderReport: a close as ESC/POS text.
func BenchmarkRenderReport(b *testing.B) {
	r := closeReport()
	for b.Loop() {
		if _, err := RenderReport(r, Options{Columns: 48}); err != nil {
			b.Fatal(err)
		}
	}
}
