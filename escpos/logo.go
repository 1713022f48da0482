package escpos

import (
	"bytes"
	"fmt"
	"image"
	_ "image/jpeg" // logos may be JPEG
	_ "image/png"  // or PNG
)

// logoMaxMM is the height of the logo on a roll, as the Rollo template
// prints it.
const logoMaxMM = 20.0

// logoBitmap scales the logo to fit maxW × maxH dots, keeping its
// proportions, and turns it into 1-bit rows for GS v 0 (dark and opaque
// pixels black).
func logoBitmap(b []byte, maxW, maxH int) (bits []byte, widthBytes, height int, err error) {
	img, _, err := image.Decode(bytes.NewReader(b))
	if err != nil {
		return nil, 0, 0, fmt.Errorf("the logo is not a PNG or JPEG image: %w", err)
	}
	src := img.Bounds()
	if src.Dx() == 0 || src.Dy() == 0 {
		return nil, 0, 0, fmt.Errorf("the logo is empty")
	}
	scale := min(float64(maxW)/float64(src.Dx()), float64(maxH)/float64(src.Dy()))
	w, h := max(int(float64(src.Dx())*scale), 1), max(int(float64(src.Dy())*scale), 1)
	widthBytes = (w + 7) / 8
	bits = make([]byte, widthBytes*h)
	for y := range h {
		sy := src.Min.Y + y*src.Dy()/h
		for x := range w {
			r, g, bl, a := img.At(src.Min.X+x*src.Dx()/w, sy).RGBA()
			// Luma of the colour over white paper, in 16 bits.
			luma := (299*r + 587*g + 114*bl) / 1000
			over := luma*a/0xffff + (0xffff - a)
			if over < 0x8000 {
				bits[y*widthBytes+x/8] |= 0x80 >> (x % 8)
			}
		}
	}
	return bits, widthBytes, h, nil
}
