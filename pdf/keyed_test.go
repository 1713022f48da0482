package pdf

import (
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// TestRender_KeyedCopy: the copy of a contingency receipt keyed in (2xx)
// says on every page, in production too, that it is not the fiscal
// document; an e-Ticket in production says nothing of the kind.
func TestRender_KeyedCopy(t *testing.T) {
	t.Parallel()
	keyed := signed(t, fixture(201))
	electronic := signed(t, fixture(cfe.ETicket))
	for _, base := range Bases() {
		t.Run(string(base), func(t *testing.T) {
			t.Parallel()
			for _, prod := range []bool{false, true} {
				text := pdfText(t, render(t, keyed, Options{Template: Template{Base: base}, Production: prod}), 1, 0)
				mustContain(t, "keyed-in copy", text, KeyedCopyText, "e-Ticket Contingencia")
				if got := strings.Contains(text, WatermarkText); got == prod {
					t.Errorf("production %v: test watermark shown %v", prod, got)
				}
			}
			if text := pdfText(t, render(t, electronic, Options{Template: Template{Base: base}, Production: true}), 1, 0); strings.Contains(text, KeyedCopyText) {
				t.Errorf("an e-Ticket is marked %q", KeyedCopyText)
			}
		})
	}
	r, err := NewReceipt(keyed, Options{Production: true})
	if err != nil || !r.KeyedCopy || r.Test {
		t.Errorf("NewReceipt of a keyed-in CFC: KeyedCopy %v, Test %v, %v", r != nil && r.KeyedCopy, r != nil && r.Test, err)
	}
}
