package pdf

import (
	"fmt"
	"math"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

func longReport(rows int) Report {
	r := Report{Title: "Cierre del día 28/11/2026", Subtitle: []string{"Perfil: tienda"},
		Created: time.Date(2026, 11, 28, 20, 0, 0, 0, time.UTC)}
	r.Lines = append(r.Lines, ReportLine{Kind: ReportHeading, Label: "Caja serie A", Value: fmt.Sprintf("%d comprobantes", rows)})
	for i := 1; i <= rows; i++ {
		r.Lines = append(r.Lines, ReportLine{Kind: ReportRow, Indent: 1, Label: fmt.Sprintf("Fila %03d Crédito", i),
			Value: FormatMoney("UYU", decimal.NewFromInt(int64(i)*1000).Add(decimal.RequireFromString("0.5")))})
	}
	r.Lines = append(r.Lines, ReportLine{Kind: ReportRule},
		ReportLine{Kind: ReportTotal, Label: "Neto UYU", Value: FormatMoney("UYU", decimal.RequireFromString("-1234567.891"))})
	return r
}

// TestRenderReport_A4: a report longer than a page flows onto A4 pages
// with every row, in order, its amount in the Uruguayan format on the
// row's line; the total comes last.
func TestRenderReport_A4(t *testing.T) {
	t.Parallel()
	b, err := RenderReport(longReport(120), PaperA4)
	if err != nil {
		t.Fatal(err)
	}
	pages := pdfPages(t, b)
	if len(pages) < 2 {
		t.Fatalf("120 rows on %d A4 page(s)", len(pages))
	}
	for i, p := range pages {
		if math.Abs(mm(p.w)-210) > 0.5 || math.Abs(mm(p.h)-297) > 0.5 {
			t.Errorf("page %d is %.1f × %.1f mm, not A4", i+1, mm(p.w), mm(p.h))
		}
	}
	text := pdfText(t, b, 1, 0)
	last := -1
	for i := 1; i <= 120; i++ {
		want := fmt.Sprintf("Fila %03d Crédito", i)
		at := strings.Index(text, want)
		if at < 0 || at < last {
			t.Fatalf("%q missing or out of order", want)
		}
		last = at
	}
	mustContain(t, "the A4 report", pdfText(t, b, len(pages), 0), "Neto UYU", "UYU -1.234.567,89")
	mustContain(t, "the A4 report", layoutText(t, b), "Fila 120 Crédito UYU 120.000,50")
}

// TestRenderReport_roll: on the 80 mm roll the report is one page 80 mm
// wide that grows with its rows.
func TestRenderReport_roll(t *testing.T) {
	t.Parallel()
	short, err := RenderReport(longReport(5), PaperRoll)
	if err != nil {
		t.Fatal(err)
	}
	long, err := RenderReport(longReport(60), PaperRoll)
	if err != nil {
		t.Fatal(err)
	}
	s, l := pdfPages(t, short), pdfPages(t, long)
	if len(s) != 1 || len(l) != 1 {
		t.Fatalf("roll pages: %d and %d, want one each", len(s), len(l))
	}
	if math.Abs(mm(s[0].w)-80) > 0.5 || math.Abs(mm(l[0].w)-80) > 0.5 {
		t.Errorf("roll widths %.1f and %.1f mm, want 80", mm(s[0].w), mm(l[0].w))
	}
	if l[0].h <= s[0].h {
		t.Errorf("60 rows on %.1f mm, 5 rows on %.1f mm: the roll does not grow", mm(l[0].h), mm(s[0].h))
	}
	mustContain(t, "the roll report", layoutText(t, long), "Cierre del día 28/11/2026", "Fila 060 Crédito UYU 60.000,50",
		"Neto UYU UYU -1.234.567,89")
}

// layoutText is the text of pdf as pdftotext -layout reads it: a row's
// label and value on one line.
func layoutText(t testing.TB, pdf []byte) string {
	t.Helper()
	bin := testtool.Require(t, "pdftotext")
	out, err := exec.Command(bin, "-layout", "-enc", "UTF-8", writeTemp(t, "doc.pdf", pdf), "-").Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	return string(out)
}

// BenchmarkRenderReport: a close of 60 rows as an A4 PDF.
func BenchmarkRenderReport(b *testing.B) {
	r := longReport(60)
	for b.Loop() {
		if _, err := RenderReport(r, PaperA4); err != nil {
			b.Fatal(err)
		}
	}
}
