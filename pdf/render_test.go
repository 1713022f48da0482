package pdf

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/shopspring/decimal"
)

// Expected page widths in millimetres.
var baseWidth = map[Base]float64{Estandar: 210, Rollo: 80, Rollo58: 58}

// signedFixtures signs the fixture of every CFE type once per test run.
// Each type has its own lock, so that parallel tests sign different types
// at the same time and wait only for the type they need; a test that fails
// while signing leaves the type unsigned for the next one to try.
var signedFixtures = struct {
	sync.Mutex
	m map[cfe.Type]*signedOnce
}{m: map[cfe.Type]*signedOnce{}}

type signedOnce struct {
	sync.Mutex
	b []byte
}

func signedFixture(t testing.TB, typ cfe.Type) []byte {
	t.Helper()
	signedFixtures.Lock()
	e := signedFixtures.m[typ]
	if e == nil {
		e = &signedOnce{}
		signedFixtures.m[typ] = e
	}
	signedFixtures.Unlock()
	e.Lock()
	defer e.Unlock()
	if e.b == nil {
		e.b = signed(t, fixture(typ))
	}
	return e.b
}

// ticketFamily are the types DGI's footer rule calls "e-Tickets y sus notas
// de corrección" (V24 table A): e-Ticket, e-Ticket por cuenta ajena, their
// notes, and their contingency forms.
var ticketFamily = map[cfe.Type]bool{101: true, 102: true, 103: true, 131: true, 132: true, 133: true,
	201: true, 202: true, 203: true, 231: true, 232: true, 233: true}

func TestRender_EveryTypeEveryTemplate(t *testing.T) {
	t.Parallel()
	footer := Footer{FechaEmisor: cfe.Date{Year: 2012, Month: 10, Day: 1}, WebURL: "https://www.laesquina.com.uy"}
	for _, typ := range cfe.Types() {
		t.Run(typ.String(), func(t *testing.T) {
			t.Parallel()
			doc := signedFixture(t, typ)
			qr := expectedQR(t, doc)
			verify := "Puede verificar comprobante en www.dgi.gub.uy"
			if ticketFamily[typ] {
				verify = "Puede verificar comprobante en www.laesquina.com.uy"
			}
			for _, base := range Bases() {
				pdf := render(t, doc, Options{Template: Template{Base: base}, Footer: footer})
				text := pdfText(t, pdf, 1, 0)
				what := fmt.Sprintf("%s %s", typ, base)
				mustContain(t, what, text, fixtureText(typ)...)
				mustContain(t, what, text, WatermarkText, cfe.SecurityCode(mustDigest(t, doc)))
				// The fixtures' CAE: 90260000123, serie A 1–1000, due 01/03/2028.
				mustContain(t, what, text, verify, "Fecha emisor: 01/10/2012", ConstanciaIVAalDia,
					"CAE Nº 90260000123", "Serie A del 1 al 1000", "Fecha de vencimiento 01/03/2028")
				for i, p := range pdfPages(t, pdf) {
					if got := mm(p.w); math.Abs(got-baseWidth[base]) > 0.1 {
						t.Errorf("%s page %d is %.2f mm wide, want %.0f", what, i+1, got, baseWidth[base])
					}
				}
				// Decoding takes time: every type on the 80 mm roll, one
				// type of each XML element in the other layouts.
				if info, _ := typ.Info(); base == Rollo || typ == info.Base && !info.Contingency {
					if got := pdfQR(t, pdf, 1); len(got) != 1 || got[0] != qr {
						t.Errorf("%s QR decodes to %q, want %q", what, got, qr)
					}
				}
			}
		})
	}
}

