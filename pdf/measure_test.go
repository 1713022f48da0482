package pdf

import (
	"bytes"
	"fmt"
	"html"
	"image"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// Measuring a PDF as its reader sees it: where pdftotext puts each word
// (-bbox), and where a rasterised page has ink (pdftoppm). Positions are in
// millimetres from the top-left corner of the page.

// A word is one word of a page with its bounding box.
type word struct {
	page           int // from 1
	text           string
	x0, y0, x1, y1 float64
}

var (
	bboxPageRE = regexp.MustCompile(`<page width="([\d.]+)" height="([\d.]+)">`)
	bboxWordRE = regexp.MustCompile(`<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</word>`)
)

// pdfWords returns every word of the PDF with its box, read with
// pdftotext -bbox.
func pdfWords(t testing.TB, pdf []byte) []word {
	t.Helper()
	bin := testtool.Require(t, "pdftotext")
	out, err := exec.Command(bin, "-bbox", "-enc", "UTF-8", writeTemp(t, "doc.pdf", pdf), "-").Output()
	if err != nil {
		t.Fatalf("pdftotext -bbox: %v", err)
	}
	var words []word
	pages := bboxPageRE.FindAllIndex(out, -1)
	for i, at := range pages {
		end := len(out)
		if i+1 < len(pages) {
			end = pages[i+1][0]
		}
		for _, m := range bboxWordRE.FindAllSubmatch(out[at[1]:end], -1) {
			f := func(j int) float64 {
				v, err := strconv.ParseFloat(string(m[j]), 64)
				if err != nil {
					t.Fatalf("pdftotext -bbox: %q: %v", m[0], err)
				}
				return mm(v)
			}
			words = append(words, word{page: i + 1, text: html.UnescapeString(string(m[5])),
				x0: f(1), y0: f(2), x1: f(3), y1: f(4)})
		}
	}
	if len(words) == 0 {
		t.Fatalf("pdftotext -bbox found no word:\n%s", out)
	}
	return words
}

// A textLine is the words of one page that share a line: each overlaps the
// first one's height by more than half.
type textLine []word

func (l textLine) String() string {
	s := make([]string, len(l))
	for i, w := range l {
		s[i] = w.text
	}
	return strings.Join(s, " ")
}

func (l textLine) top() float64    { return l[0].y0 }
func (l textLine) bottom() float64 { return l[0].y1 }

// lines groups words into lines, top to bottom, each line left to right.
func lines(words []word) []textLine {
	sorted := slices.Clone(words)
	slices.SortStableFunc(sorted, func(a, b word) int {
		if a.page != b.page {
			return a.page - b.page
		}
		switch {
		case a.y0 < b.y0:
			return -1
		case a.y0 > b.y0:
			return 1
		}
		return 0
	})
	var out []textLine
	for _, w := range sorted {
		if n := len(out); n > 0 {
			first := out[n-1][0]
			overlap := min(first.y1, w.y1) - max(first.y0, w.y0)
			if first.page == w.page && overlap > (first.y1-first.y0)/2 {
				out[n-1] = append(out[n-1], w)
				continue
			}
		}
		out = append(out, textLine{w})
	}
	for _, l := range out {
		slices.SortFunc(l, func(a, b word) int {
			switch {
			case a.x0 < b.x0:
				return -1
			case a.x0 > b.x0:
				return 1
			}
			return 0
		})
	}
	return out
}

// lineWith returns the index of the first line that has the words of want
// in that order, next to each other; -1 when none has.
func lineWith(ls []textLine, want ...string) int {
	for i, l := range ls {
		for j := range l {
			if j+len(want) > len(l) {
				break
			}
			match := true
			for k, w := range want {
				if l[j+k].text != w {
					match = false
					break
				}
			}
			if match {
				return i
			}
		}
	}
	return -1
}

// rasterDPI is the resolution pages are rasterised at: 1 pixel ≈ 0.13 mm.
const rasterDPI = 200

// pdfRaster rasterises one page in grey levels with pdftoppm.
func pdfRaster(t testing.TB, pdf []byte, page int) *image.Gray {
	t.Helper()
	ppm := testtool.Require(t, "pdftoppm")
	f := writeTemp(t, "doc.pdf", pdf)
	prefix := filepath.Join(filepath.Dir(f), "raster")
	p := strconv.Itoa(page)
	if msg, err := exec.Command(ppm, "-gray", "-r", strconv.Itoa(rasterDPI), "-f", p, "-l", p,
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

// decodePGM reads a binary PGM (P5) of 8-bit samples, as pdftoppm -gray
// writes it.
func decodePGM(b []byte) (*image.Gray, error) {
	var fields []int
	rest := b
	if !bytes.HasPrefix(rest, []byte("P5")) {
		return nil, fmt.Errorf("not a binary PGM: %.2q", rest)
	}
	rest = rest[2:]
	for len(fields) < 3 {
		rest = bytes.TrimLeft(rest, " \t\r\n")
		if bytes.HasPrefix(rest, []byte("#")) {
			if i := bytes.IndexByte(rest, '\n'); i >= 0 {
				rest = rest[i:]
				continue
			}
			return nil, fmt.Errorf("truncated header")
		}
		end := bytes.IndexAny(rest, " \t\r\n")
		if end < 0 {
			return nil, fmt.Errorf("truncated header")
		}
		n, err := strconv.Atoi(string(rest[:end]))
		if err != nil {
			return nil, err
		}
		fields, rest = append(fields, n), rest[end:]
	}
	w, h, maxVal := fields[0], fields[1], fields[2]
	rest = rest[1:] // the single white space after the header
	if maxVal != 255 || len(rest) < w*h {
		return nil, fmt.Errorf("%d×%d, max %d, %d bytes of samples", w, h, maxVal, len(rest))
	}
	return &image.Gray{Pix: rest[:w*h], Stride: w, Rect: image.Rect(0, 0, w, h)}, nil
}

// px and pxToMM convert between millimetres and raster pixels.
func px(v float64) int     { return int(v * rasterDPI / 25.4) }
func pxToMM(p int) float64 { return float64(p) * 25.4 / rasterDPI }
func inked(g *image.Gray, x, y int) bool {
	// Anti-aliased edges count as ink: anything visibly darker than paper.
	return g.GrayAt(x, y).Y < 200
}

// rowInked reports whether row y of the raster has ink anywhere.
func rowInked(g *image.Gray, y int) bool {
	for x := g.Rect.Min.X; x < g.Rect.Max.X; x++ {
		if inked(g, x, y) {
			return true
		}
	}
	return false
}

// clearance returns how many millimetres of blank paper there are from row
// y (excluded) going in direction dy (-1 up, +1 down) until the next ink,
// and whether ink was found before the page's edge.
func clearance(g *image.Gray, y, dy int) (float64, bool) {
	for n, r := 0, y+dy; r >= g.Rect.Min.Y && r < g.Rect.Max.Y; n, r = n+1, r+dy {
		if rowInked(g, r) {
			return pxToMM(n), true
		}
	}
	return 0, false
}
