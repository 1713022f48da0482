package pdf

import (
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// TestNewReceipt checks that the exported model is what the Rollo template
// prints: every text of it is in pdftotext's reading of the Rollo PDF of the
// same CFE, and it carries the texts each type must show.
func TestNewReceipt(t *testing.T) {
	t.Parallel()
	for _, typ := range []cfe.Type{cfe.ETicket, cfe.EFactura, cfe.ERemito, cfe.EResguardo, cfe.ETicketNC} {
		t.Run(typ.Name(), func(t *testing.T) {
			doc := signed(t, fixture(typ))
			opts := Options{Template: Template{Base: Rollo, Legends: []string{"Gracias por elegirnos"}},
				Adenda: "Cambios dentro de 30 días", Footer: Footer{WebURL: "https://www.laesquina.com.uy/"}}
			r, err := NewReceipt(doc, opts)
			if err != nil {
				t.Fatalf("NewReceipt: %v", err)
			}
			if !r.Test {
				t.Error("a receipt outside production must say Test")
			}
			if want := expectedQR(t, doc); r.QRData != want {
				t.Errorf("QRData = %q, want %q", r.QRData, want)
			}
			texts := r.Texts()
			mustContain(t, "the model", strings.Join(texts, "\n"), fixtureText(typ)...)
			rollText := pdfText(t, render(t, doc, opts), 1, 0)
			mustContain(t, "the Rollo PDF", rollText, texts...)
		})
	}
	t.Run("production", func(t *testing.T) {
		r, err := NewReceipt(signed(t, fixture(cfe.ETicket)), Options{Production: true})
		if err != nil {
			t.Fatal(err)
		}
		if r.Test {
			t.Error("Test in production")
		}
	})
	t.Run("not a signed CFE", func(t *testing.T) {
		if _, err := NewReceipt([]byte("<CFE/>"), Options{}); cfe.ErrorCode(err) != cfe.EINVALID {
			t.Errorf("error %v, want EINVALID", err)
		}
	})
}