func mustDigest(t testing.TB, doc []byte) string {
	t.Helper()
	d, err := cfe.DigestValue(doc)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// DGI's own signed samples print in every layout, and their QR carries the
// data worked out by hand from the 101 sample in dgi-cfe-format.md §4.
func TestRender_DGISamples(t *testing.T) {
	t.Parallel()
	samples := map[string][]string{
		"Sob_Ej_Mod_19072016__CFE_101_A1.xml":       {"e-Ticket", "CONSUMO FINAL", "C.I. 13353214", "UYU 168.816,00"},
		"Sob_Ej_Mod_19072016__CFE_102_A1.xml":       {"Nota de Crédito de e-Ticket", "CONSUMO FINAL"},
		"Sob_Ej_Mod_19072016__CFE_103_A1.xml":       {"Nota de Débito de e-Ticket"},
		"Sob_Ej_Mod_19072016__CFE_111_A1.xml":       {"e-Factura", "RUC COMPRADOR", "214844360018", "UYU 29.400,00", "UYU 24.400,00"},
		"Sob_Ej_Mod_19072016__CFE_112_A1.xml":       {"Nota de Crédito de e-Factura"},
		"Sob_Ej_Mod_19072016__CFE_181_A1.xml":       {"e-Remito", "Manzanas", "10 kg"},
		"Sob_Ej_Mod_19072016__CFE_182_A1.xml":       {"e-Resguardo", "Código 2183165", "UYU 55.000,00", "e-Factura A-25"},
		"Sob_Ej_Mod_19072016__CFE_281_XA953001.xml": {"e-Remito Contingencia", "Serie XA Nº 953001"},
	}
	for name, want := range samples {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			doc := sampleCFE(t, name)
			for _, base := range Bases() {
				pdf := render(t, doc, Options{Template: Template{Base: base}, Production: true})
				mustContain(t, string(base), pdfText(t, pdf, 1, 0), want...)
				if base != Rollo {
					continue // the QR of every layout is decoded in TestRender_EveryTypeEveryTemplate
				}
				if got, qr := pdfQR(t, pdf, 1), expectedQR(t, doc); len(got) != 1 || got[0] != qr {
					t.Errorf("%s: QR %q, want %q", base, got, qr)
				}
			}
		})
	}
	const derived = "https://www.efactura.dgi.gub.uy/consultaQR/cfe?219999830019,101,A,1,168816.00,19/07/2016," +
		"xpXiLtg0nWejadP44Gm7ArFMk7Y%3D"
	pdf := render(t, sampleCFE(t, "Sob_Ej_Mod_19072016__CFE_101_A1.xml"), Options{})
	if got := pdfQR(t, pdf, 1); len(got) != 1 || got[0] != derived {
		t.Errorf("QR of DGI's e-Ticket A-1: %q, want %q", got, derived)
	}
	mustContain(t, "e-Ticket A-1", pdfText(t, pdf, 1, 0), "Código de seguridad", "xpXiLt")
}

func TestRender_Watermark(t *testing.T) {
	t.Parallel()
	doc := signed(t, manyLines(120))
	for _, base := range Bases() {
		t.Run(string(base), func(t *testing.T) {
			test := render(t, doc, Options{Template: Template{Base: base}})
			pages := len(pdfPages(t, test))
			perPage := map[Base]int{Estandar: 1, Rollo: 2, Rollo58: 2}[base] // rolls: at top and bottom
			for p := 1; p <= pages; p++ {
				if n := strings.Count(pdfText(t, test, p, p), WatermarkText); n != perPage {
					t.Errorf("test rendering, page %d of %d: watermark text %d times, want %d", p, pages, n, perPage)
				}
			}
			prod := pdfText(t, render(t, doc, Options{Template: Template{Base: base}, Production: true}), 1, 0)
			for _, word := range []string{WatermarkText, "prueba", "sin valor fiscal"} {
				if strings.Contains(prod, word) {
					t.Errorf("production rendering shows %q", word)
				}
			}
		})
	}
}

func TestRender_RollLengthFollowsContent(t *testing.T) {
	t.Parallel()
	for _, base := range []Base{Rollo, Rollo58} {
		short := pdfPages(t, render(t, signed(t, manyLines(3)), Options{Template: Template{Base: base}, Production: true}))
		long := pdfPages(t, render(t, signed(t, manyLines(40)), Options{Template: Template{Base: base}, Production: true}))
		if len(short) != 1 || len(long) != 1 {
			t.Fatalf("%s: %d and %d pages, want one each", base, len(short), len(long))
		}
		if mm(short[0].h) < 150 {
			t.Errorf("%s: a short roll is %.1f mm long, DGI's minimum is 150 mm", base, mm(short[0].h))
		}
		// Each added line prints its description and its quantity × price
		// line: at least two lines of 7 pt (2.47 mm) text.
		if grow, least := mm(long[0].h-short[0].h), 37*2*7*25.4/72; grow < least {
			t.Errorf("%s: 37 more lines made the roll %.1f mm longer, want at least %.1f", base, grow, least)
		}
	}
}

