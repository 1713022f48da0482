package pdf

import (
	"fmt"
	"image"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// DGI's rules for the printed representation (Formato de los CFE v24,
// "Formato de la representación impresa" and the notes of zone B), each
// measured on the PDF as a reader sees it: the words and their boxes that
// pdftotext finds, and the ink of the rasterised page.

// printTemplates are the layouts every rule is checked in: the built-in
// ones and two named custom templates (logo, legends, their own font size).
func printTemplates(t *testing.T) []Template {
	t.Helper()
	logo := filepath.Join(t.TempDir(), "logo.png")
	if err := os.WriteFile(logo, pngLogo(t), 0o600); err != nil {
		t.Fatal(err)
	}
	cat, err := NewCatalog([]TemplateConfig{
		{Name: "Mostrador", Base: "Rollo58", LogoPath: logo, Legends: []string{"¡Gracias por su compra!"}, FontSize: 8},
		{Name: "Oficina", Base: "Estandar", LogoPath: logo, Legends: []string{"Cambios dentro de los 30 días"}, FontSize: 11},
	})
	if err != nil {
		t.Fatal(err)
	}
	var out []Template
	for _, name := range []string{"Estandar", "Rollo", "Rollo58", "Mostrador", "Oficina"} {
		tmpl, err := cat.Template(name)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tmpl)
	}
	return out
}

// V24 B-C4 note 6: "El signo correspondiente a los indicadores de
// facturación 7, 8 y 9, debe imprimirse en lugar del código". IndFact 8 is
// an item deducted ("a rebajar") from a remito already issued: its quantity
// prints with a minus sign, and so does its amount where the table has one
// (e-Remito de Exportación, whose total subtracts it, A-C113); no note calls
// it an annulment.
func TestRender_IndFact8PrintsTheSign(t *testing.T) {
	t.Parallel()
	ref := func(typ cfe.Type) []cfe.Referencia {
		return []cfe.Referencia{{NroLinRef: 1, TpoDocRef: typ, Serie: "A", NroCFERef: 41, RazonRef: "Mercadería devuelta",
			FechaCFEref: &cfe.Date{Year: 2026, Month: time.March, Day: 13}}}
	}
	remito := fixture(cfe.ERemito)
	remito.Items[0].IndFact = 8 // 40 cajas deducted from remito A-41; the second line is an ordinary one
	remito.Referencias = ref(cfe.ERemito)
	export := fixture(cfe.ERemitoExp)
	export.Items[0].IndFact = 8 // 500 kg × 4.50 deducted from remito A-41
	export.Referencias = ref(cfe.ERemitoExp)
	// A-C113 for 124: the lines minus the deducted lines = 0 − 2 250.
	export.Totales.MntExpoyAsim, export.Totales.MntTotal = numP("-2250"), numP("-2250")
	docs := []struct {
		name   string
		doc    []byte
		signed [][]string // runs of words that must share a line
		plain  [][]string
	}{
		{"e-Remito", signed(t, remito), [][]string{{"-40", "caja"}}, [][]string{{"12", "Unid"}}},
		{"e-Remito de Exportación", signed(t, export), [][]string{{"-500", "kg"}, {"-2.250,00"}, {"USD", "-2.250,00"}}, nil},
	}
	for _, d := range docs {
		for _, tmpl := range printTemplates(t) {
			what := d.name + " " + tmpl.Name
			pdf := render(t, d.doc, Options{Template: tmpl, Production: true})
			ls := lines(pdfWords(t, pdf))
			for _, run := range d.signed {
				if lineWith(ls, run...) < 0 {
					t.Errorf("%s: no line shows %q", what, run)
				}
			}
			// The sign is the line's own: the quantity and the amount of a
			// deducted line print on that line, an ordinary line keeps none.
			if d.name == "e-Remito de Exportación" {
				if i := lineWith(ls, "-500", "kg"); i >= 0 && lineWith(ls[i:i+1], "-2.250,00") < 0 {
					t.Errorf("%s: the deducted quantity and its amount are not on one line: %q", what, ls[i])
				}
			}
			for _, run := range d.plain {
				if lineWith(ls, run...) < 0 {
					t.Errorf("%s: the ordinary line %q is missing", what, run)
				}
			}
			text := pdfText(t, pdf, 1, 0)
			for _, misleading := range []string{"Anula", "anula", "Anulación"} {
				if strings.Contains(text, misleading) {
					t.Errorf("%s: a deducted line is described as %q", what, misleading)
				}
			}
		}
	}
}

