package escpos

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"os"
	"testing"

	"github.com/cfe-agent/cfe-agent/pdf"
)

// testLogo is a 300 × 100 PNG: transparent, with a black bar across its
// left half.
func testLogo(t testing.TB) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, 300, 100))
	for y := 30; y < 70; y++ {
		for x := 0; x < 150; x++ {
			img.Set(x, y, color.Black)
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestRender_Logo prints a template's logo as the Rollo template does: as
// escimages extracts it, at most 20 mm high (160 dots at 203 dpi) and no
// wider than the head, the dark bar black and the transparent rest white,
// before the emitter; with the raster QR, the QR is the second image and
// still reads as DGI's URL.
func TestRender_Logo(t *testing.T) {
	t.Parallel()
	doc := sample(t, samples[0])
	r, err := pdf.NewReceipt(doc, pdf.Options{Template: pdf.Template{Base: pdf.Rollo, Logo: testLogo(t)}})
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []Options{{PaperMM: 80}, {PaperMM: 58, QR: QRRaster}} {
		b := render(t, r, o)
		if hasRealTime(b) {
			t.Error("the receipt holds a real-time command")
		}
		pngs := images(t, b)
		want := 1
		if o.QR == QRRaster {
			want = 2
		}
		if len(pngs) != want {
			t.Fatalf("%+v: %d images, want %d", o, len(pngs), want)
		}
		f, err := os.Open(pngs[0])
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		head := 576
		if o.PaperMM == 58 {
			head = 384
		}
		bounds := img.Bounds()
		if bounds.Dy() > 160 || bounds.Dx() > head || bounds.Dy() < 100 {
			t.Errorf("%+v: logo of %v dots, want at most %d × 160", o, bounds.Size(), head)
		}
		dark := func(x, y int) bool {
			r, g, b, _ := img.At(x, y).RGBA()
			return r+g+b < 3*0x8000
		}
		w, h := bounds.Dx(), bounds.Dy()
		// The image may be padded to whole bytes at its right.
		if !dark(w/8, h/2) || dark(w/8, h/8) || dark(w*3/4, h/2) {
			t.Errorf("%+v: the logo's bar is not where it should be", o)
		}
		if o.QR == QRRaster {
			if got := zbar(t, pngs[1]); len(got) != 1 || got[0] != dgiURL(t, doc) {
				t.Errorf("the QR after the logo reads %q", got)
			}
		}
	}
}