func TestRender_EstandarSpansPages(t *testing.T) {
	t.Parallel()
	const lines = 120
	doc := signed(t, manyLines(lines))
	pdf := render(t, doc, Options{Production: true})
	sizes := pdfPages(t, pdf)
	n := len(sizes)
	if n < 3 {
		t.Fatalf("%d lines fit on %d pages; the test wants at least 3", lines, n)
	}
	for i, s := range sizes {
		if math.Abs(mm(s.w)-210) > 0.1 || math.Abs(mm(s.h)-297) > 0.1 {
			t.Errorf("page %d is %.1f × %.1f mm, want A4", i+1, mm(s.w), mm(s.h))
		}
	}
	qr := expectedQR(t, doc)
	seen := 0
	for p := 1; p <= n; p++ {
		text := pdfText(t, pdf, p, p)
		what := fmt.Sprintf("page %d of %d", p, n)
		// DGI: every page repeats the emitter, the receptor, the document's
		// identification, "page x of y" and the Sello Digital.
		mustContain(t, what, text, "Almacén La Esquina S.A.", "RUC 219999830019", "RUC COMPRADOR", "214844360018",
			"Distribuidora del Sur S.R.L.", "e-Factura", "Serie A Nº 42", fmt.Sprintf("Página %d de %d", p, n),
			"Código de seguridad")
		if got := pdfQR(t, pdf, p); len(got) != 1 || got[0] != qr {
			t.Errorf("%s: QR %q, want %q", what, got, qr)
		}
		// The footer only on the last page.
		if last := p == n; strings.Contains(text, "Fecha de vencimiento") != last || strings.Contains(text, "CAE Nº") != last {
			t.Errorf("%s: footer present = %v, want %v", what, !last, last)
		}
		onPage := strings.Count(text, "Artículo número")
		seen += onPage
		if p < n {
			// The running sum of the lines so far closes this page and
			// opens the next one.
			carried := money(decimal.NewFromInt(int64(122 * seen)))
			if !strings.Contains(text, "Transporte") || !strings.Contains(text, carried) {
				t.Errorf("%s: no \"Transporte\" %s after %d lines", what, carried, seen)
			}
			if next := pdfText(t, pdf, p+1, p+1); !strings.Contains(next, carried) {
				t.Errorf("page %d does not open with the carried %s", p+1, carried)
			}
		}
	}
	if seen != lines {
		t.Errorf("the pages show %d lines, want %d", seen, lines)
	}
	// 120 × 122 = 14 640 with IVA: 12 000 net + 2 640 IVA.
	mustContain(t, "last page", pdfText(t, pdf, n, n), "UYU 14.640,00", "UYU 12.000,00", "UYU 2.640,00")
}