// V24 Adenda: printed "dentro del cuerpo del CFE, manteniendo márgenes de
// 5 mm con los datos del comprobante". Measured on the rasterised page: from
// the box's edges (found by following its side rule from a word of the
// Adenda) to the nearest ink above and below, on every page the box is on.
func TestRender_AdendaKeepsFiveMillimetres(t *testing.T) {
	t.Parallel()
	const minGap = 5.0
	note := fixture(cfe.EFacturaNC) // references, then the Adenda
	note.MediosPago = []cfe.MedioPago{{NroLinMP: 1, GlosaMP: "Transferencia", ValorPago: num("536")}}
	long := manyLines(25)
	var text []string
	for i := 1; i <= 90; i++ {
		text = append(text, fmt.Sprintf("adenda-%02d entregar en depósito", i))
	}
	docs := []struct {
		name, adenda string
		doc          []byte
	}{
		{"e-Ticket", "adenda-01 Cliente frecuente Nº 1234\nadenda-02 Puntos acumulados: 536", signedFixture(t, cfe.ETicket)},
		{"credit note", "adenda-01 Pedido 5531\nadenda-02 Atención: Sra. Núñez", signed(t, note)},
		{"Adenda over pages", strings.Join(text, "\n"), signed(t, long)},
	}
	for _, d := range docs {
		for _, tmpl := range printTemplates(t) {
			what := d.name + " " + tmpl.Name
			pdf := render(t, d.doc, Options{Template: tmpl, Production: true, Adenda: d.adenda})
			words := pdfWords(t, pdf)
			pages := map[int]word{} // the first word of the Adenda on each page
			for _, w := range words {
				if w.text != "ADENDA" && !strings.HasPrefix(w.text, "adenda-") {
					continue
				}
				if first, ok := pages[w.page]; !ok || w.y0 < first.y0 {
					pages[w.page] = w
				}
			}
			if len(pages) == 0 {
				t.Fatalf("%s: no Adenda printed", what)
			}
			for p, w := range pages {
				g := pdfRaster(t, pdf, p)
				top, bottom, ok := boxAround(g, w)
				if !ok {
					t.Errorf("%s page %d: no box rule left of %q", what, p, w.text)
					continue
				}
				if gap, found := clearance(g, top, -1); found && gap < minGap {
					t.Errorf("%s page %d: the Adenda's box starts %.2f mm under the data above it, want ≥ %.0f mm",
						what, p, gap, minGap)
				}
				if gap, found := clearance(g, bottom, +1); found && gap < minGap {
					t.Errorf("%s page %d: the data below the Adenda's box is %.2f mm from it, want ≥ %.0f mm",
						what, p, gap, minGap)
				}
			}
			if d.name == "Adenda over pages" && tmpl.Base == Estandar && len(pages) < 2 {
				t.Errorf("%s: the Adenda is on %d page, the test wants it to continue on the next", what, len(pages))
			}
		}
	}
}

// boxAround finds the box a word is printed in: the first vertical rule
// left of the word, followed up and down while it has ink. It returns the
// first and last rows of the box's ink.
func boxAround(g *image.Gray, w word) (top, bottom int, ok bool) {
	y := px((w.y0 + w.y1) / 2)
	x := px(w.x0) - 1
	for ; x >= g.Rect.Min.X && !inked(g, x, y); x-- {
	}
	if x < g.Rect.Min.X {
		return 0, 0, false
	}
	// The darkest of the rule's columns: its middle, not an anti-aliased edge.
	for _, c := range []int{x - 1, x - 2} {
		if c >= g.Rect.Min.X && g.GrayAt(c, y).Y < g.GrayAt(x, y).Y {
			x = c
		}
	}
	for top = y; top > g.Rect.Min.Y && inked(g, x, top-1); top-- {
	}
	for bottom = y; bottom < g.Rect.Max.Y-1 && inked(g, x, bottom+1); bottom++ {
	}
	// A rule, not a letter: it spans more than the word's line.
	return top, bottom, bottom-top > px(w.y1-w.y0)
}

