package pdf

import (
	"image"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// legendDPI is the resolution legends are measured at: 1 pixel ≈ 0.042 mm.
const legendDPI = 600

// flatCaps are the characters whose ink runs from the baseline to the cap
// height exactly: no overshoot above it (O, C, S, 0…) nor below the
// baseline (J, Q, /).
const flatCaps = "BDEFHIKLMNPRTUZ1457"

// legendPx converts millimetres to pixels of a page rasterised at legendDPI.
func legendPx(mm float64) int { return int(mm * legendDPI / 25.4) }

// legendRaster rasterises page 1 of pdf at legendDPI in grey levels.
func legendRaster(t *testing.T, pdf []byte) *image.Gray {
	t.Helper()
	bin := testtool.Require(t, "pdftoppm")
	f := writeTemp(t, "doc.pdf", pdf)
	prefix := filepath.Join(filepath.Dir(f), "legend")
	if msg, err := exec.Command(bin, "-gray", "-r", strconv.Itoa(legendDPI), "-f", "1", "-l", "1",
		"-singlefile", f, prefix).CombinedOutput(); err != nil {
		t.Fatalf("pdftoppm: %v\n%s", err, msg)
	}
	b, err := os.ReadFile(prefix + ".pgm")
	if err != nil {
		t.Fatal(err)
	}
	g, err := decodePGM(b)
	if err != nil {
		t.Fatalf("pdftoppm's PGM: %v", err)
	}
	return g
}

// capInk measures the ink height, in millimetres, of the first flat capital
// or digit of w on page g: the character's columns are found from the bold
// face's advances across the word's box (trimmed a fifth on each side, away
// from the neighbours' anti-aliasing), its height is the tallest run of rows
// with ink (at least half dark) in those columns within the word's box. It
// also returns the character measured, 0 when w has none.
func capInk(g *image.Gray, w word) (float64, rune) {
	runes := []rune(w.text)
	total := 0
	for _, r := range runes {
		total += bold.widths[r]
	}
	at := 0
	for _, r := range runes {
		adv := bold.widths[r]
		if !strings.ContainsRune(flatCaps, r) || total == 0 {
			at += adv
			continue
		}
		x0 := w.x0 + (w.x1-w.x0)*float64(at)/float64(total)
		x1 := w.x0 + (w.x1-w.x0)*float64(at+adv)/float64(total)
		trim := (x1 - x0) / 5
		best, run := 0, 0
		for y := legendPx(w.y0); y <= legendPx(w.y1) && y < g.Rect.Max.Y; y++ {
			ink := false
			for x := legendPx(x0 + trim); x <= legendPx(x1-trim) && !ink; x++ {
				ink = g.GrayAt(x, y).Y < 128
			}
			if ink {
				run++
				best = max(best, run)
			} else {
				run = 0
			}
		}
		return float64(best) * 25.4 / legendDPI, r
	}
	return 0, 0
}

// V24 asks "caracteres no inferiores a 3 mm de alto" for the document's
// identification (RUC, type, serie and number, forma de pago), the special
// CAE legends, the receptor box (its title and the buyer's RUC) and the
// Fecha de vencimiento box. Measured on the rendered page, rasterised with
// pdftoppm: the ink of each legend's capitals (or digits: the expiry date)
// is at least 3 mm high, in the standard A4 and the 80 mm roll.
func TestRender_LegendsThreeMillimetres(t *testing.T) {
	t.Parallel()
	ticket := fixture(cfe.ETicket)
	ticket.CAEData.CAEEspecial = 2 // Contribuyente IVA MINIMO
	factura := fixture(cfe.EFactura)
	factura.CAEData.FecVenc = cfe.Date{Year: 2028, Month: time.November, Day: 14} // a flat digit first: 1
	docs := []struct {
		name string
		doc  []byte
		// the legends' words, each with the line it is found on
		words [][2]string
	}{
		{"e-Ticket", signed(t, ticket), [][2]string{
			{"RUC", "219999830019"}, {"Nº", "Serie"}, {"Forma", "pago:"},
			{"IVA", "MINIMO"}, {"MINIMO", "IVA"}, {"CONSUMO", "FINAL"}, {"FINAL", "CONSUMO"},
			{"Fecha", "vencimiento"},
		}},
		{"e-Factura", signed(t, factura), [][2]string{
			{"e-Factura", ""}, {"Forma", "Crédito"}, {"COMPRADOR", "RUC"}, {"214844360018", ""},
			{"Fecha", "vencimiento"}, {"14/11/2028", ""},
		}},
	}
	for _, d := range docs {
		for _, base := range []Base{Estandar, Rollo} {
			what := d.name + " " + string(base)
			pdf := render(t, d.doc, Options{Template: Template{Base: base}, Production: true})
			g := legendRaster(t, pdf)
			ls := lines(pdfWords(t, pdf))
			for _, want := range d.words {
				var found *word
				for _, l := range ls {
					for i := range l {
						if l[i].page != 1 || l[i].text != want[0] {
							continue
						}
						if want[1] == "" || lineHas([]textLine{l}, want[1]) == 0 {
							found = &l[i]
						}
					}
					if found != nil {
						break
					}
				}
				if found == nil {
					t.Errorf("%s: %q (beside %q) not found on page 1", what, want[0], want[1])
					continue
				}
				h, r := capInk(g, *found)
				if r == 0 {
					t.Fatalf("%s: %q has no flat capital or digit to measure", what, found.text)
				}
				if h < 3 {
					t.Errorf("%s: the %q of %q is %.2f mm high, want at least 3 mm", what, r, found.text, h)
				} else if h > 6 {
					t.Errorf("%s: the %q of %q measures %.2f mm: not a letter's ink (a rule?)", what, r, found.text, h)
				}
			}
		}
	}
}