// pngLogo is a small PNG logo.
func pngLogo(t testing.TB) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 120, 40))
	for x := range 120 {
		for y := range 40 {
			img.Set(x, y, color.RGBA{R: uint8(x * 2), G: 80, B: uint8(y * 6), A: 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// pdfImages counts the images of a PDF with pdfimages.
func pdfImages(t testing.TB, pdf []byte) int {
	t.Helper()
	bin := testtool.Require(t, "pdfimages")
	out, err := exec.Command(bin, "-list", writeTemp(t, "doc.pdf", pdf)).Output()
	if err != nil {
		t.Fatalf("pdfimages: %v", err)
	}
	return len(strings.Split(strings.TrimSpace(string(out)), "\n")) - 2 // two header lines
}

func TestRender_Options(t *testing.T) {
	t.Parallel()
	ticket := signedFixture(t, cfe.ETicket)
	factura := signedFixture(t, cfe.EFactura)

	t.Run("custom template", func(t *testing.T) {
		for _, base := range Bases() {
			tmpl := Template{Name: "mostrador", Base: base, Logo: pngLogo(t),
				Legends: []string{"¡Gracias por su compra!", "Cambios dentro de los 30 días"}, WebURL: "www.laesquina.com.uy"}
			pdf := render(t, ticket, Options{Template: tmpl, Footer: Footer{WebURL: "www.otra.com.uy"}, Production: true})
			mustContain(t, string(base), pdfText(t, pdf, 1, 0), "¡Gracias por su compra!", "Cambios dentro de los 30 días",
				"Puede verificar comprobante en www.laesquina.com.uy")
			if n := pdfImages(t, pdf); n != 1 {
				t.Errorf("%s: %d images, want the logo", base, n)
			}
		}
	})
	t.Run("Adenda", func(t *testing.T) {
		for _, base := range Bases() {
			pdf := render(t, factura, Options{Template: Template{Base: base},
				Adenda: "Pedido Nº 5531 – entregar en depósito\nAtención: Sra. Núñez"})
			mustContain(t, string(base), pdfText(t, pdf, 1, 0), "ADENDA", "Pedido Nº 5531 – entregar en depósito",
				"Atención: Sra. Núñez")
		}
	})
	t.Run("font size", func(t *testing.T) {
		small := pdfPages(t, render(t, factura, Options{Template: Template{Base: Rollo, FontSize: 7}}))
		large := pdfPages(t, render(t, factura, Options{Template: Template{Base: Rollo, FontSize: 11}}))
		if large[0].h <= small[0].h {
			t.Errorf("11 pt text gives a roll of %.1f mm, 7 pt %.1f mm: want it longer", mm(large[0].h), mm(small[0].h))
		}
	})
}

// The footer's data from the profile (DGI "Pie del comprobante"), in every
// template: Fecha emisor or, instead, the resolution; where to verify; the
// IVA constancia, which the emitter may leave out and which DGI's rules
// leave out on their own. (TestRender_EveryTypeEveryTemplate checks where
// each type sends the reader to verify it.)
func TestRender_Footer(t *testing.T) {
	t.Parallel()
	since := cfe.Date{Year: 2012, Month: 10, Day: 1}
	const site = "https://www.laesquina.com.uy/comprobantes/"
	tests := []struct {
		name   string
		typ    cfe.Type
		change func(*cfe.CFE)
		footer Footer
		want   []string
		absent []string
	}{
		{"e-Ticket: the company's site, printed without scheme", cfe.ETicket, nil, Footer{FechaEmisor: since, WebURL: site},
			[]string{"Fecha emisor: 01/10/2012", "Puede verificar comprobante en www.laesquina.com.uy/comprobantes",
				ConstanciaIVAalDia}, []string{"https://", "www.dgi.gub.uy", "Res. "}},
		{"e-Factura: DGI's site", cfe.EFactura, nil, Footer{FechaEmisor: since, WebURL: site},
			[]string{"Fecha emisor: 01/10/2012", "Puede verificar comprobante en www.dgi.gub.uy", ConstanciaIVAalDia},
			[]string{"laesquina.com.uy", "Res. "}},
		{"e-Ticket without a site: DGI's", cfe.ETicket, nil, Footer{FechaEmisor: since},
			[]string{"Puede verificar comprobante en www.dgi.gub.uy"}, nil},
		{"resolution instead of Fecha emisor", cfe.ETicketNC, nil, Footer{FechaEmisor: since, Resolucion: "1234/2016", WebURL: site},
			[]string{"Res. 1234/2016", "Puede verificar comprobante en www.laesquina.com.uy/comprobantes"}, []string{"Fecha emisor"}},
		{"neither date nor resolution", cfe.EFactura, nil, Footer{},
			[]string{"Puede verificar comprobante en www.dgi.gub.uy"}, []string{"Fecha emisor", "Res. "}},
		{"constancia left out by the emitter", cfe.EFactura, nil, Footer{FechaEmisor: since, OmitIVAConstancia: true},
			[]string{"Fecha emisor: 01/10/2012"}, []string{ConstanciaIVAalDia}},
		{"not al día (A-C17 1): its meaning instead of the constancia", cfe.ETicket, func(c *cfe.CFE) { c.IdDoc.IVAalDia = 1 }, Footer{FechaEmisor: since},
			[]string{"Fecha emisor: 01/10/2012", NoIVAalDia}, nil},
		{"not al día, constancia left out by the emitter: the meaning still printed", cfe.EFactura,
			func(c *cfe.CFE) { c.IdDoc.IVAalDia = 1 }, Footer{FechaEmisor: since, OmitIVAConstancia: true},
			[]string{NoIVAalDia}, nil},
		{"principal not al día (A-C17 2, V25)", cfe.ETicketCtaAjena, func(c *cfe.CFE) { c.IdDoc.IVAalDia = 2 }, Footer{FechaEmisor: since},
			[]string{"No IVA al día mandante"}, nil},
		{"neither al día (A-C17 3, V25)", cfe.ETicketCtaAjena, func(c *cfe.CFE) { c.IdDoc.IVAalDia = 3 }, Footer{FechaEmisor: since},
			[]string{"No IVA al día emisor y mandante"}, nil},
		{"Monotributo Social MIDES: no constancia", cfe.ETicket, func(c *cfe.CFE) { c.CAEData.CAEEspecial = 4 },
			Footer{FechaEmisor: since}, []string{"MONOTRIBUTO SOCIAL MIDES"}, []string{ConstanciaIVAalDia}},
	}
	t.Run("in DGI's order", func(t *testing.T) {
		// A roll is one column, so the extracted text keeps the order.
		order := []string{"Código de seguridad", "Fecha emisor: 01/10/2012",
			"Puede verificar comprobante en www.laesquina.com.uy/comprobantes", ConstanciaIVAalDia,
			"CAE Nº 90260000123", "Serie A del 1 al 1000", "Fecha de vencimiento"}
		for _, base := range []Base{Rollo, Rollo58} {
			text := pdfText(t, render(t, signedFixture(t, cfe.ETicket), Options{Template: Template{Base: base},
				Footer: Footer{FechaEmisor: since, WebURL: site}}), 1, 0)
			flat := strings.Join(strings.Fields(text), " ")
			at := 0
			for _, s := range order {
				i := strings.Index(flat[at:], s)
				if i < 0 {
					t.Fatalf("%s: %q missing or out of DGI's order %q:\n%s", base, s, order, text)
				}
				at += i + len(s)
			}
		}
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			doc := signedFixture(t, tt.typ)
			if tt.change != nil {
				c := fixture(tt.typ)
				tt.change(c)
				doc = signed(t, c)
			}
			for _, base := range Bases() {
				text := pdfText(t, render(t, doc, Options{Template: Template{Base: base}, Footer: tt.footer}), 1, 0)
				mustContain(t, string(base), text, tt.want...)
				for _, a := range tt.absent {
					if strings.Contains(text, a) {
						t.Errorf("%s shows %q", base, a)
					}
				}
			}
		})
	}
}

func TestRender_Legends(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		typ    cfe.Type
		change func(*cfe.CFE)
		want   []string
		absent []string
	}{
		{"al día with IVA", cfe.EFactura, func(*cfe.CFE) {}, []string{ConstanciaIVAalDia}, nil},
		{"not al día", cfe.EFactura, func(c *cfe.CFE) { c.IdDoc.IVAalDia = 1 }, []string{NoIVAalDia}, nil},
		{"own collection", cfe.ETicket, func(c *cfe.CFE) {
			c.IdDoc.IndCobPropia = 1
			for i := range c.Items {
				c.Items[i].IndFact = 6
			}
		}, []string{"e-Ticket Cobranza"}, nil},
		{"third-party payments", cfe.EFactura, func(c *cfe.CFE) { c.IdDoc.IndPagCta3ros = 1 },
			[]string{"Pagos por cuenta de terceros"}, nil},
		{"IVA mínimo", cfe.ETicket, func(c *cfe.CFE) { c.CAEData.CAEEspecial = 2 },
			[]string{"Contribuyente IVA MINIMO", ConstanciaIVAalDia}, nil},
		{"monotributo", cfe.ETicket, func(c *cfe.CFE) { c.CAEData.CAEEspecial = 3 },
			[]string{"MONOTRIBUTO"}, []string{ConstanciaIVAalDia}},
		{"exonerated", cfe.EFactura, func(c *cfe.CFE) { c.CAEData.CAEEspecial, c.CAEData.CausalCAEEsp = 1, 101 },
			[]string{"Contribuyente Exonerado", "Causal 101"}, nil},
		{"identified consumer", cfe.ETicket, func(c *cfe.CFE) {
			c.Receptor = &cfe.Receptor{TipoDocRecep: 3, CodPaisRecep: "UY", DocRecep: "12345672", RznSocRecep: "Ana Suárez"}
		}, []string{"CONSUMO FINAL", "C.I. 12345672", "Ana Suárez"}, nil},
		{"legal legend", cfe.EFactura, func(c *cfe.CFE) { c.IdDoc.InfoAdicionalDoc = "Exento por Ley 18.083" },
			[]string{"Exento por Ley 18.083"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := fixture(tt.typ)
			tt.change(c)
			doc := signed(t, c)
			for _, base := range Bases() {
				text := pdfText(t, render(t, doc, Options{Template: Template{Base: base}}), 1, 0)
				mustContain(t, string(base), text, tt.want...)
				for _, a := range tt.absent {
					if strings.Contains(text, a) {
						t.Errorf("%s shows %q", base, a)
					}
				}
			}
		})
	}
}

func TestRender_RejectsBadInput(t *testing.T) {
	t.Parallel()
	unsigned, err := cfe.MarshalXML(fixture(cfe.ETicket))
	if err != nil {
		t.Fatal(err)
	}
	doc := signedFixture(t, cfe.ETicket)
	tests := []struct {
		name string
		xml  []byte
		opts Options
	}{
		{"not XML", []byte("esto no es XML"), Options{}},
		{"not a CFE", []byte(`<Factura xmlns="http://cfe.dgi.gub.uy"/>`), Options{}},
		{"unsigned CFE", unsigned, Options{}},
		{"font too small", doc, Options{Template: Template{FontSize: 5}}},
		{"font too large", doc, Options{Template: Template{FontSize: 30}}},
		{"logo not an image", doc, Options{Template: Template{Logo: []byte("GIF89a?")}}},
		{"unknown base", doc, Options{Template: Template{Base: "Carta"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Render(tt.xml, tt.opts)
			var e *cfe.Error
			if !errors.As(err, &e) || e.Code != cfe.EINVALID || e.Message == "" {
				t.Fatalf("Render: %v, want EINVALID with a message", err)
			}
			if out != nil {
				t.Errorf("Render returned %d bytes with its error", len(out))
			}
		})
	}
}

// The same signed CFE always gives the same PDF, also when documents are
// rendered concurrently (the parsed fonts are shared).
func TestRender_DeterministicAndConcurrent(t *testing.T) {
	t.Parallel()
	types := []cfe.Type{cfe.ETicket, cfe.EFactura, cfe.EResguardo, cfe.ERemito}
	want := map[string][]byte{}
	for _, typ := range types {
		for _, base := range Bases() {
			want[typ.String()+string(base)] = render(t, signedFixture(t, typ), Options{Template: Template{Base: base}})
		}
	}
	var wg sync.WaitGroup
	for round := range 3 {
		for _, typ := range types {
			for _, base := range Bases() {
				wg.Go(func() {
					got, err := Render(signedFixture(t, typ), Options{Template: Template{Base: base}})
					if err != nil {
						t.Errorf("round %d %s %s: %v", round, typ, base, err)
						return
					}
					if !bytes.Equal(got, want[typ.String()+string(base)]) {
						t.Errorf("round %d %s %s: the PDF differs from the first rendering", round, typ, base)
					}
				})
			}
		}
	}
	wg.Wait()
}

// TestRender_NoIVAalDia: a CFE with A-C17 = 1 prints the code's meaning, "No
// IVA al día" (V24 print column I = P), once and where the constancia goes
// (below where to verify, above the CAE number), and never the constancia
// itself, in every template.
func TestRender_NoIVAalDia(t *testing.T) {
	t.Parallel()
	c := fixture(cfe.ETicket)
	c.IdDoc.IVAalDia = 1
	doc := signed(t, c)
	for _, base := range Bases() {
		text := pdfText(t, render(t, doc, Options{Template: Template{Base: base},
			Footer: Footer{FechaEmisor: cfe.Date{Year: 2012, Month: 10, Day: 1}}}), 1, 0)
		flat := strings.Join(strings.Fields(text), " ")
		if n := strings.Count(flat, NoIVAalDia); n != 1 {
			t.Errorf("%s: %q printed %d times, want once:\n%s", base, NoIVAalDia, n, text)
			continue
		}
		if strings.Count(flat, ConstanciaIVAalDia) != 1 {
			t.Errorf("%s: the constancia %q printed beside %q:\n%s", base, ConstanciaIVAalDia, NoIVAalDia, text)
		}
		if base != Rollo && base != Rollo58 {
			continue // A4's columns interleave in the extracted text; a roll is one column
		}
		verify, no, cae := strings.Index(flat, "Puede verificar"), strings.Index(flat, NoIVAalDia), strings.Index(flat, "CAE Nº")
		if verify >= no || no >= cae {
			t.Errorf("%s: %q is not between where to verify and the CAE number:\n%s", base, NoIVAalDia, text)
		}
	}
}
