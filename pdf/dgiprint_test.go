package pdf

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

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

// V24 "Identificación del comprobante": in the top-right corner, in this
// order, RUC, type, serie and number, and "Forma de pago: Contado o
// Crédito", at least 3 mm high. The forma de pago is the line right under
// the serie and number, in the same column (on A4 in the right half of the
// page), before the date and the other facts.
func TestRender_FormaDePagoInDocumentBlock(t *testing.T) {
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
			num, pay := lineWith(ls, "Serie", "A", "Nº", "42"), lineHas(ls, "Forma", "de", d.value)
			date := lineWith(ls, "Fecha", "14/03/2026")
			if num < 0 || pay < 0 || date < 0 {
				t.Errorf("%s: serie and number (line %d), forma de pago (line %d) or date (line %d) missing",
					what, num, pay, date)
				continue
			}
			n, p := run(ls[num], "Serie", "42"), run(ls[pay], "Forma", d.value)
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
