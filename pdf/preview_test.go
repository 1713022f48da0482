package pdf

import (
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// unissued is the fixture as a preview sees it: no serie, number or CAE.
func unissued() *cfe.CFE {
	c := fixture(cfe.ETicket)
	c.IdDoc.Serie, c.IdDoc.Nro, c.CAEData = "", 0, cfe.CAEData{}
	return c
}

func TestRenderPreview(t *testing.T) {
	t.Parallel()
	for _, base := range Bases() {
		t.Run(string(base), func(t *testing.T) {
			for _, prod := range []bool{false, true} {
				doc, err := RenderPreview(unissued(), Options{Template: Template{Base: base}, Production: prod})
				if err != nil {
					t.Fatal(err)
				}
				text := pdfText(t, doc, 1, 0)
				mustContain(t, "preview", text, PreviewText, previewNumber, previewCAE, "Yerba mate 1 kg", "Almacén La Esquina S.A.")
				if got := strings.Contains(text, WatermarkText); got == prod {
					t.Errorf("production %v: test watermark shown %v", prod, got)
				}
				for _, unwanted := range []string{"Serie  Nº", "CAE Nº", cfe.QRBaseURL} {
					if strings.Contains(text, unwanted) {
						t.Errorf("production %v: the preview shows %q", prod, unwanted)
					}
				}
				if qr := pdfQR(t, doc, 1); len(qr) != 1 || qr[0] != PreviewText {
					t.Errorf("production %v: QR %q, want %q", prod, qr, PreviewText)
				}
			}
		})
	}
}

func TestRenderPreview_RejectsBadTemplate(t *testing.T) {
	t.Parallel()
	_, err := RenderPreview(unissued(), Options{Template: Template{Base: "Ticketera"}})
	if cfe.ErrorCode(err) != cfe.EINVALID {
		t.Errorf("error %v, want EINVALID", err)
	}
}