// V24 "Identificación del comprobante": in the top-right corner, in this
// order, RUC, type, serie and number, and "Forma de pago: Contado o
// Crédito", at least 3 mm high. The forma de pago is the line right under
// the serie and number, in the same column (on A4 in the right half of the
// page), before the date and the other facts.
func TestRender_FormaDePagoInDocumentBlock(t *testing.T) {
	t.Parallel()
	docs := []struct {
		typ   cfe.Type
		value string
	}{{cfe.ETicket, "Contado"}, {cfe.EFactura, "Crédito"}}
	for _, d := range docs {
		for _, tmpl := range printTemplates(t) {
			what := d.typ.String() + " " + tmpl.Name
			pdf := render(t, signedFixture(t, d.typ), Options{Template: tmpl, Production: true})
			words := pdfWords(t, pdf)
			ls := lines(words)
			num, pay := lineWith(ls, "Serie", "A", "Nº", "42"), lineHas(ls, "Forma", "de", "pago:")
			date := lineWith(ls, "Fecha", "14/03/2026")
			// At 3 mm capitals a 58 mm roll wraps the value to the next line.
			if pay >= 0 && lineHas(ls[pay:pay+1], d.value) < 0 && (pay+1 >= len(ls) || lineHas(ls[pay+1:pay+2], d.value) < 0) {
				pay = -1
			}
			if num < 0 || pay < 0 || date < 0 {
				t.Errorf("%s: serie and number (line %d), forma de pago (line %d) or date (line %d) missing",
					what, num, pay, date)
				continue
			}
			last := d.value
			if lineHas(ls[pay:pay+1], d.value) < 0 {
				last = "pago:"
			}
			n, p := run(ls[num], "Serie", "42"), run(ls[pay], "Forma", last)
			// Nothing printed between them in the number's column.
			for _, w := range words {
				if w.page == 1 && w.y0 >= n.y1 && w.y1 <= p.y0 && w.x1 > n.x0 && w.x0 < n.x1 {
					t.Errorf("%s: %q is printed between the number and the forma de pago", what, w.text)
				}
			}
			if gap := p.y0 - n.y1; gap < 0 || gap > 3 {
				t.Errorf("%s: the forma de pago is %.1f mm under the serie and number, want the next line", what, gap)
			}
			// One block: both lines centred on the same axis.
			if c1, c2 := (p.x0+p.x1)/2, (n.x0+n.x1)/2; c1-c2 > 1 || c2-c1 > 1 {
				t.Errorf("%s: the forma de pago is centred at %.1f mm, the serie and number at %.1f mm: not one block",
					what, c1, c2)
			}
			if tmpl.Base == Estandar && p.x0 < 105 {
				t.Errorf("%s: the forma de pago starts at %.1f mm, not in the right half of the page", what, p.x0)
			}
			if p.y1 > ls[date].top() {
				t.Errorf("%s: the forma de pago is printed after the date", what)
			}
			// 3 mm characters: a 9 pt em is 3.2 mm, and pdftotext's box is
			// the em plus the descent.
			if h := p.y1 - p.y0; h < 3 {
				t.Errorf("%s: the forma de pago is %.2f mm high, want at least 3 mm", what, h)
			}
		}
	}
}

// lineHas returns the index of the first line that has every word of want,
// in any order; -1 when none has.
func lineHas(ls []textLine, want ...string) int {
	for i, l := range ls {
		if !slices.ContainsFunc(want, func(s string) bool {
			return !slices.ContainsFunc(l, func(w word) bool { return w.text == s })
		}) {
			return i
		}
	}
	return -1
}

