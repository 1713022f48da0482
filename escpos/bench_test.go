package escpos

import (
	"testing"

	"github.com/cfe-agent/cfe-agent/pdf"
)

// BenchmarkRender measures one ESC/POS receipt of DGI's sample e-Ticket:
// from the signed XML (parse, digest, model, bytes), and from the model
// alone, with the native and the raster QR code.
func BenchmarkRender(b *testing.B) {
	doc := sample(b, samples[0])
	opts := pdf.Options{Adenda: "Gracias por su compra"}
	for _, o := range []Options{{QR: QRNative}, {QR: QRRaster}} {
		b.Run("xml-"+string(o.QR), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r, err := pdf.NewReceipt(doc, opts)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := Render(r, o); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	r, err := pdf.NewReceipt(doc, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("model-native", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := Render(r, Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
