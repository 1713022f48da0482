package pdf

import (
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/cfe-agent/cfe-agent/assets"
	"github.com/signintech/gopdf"
	"golang.org/x/image/font"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
)

// A face is one embedded font with the metrics layout needs. Widths are
// computed exactly as gopdf computes them (advance × 1000 / unitsPerEm,
// truncated), so that text measured here occupies the same room on paper.
type face struct {
	family  string
	widths  map[rune]int // advance in thousandths of an em, for every rune the face prints
	ascent  float64      // in ems
	descent float64      // in ems, positive
	capH    float64      // the height of a flat capital (H) above the baseline, in ems
}

// Faces used by the layouts.
var (
	regular, bold *face
)

// fonts is parsed once: every document copies the parsed fonts from it
// instead of parsing the TTF files again.
var fonts = sync.OnceValues(func() (*gopdf.FontContainer, error) {
	c := new(gopdf.FontContainer)
	for _, f := range []assets.Font{assets.Regular, assets.Bold} {
		if err := c.AddTTFFontData(f.Name, f.TTF); err != nil {
			return nil, fmt.Errorf("font %s: %w", f.Name, err)
		}
	}
	return c, nil
})

func init() {
	regular = mustFace(assets.Regular)
	bold = mustFace(assets.Bold)
}

// printable lists the ranges of runes the faces are asked for: Latin-1,
// Latin Extended-A and B, general punctuation, the euro sign. Text outside
// them, or missing from the font, is printed as "?" (see face.clean).
var printable = [][2]rune{{0x20, 0x7e}, {0xa0, 0x24f}, {0x2010, 0x2044}, {0x20ac, 0x20ac}, {0x2122, 0x2122}}

func mustFace(f assets.Font) *face {
	parsed, err := sfnt.Parse(f.TTF)
	if err != nil {
		panic(fmt.Sprintf("pdf: embedded font %s: %v", f.Name, err))
	}
	var buf sfnt.Buffer
	upem := int(parsed.UnitsPerEm())
	ppem := fixed.Int26_6(upem << 6) // one pixel per font unit
	fc := &face{family: f.Name, widths: make(map[rune]int, 512)}
	for _, rg := range printable {
		for r := rg[0]; r <= rg[1]; r++ {
			g, err := parsed.GlyphIndex(&buf, r)
			if err != nil || g == 0 {
				continue
			}
			adv, err := parsed.GlyphAdvance(&buf, g, ppem, font.HintingNone)
			if err != nil {
				continue
			}
			fc.widths[r] = int(adv>>6) * 1000 / upem
		}
	}
	m, err := parsed.Metrics(&buf, ppem, font.HintingNone)
	if err != nil {
		panic(fmt.Sprintf("pdf: embedded font %s metrics: %v", f.Name, err))
	}
	fc.ascent = float64(m.Ascent>>6) / float64(upem)
	fc.descent = float64(m.Descent>>6) / float64(upem)
	g, err := parsed.GlyphIndex(&buf, 'H')
	if err == nil && g != 0 {
		if bounds, _, err := parsed.GlyphBounds(&buf, g, ppem, font.HintingNone); err == nil {
			fc.capH = float64(-bounds.Min.Y) / 64 / float64(upem)
		}
	}
	if fc.capH <= 0 {
		panic(fmt.Sprintf("pdf: embedded font %s has no capital H to measure", f.Name))
	}
	return fc
}

// ptToMM converts typographic points to millimetres.
const ptToMM = 25.4 / 72

// sizeForCaps is the least size, in points and in quarters of a point, at
// which the face's capitals are capMM millimetres high.
func (f *face) sizeForCaps(capMM float64) float64 {
	return math.Ceil(capMM/(f.capH*ptToMM)*4) / 4
}

// width returns the width of s, in millimetres, at size points.
func (f *face) width(s string, size float64) float64 {
	total := 0
	for _, r := range s {
		total += f.widths[r]
	}
	return float64(total) / 1000 * size * ptToMM
}

// clean returns s ready to be printed on one line: control characters become
// spaces, runs of spaces collapse, and runes the face cannot print become "?".
func (f *face) clean(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		switch {
		case r == ' ' || r < 0x20 || r == 0x7f || r == 0xa0:
			space = b.Len() > 0
			continue
		case f.widths[r] == 0:
			r = '?'
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// wrap splits s into lines no wider than w millimetres at size points,
// breaking at spaces, and inside a word only when the word alone is wider
// than w. Empty text gives no lines.
func (f *face) wrap(s string, size, w float64) []string {
	s = f.clean(s)
	if s == "" {
		return nil
	}
	if f.width(s, size) <= w {
		return []string{s}
	}
	var lines []string
	line := ""
	for _, word := range strings.Split(s, " ") {
		candidate := word
		if line != "" {
			candidate = line + " " + word
		}
		if f.width(candidate, size) <= w {
			line = candidate
			continue
		}
		if line != "" {
			lines = append(lines, line)
		}
		line = word
		for f.width(line, size) > w {
			cut := f.fit(line, size, w)
			lines = append(lines, line[:cut])
			line = line[cut:]
		}
	}
	return append(lines, line)
}

// fit returns the byte length of the longest prefix of s (at least one rune)
// that is no wider than w.
func (f *face) fit(s string, size, w float64) int {
	total := 0.0
	for i, r := range s {
		total += float64(f.widths[r]) / 1000 * size * ptToMM
		if total > w && i > 0 {
			return i
		}
	}
	return len(s)
}
