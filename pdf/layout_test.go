package pdf

import (
	"fmt"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// A rect is an area of a page, in millimetres.
type rect struct{ x0, y0, x1, y1 float64 }

func (r rect) overlaps(o rect) bool {
	const eps = 0.01
	return r.x0 < o.x1-eps && o.x0 < r.x1-eps && r.y0 < o.y1-eps && o.y0 < r.y1-eps
}

func (r rect) contains(x, y float64) bool { return x >= r.x0 && x <= r.x1 && y >= r.y0 && y <= r.y1 }

// area returns what an op covers: text from its ascent to its descent, a
// rule or box with its line width.
func area(o op) rect {
	switch o.kind {
	case opText:
		em := o.size * ptToMM
		return rect{o.x, o.y - o.face.ascent*em, o.x + o.face.width(o.text, o.size), o.y + o.face.descent*em}
	case opRule, opBox:
		x0, x1 := min(o.x, o.x+o.w), max(o.x, o.x+o.w)
		y0, y1 := min(o.y, o.y+o.h), max(o.y, o.y+o.h)
		return rect{x0 - lineWidth/2, y0 - lineWidth/2, x1 + lineWidth/2, y1 + lineWidth/2}
	}
	return rect{o.x, o.y, o.x + o.w, o.y + o.w}
}

// layoutCases are documents with every section a layout has.
func layoutCases(t *testing.T) map[string]struct {
	doc  []byte
	opts Options
} {
	full := fixture(cfe.EFacturaND)
	full.IdDoc.IndPagCta3ros, full.IdDoc.InfoAdicionalDoc = 1, "Exento por Ley 18.083"
	full.CAEData.CAEEspecial, full.CAEData.CausalCAEEsp = 1, 101
	full.Items[0].DscItem = "Paquete de un kilo, molienda tradicional con palo, origen Brasil, importado por la empresa"
	full.Items[0].DescuentoPct, full.Items[0].DescuentoMonto = numP("10"), numP("36.6")
	full.Items[0].MontoItem = num("329.4")
	full.Totales.MntNetoIVATasaBasica, full.Totales.MntIVATasaBasica = numP("270"), numP("59.4") // 329.40 / 1.22
	full.Totales.MntTotal, full.Totales.MntPagar = numP("499.4"), numP("499.4")                  // 5 + 150 + 270 + 15 + 59.40
	full.MediosPago = []cfe.MedioPago{{NroLinMP: 1, GlosaMP: "Tarjeta de débito", ValorPago: num("499.4")}}
	full.SubTotInfo = []cfe.SubTotal{{NroSTI: 1, GlosaSTI: "Almacén", ValSubtotSTI: num("494.4")}}
	extras := Options{Adenda: "Pedido 5531\nEntregar en Colonia 1234 de 9 a 18 horas; llamar antes al 099 123 456 " +
		"y dejar en portería si no hay nadie", Footer: Footer{FechaEmisor: cfe.Date{Year: 2012, Month: 10, Day: 1},
		WebURL: "https://www.laesquina.com.uy/comprobantes/consulta-de-comprobantes-electronicos"},
		Template: Template{Legends: []string{"¡Gracias por su compra!"}}}
	return map[string]struct {
		doc  []byte
		opts Options
	}{
		"e-Ticket":          {signedFixture(t, cfe.ETicket), Options{}},
		"e-Resguardo":       {signedFixture(t, cfe.EResguardo), Options{}},
		"e-Remito":          {signedFixture(t, cfe.ERemito), Options{}},
		"e-Factura Exp":     {signedFixture(t, cfe.EFacturaExp), Options{}},
		"full note":         {signed(t, full), extras},
		"many lines":        {signed(t, manyLines(90)), Options{}},
		"DGI sample e-Tck":  {sampleCFE(t, "Sob_Ej_Mod_19072016__CFE_101_A1.xml"), extras},
		"logo, large font":  {signedFixture(t, cfe.EFactura), Options{Template: Template{Logo: pngLogo(t), FontSize: 11}}},
		"smallest font":     {signedFixture(t, cfe.EFactura), Options{Template: Template{FontSize: MinFontSize}}},
		"production e-Fact": {signedFixture(t, cfe.EFactura), Options{Production: true}},
	}
}

// Every layout keeps DGI's geometry: 5 mm margins, text of at least 7 pt,
// a QR of 22 to 30 mm with a clear margin of 3 mm that nothing enters (the
// watermark included), and no text drawn over other text or lines.
func TestLayout_Geometry(t *testing.T) {
	t.Parallel()
	for name, c := range layoutCases(t) {
		for _, base := range Bases() {
			opts := c.opts
			opts.Template.Base = base
			l, err := newLayout(c.doc, &opts)
			if err != nil {
				t.Fatalf("%s %s: %v", name, base, err)
			}
			for i, p := range l.pages() {
				checkPage(t, fmt.Sprintf("%s, %s, page %d", name, base, i+1), l.margin, p)
			}
		}
	}
}

func checkPage(t *testing.T, what string, margin float64, p page) {
	t.Helper()
	inside := rect{margin - 0.2, margin - 0.2, p.w - margin + 0.2, p.h - margin + 0.2}
	var texts, lines, qrs []rect
	for _, o := range p.ops {
		a := area(o)
		switch o.kind {
		case opText:
			if o.size < MinFontSize && o.text != WatermarkText {
				t.Errorf("%s: %q at %.1f pt, under %.0f pt", what, o.text, o.size, MinFontSize)
			}
			texts = append(texts, a)
		case opRule, opBox, opLogo:
			lines = append(lines, a)
		case opQR:
			if o.w < qrMin || o.w > qrMax {
				t.Errorf("%s: the QR is %.1f mm, want %.0f to %.0f", what, o.w, qrMin, qrMax)
			}
			qrs = append(qrs, rect{o.x - qrMargin, o.y - qrMargin, o.x + o.w + qrMargin, o.y + o.w + qrMargin})
		}
		if o.kind == opWatermark {
			for _, c := range placeOutline(o.x, o.y, o.w, o.angle) {
				for _, pt := range c {
					if !inside.contains(pt.x, pt.y) {
						t.Errorf("%s: the watermark reaches (%.1f, %.1f), outside the margins", what, pt.x, pt.y)
						return
					}
				}
			}
			continue
		}
		if !inside.contains(a.x0, a.y0) || !inside.contains(a.x1, a.y1) {
			t.Errorf("%s: op %d %q at (%.1f,%.1f)-(%.1f,%.1f) is outside the %.0f mm margins of a %.0f × %.0f page",
				what, o.kind, o.text, a.x0, a.y0, a.x1, a.y1, margin, p.w, p.h)
		}
	}
	if len(qrs) != 1 {
		t.Fatalf("%s: %d QR codes, want one (the Sello Digital is on every page)", what, len(qrs))
	}
	zone := qrs[0]
	for _, o := range p.ops {
		switch o.kind {
		case opQR:
		case opWatermark:
			for _, c := range placeOutline(o.x, o.y, o.w, o.angle) {
				for _, pt := range c {
					if zone.contains(pt.x, pt.y) {
						t.Fatalf("%s: the watermark enters the QR's clear zone", what)
					}
				}
			}
		default:
			if area(o).overlaps(zone) {
				t.Errorf("%s: op %d %q enters the QR's clear zone", what, o.kind, o.text)
			}
		}
	}
	for i, a := range texts {
		for _, b := range texts[i+1:] {
			if a.overlaps(b) {
				t.Errorf("%s: texts overlap at (%.1f,%.1f) and (%.1f,%.1f)", what, a.x0, a.y0, b.x0, b.y0)
			}
		}
		for _, b := range lines {
			if a.overlaps(b) && !(b.x1-b.x0 > 1 && b.y1-b.y0 > 1) {
				t.Errorf("%s: text at (%.1f,%.1f)-(%.1f,%.1f) crosses a line", what, a.x0, a.y0, a.x1, a.y1)
			}
		}
	}
}
