package assets

import (
	"testing"

	"golang.org/x/image/font/sfnt"
)

// Every font must parse and carry the glyphs Spanish text and receipts need:
// a missing glyph would print as a blank and extract as nothing.
func TestFonts_CoverSpanish(t *testing.T) {
	t.Parallel()
	const need = "ÁÉÍÓÚÜÑáéíóúüñº°¿¡€$%.,:;-–/()0123456789" +
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	for _, f := range []Font{Regular, Bold} {
		t.Run(f.Name, func(t *testing.T) {
			parsed, err := sfnt.Parse(f.TTF)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			var buf sfnt.Buffer
			for _, r := range need {
				g, err := parsed.GlyphIndex(&buf, r)
				if err != nil || g == 0 {
					t.Errorf("no glyph for %q (err %v)", r, err)
				}
			}
		})
	}
}

func TestFonts_NamesAreDistinct(t *testing.T) {
	t.Parallel()
	if Regular.Name == Bold.Name || Regular.Name == "" || Bold.Name == "" {
		t.Fatalf("font names must be distinct and set: %q, %q", Regular.Name, Bold.Name)
	}
}