// run returns the box of the words of a line from the word first to the
// word last.
func run(l textLine, first, last string) word {
	out := word{x0: 1e9, y0: 1e9}
	in := false
	for _, w := range l {
		if w.text == first {
			in = true
		}
		if in {
			out.page, out.x0, out.y0 = w.page, min(out.x0, w.x0), min(out.y0, w.y0)
			out.x1, out.y1 = max(out.x1, w.x1), max(out.y1, w.y1)
		}
		if in && w.text == last {
			break
		}
	}
	return out
}

// V24 receptor zone: the receptor's document (C.I., RUC or other) prints
// "indicando el país emisor del documento" (A-C61, printed: I), a C.I.
// included. The country is on the document's line, under the box's title.
func TestRender_ReceptorDocumentCountry(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		rc   cfe.Receptor
		want []string
	}{
		{"C.I.", cfe.Receptor{TipoDocRecep: 3, CodPaisRecep: "UY", DocRecep: "12345672", RznSocRecep: "Ana Suárez"},
			[]string{"C.I.", "12345672", "(UY)"}},
		{"DNI", cfe.Receptor{TipoDocRecep: 6, CodPaisRecep: "AR", DocRecepExt: "20123456", RznSocRecep: "Juan Pérez"},
			[]string{"DNI", "20123456", "(AR)"}},
		{"passport", cfe.Receptor{TipoDocRecep: 5, CodPaisRecep: "BR", DocRecepExt: "FX123456", RznSocRecep: "João Silva"},
			[]string{"Pasaporte", "FX123456", "(BR)"}},
		{"NIFE", cfe.Receptor{TipoDocRecep: 7, CodPaisRecep: "ES", DocRecepExt: "B12345678", RznSocRecep: "Ibérica S.L."},
			[]string{"NIFE", "B12345678", "(ES)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := fixture(cfe.ETicket)
			c.Receptor = &tt.rc
			doc := signed(t, c)
			for _, tmpl := range printTemplates(t) {
				ls := lines(pdfWords(t, render(t, doc, Options{Template: tmpl, Production: true})))
				title, line := lineWith(ls, "CONSUMO", "FINAL"), lineWith(ls, tt.want...)
				if line < 0 && title >= 0 && title+2 < len(ls) {
					// At 3 mm capitals a 58 mm roll may wrap the document's
					// line: its words then run over the title's next two lines.
					pair := append(append(textLine{}, ls[title+1]...), ls[title+2]...)
					if lineWith([]textLine{pair}, tt.want...) == 0 {
						line = title + 1
					}
				}
				if line < 0 {
					t.Errorf("%s: no line shows %q", tmpl.Name, tt.want)
					continue
				}
				if title < 0 || ls[line].top() < ls[title].bottom() || ls[line].top()-ls[title].bottom() > 6 {
					t.Errorf("%s: the document %q is not under the receptor box's title", tmpl.Name, tt.want)
				}
			}
		})
	}
}

// V24 B-C10: "Cuando la unidad de medida es N/A, no es obligatorio
// imprimir": DGI's placeholder is not a unit, and the quantity prints
// alone on its line.
func TestRender_UnitPlaceholderNotPrinted(t *testing.T) {
	t.Parallel()
	c := fixture(cfe.ETicket)
	for i := range c.Items {
		c.Items[i].UniMed = "N/A"
	}
	doc := signed(t, c)
	for _, tmpl := range printTemplates(t) {
		pdf := render(t, doc, Options{Template: tmpl, Production: true})
		words := pdfWords(t, pdf)
		for _, w := range words {
			if strings.Contains(w.text, "N/A") {
				t.Errorf("%s: %q is printed as a unit", tmpl.Name, w.text)
			}
		}
		// Each line's quantity and amount: 2 × 183 = 366, 1,5 × 110 = 165.
		ls := lines(words)
		for _, want := range [][]string{{"2", "366,00"}, {"1,5", "165,00"}} {
			i := lineWith(ls, "Importe")
			found := false
			for _, l := range ls[max(i, 0):] {
				if lineWith([]textLine{l}, want[0]) >= 0 && lineWith([]textLine{l}, want[1]) >= 0 {
					found = true
					break
				}
			}
			if !found {
				t.Errorf("%s: no line shows the quantity %s with its amount %s", tmpl.Name, want[0], want[1])
			}
		}
	}
}
