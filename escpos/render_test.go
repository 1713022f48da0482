package escpos

import (
	"bytes"
	"errors"
	"fmt"
	"image/png"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
	"rsc.io/qr"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/pdf"
)

// printers are the paper widths and fonts the tests print on.
var printers = []Options{
	{PaperMM: 80, Columns: 48},
	{PaperMM: 80, Columns: 42},
	{PaperMM: 58},
}

// receiptOf is the printed content of a signed CFE with an adenda, a
// template legend and the footer data, outside production.
func receiptOf(t testing.TB, signedXML []byte) *pdf.Receipt {
	t.Helper()
	r, err := pdf.NewReceipt(signedXML, pdf.Options{
		Template: pdf.Template{Base: pdf.Rollo, Legends: []string{"Gracias por su compra"}},
		Adenda:   "Cambios dentro de 30 días con este ticket.\nAtendió: Begoña Núñez",
		Footer:   pdf.Footer{Resolucion: "1234/2016", WebURL: "https://www.almacen.com.uy"},
	})
	if err != nil {
		t.Fatalf("NewReceipt: %v", err)
	}
	return r
}

func render(t testing.TB, r *pdf.Receipt, o Options) []byte {
	t.Helper()
	b, err := Render(r, o)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return b
}

// TestRender_DGIElements decodes the receipt of every sample with
// escpos-tools on each paper: the text of every DGI element is there, and no
// line is wider than the paper's columns.
func TestRender_DGIElements(t *testing.T) {
	t.Parallel()
	for _, o := range printers {
		for _, name := range samples {
			t.Run(fmt.Sprintf("%dmm-%dcol/%s", o.PaperMM, max(o.Columns, 32), name[len(name)-14:]), func(t *testing.T) {
				r := receiptOf(t, sample(t, name))
				text := decodeText(t, render(t, r, o), charmap.CodePage858)
				mustContain(t, "the decoded receipt", text, receiptTexts(r)...)
				cols := max(o.Columns, 32)
				for i, line := range strings.Split(text, "\n") {
					if n := utf8.RuneCountInString(line); n > cols {
						t.Errorf("line %d has %d characters, more than %d: %q", i+1, n, cols, line)
					}
				}
			})
		}
	}
	t.Run("production has no test legend", func(t *testing.T) {
		doc := sample(t, samples[0])
		r, err := pdf.NewReceipt(doc, pdf.Options{Production: true})
		if err != nil {
			t.Fatal(err)
		}
		text := decodeText(t, render(t, r, Options{}), charmap.CodePage858)
		if strings.Contains(strings.Join(strings.Fields(text), " "), "sin valor fiscal") {
			t.Errorf("a production receipt carries the test legend:\n%s", text)
		}
		mustContain(t, "the production receipt", text, r.CAE, r.SecurityCode)
	})
	t.Run("a contingency receipt's copy says it is no fiscal document", func(t *testing.T) {
		// DGI's sample 281, as a keyed-in CFC's copy would print in production.
		r, err := pdf.NewReceipt(sample(t, "Sob_Ej_Mod_19072016__CFE_281_XA953001.xml"), pdf.Options{Production: true})
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Join(strings.Fields(decodeText(t, render(t, r, Options{}), charmap.CodePage858)), " ")
		if strings.Count(text, pdf.KeyedCopyText) != 2 || strings.Contains(text, "sin valor fiscal") {
			t.Errorf("want %q at the top and at the end, and no test legend:\n%s", pdf.KeyedCopyText, text)
		}
	})
}

// TestRender_NativeQR reads the GS ( k commands as escpos-tools parses
// them: the stored payload is DGI's URL, and the module size prints the
// symbol between 22 and 30 mm at the printer's density.
func TestRender_NativeQR(t *testing.T) {
	t.Parallel()
	for _, o := range []Options{{PaperMM: 80}, {PaperMM: 58}, {PaperMM: 80, DPI: 180}, {PaperMM: 80, DPI: 300}} {
		t.Run(fmt.Sprintf("%dmm-%ddpi", o.PaperMM, max(o.DPI, 203)), func(t *testing.T) {
			doc := sample(t, samples[0])
			want := dgiURL(t, doc)
			if !strings.HasPrefix(want, "https://www.efactura.dgi.gub.uy/consultaQR/cfe?") {
				t.Fatalf("unexpected DGI URL %q", want)
			}
			var payloads []string
			module, printed := 0, 0
			for _, c := range commands(t, render(t, receiptOf(t, doc), o)) {
				if c.class() != "Code2DDataCmd" {
					continue
				}
				// cn 0x31 is the QR code; fn 0x43 its module size, 0x50
				// stores the data (after m = 0x30), 0x51 prints it.
				if c.int("arg1") != 0x31 {
					t.Errorf("2D code cn = %#x, want 0x31 (QR)", c.int("arg1"))
				}
				data := c.sub().data(t)
				switch c.int("arg2") {
				case 0x43:
					module = int(data[0])
				case 0x50:
					payloads = append(payloads, string(bytes.TrimPrefix(data, []byte{0x30})))
				case 0x51:
					printed++
				}
			}
			if len(payloads) != 1 || payloads[0] != want {
				t.Fatalf("QR payloads %q, want [%q]", payloads, want)
			}
			if printed != 1 {
				t.Errorf("the QR code is printed %d times, want 1", printed)
			}
			code, err := qr.Encode(want, qr.M)
			if err != nil {
				t.Fatal(err)
			}
			dpi := max(o.DPI, 203)
			side := float64(module*code.Size) * 25.4 / float64(dpi)
			if side < 22 || side > 30 {
				t.Errorf("module %d dots × %d modules at %d dpi = %.1f mm, outside DGI's 22–30 mm", module,
					code.Size, dpi, side)
			}
		})
	}
}

// TestRender_RasterQR extracts the fallback's image with escimages and reads
// it with zbarimg: DGI's URL, at a size between 22 and 30 mm plus the clear
// margin.
func TestRender_RasterQR(t *testing.T) {
	t.Parallel()
	for _, o := range []Options{{PaperMM: 80, QR: QRRaster}, {PaperMM: 58, QR: QRRaster}} {
		t.Run(fmt.Sprintf("%dmm", o.PaperMM), func(t *testing.T) {
			doc := sample(t, samples[1])
			b := render(t, receiptOf(t, doc), o)
			for _, c := range commands(t, b) {
				if c.class() == "Code2DDataCmd" {
					t.Fatal("the raster fallback sends a GS ( k command")
				}
			}
			pngs := images(t, b)
			if len(pngs) != 1 {
				t.Fatalf("%d images, want 1", len(pngs))
			}
			if got, want := zbar(t, pngs[0]), dgiURL(t, doc); len(got) != 1 || got[0] != want {
				t.Errorf("zbarimg read %q, want [%q]", got, want)
			}
			// The image is the symbol (22 to 30 mm) and its clear margins
			// (3 mm, or 4 modules when they are wider): one pixel a dot.
			f, err := os.Open(pngs[0])
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			img, err := png.DecodeConfig(f)
			if err != nil {
				t.Fatal(err)
			}
			if mm := float64(img.Width) / 8; mm < 22+6 || mm > 30+12 {
				t.Errorf("raster image %d dots wide = %.1f mm at 8 dots/mm", img.Width, mm)
			}
		})
	}
}

// TestRender_CodePages prints Spanish text in each code page and reads it
// back through that page, with the ESC t number the printer expects.
func TestRender_CodePages(t *testing.T) {
	t.Parallel()
	r := receiptOf(t, sample(t, samples[0]))
	r.Adenda = "Ñandú, pingüino, ¿Dónde? ¡ÁÉÍÓÚ! Nº 5 – “ok”"
	for _, tc := range []struct {
		page  string
		table *charmap.Charmap
		n     int
		want  string
	}{
		{"cp858", charmap.CodePage858, 19, "Ñandú, pingüino, ¿Dónde? ¡ÁÉÍÓÚ! Nº 5 - \"ok\""},
		{"cp850", charmap.CodePage850, 2, "Ñandú, pingüino, ¿Dónde? ¡ÁÉÍÓÚ! Nº 5 - \"ok\""},
		{"cp437", charmap.CodePage437, 0, "Ñandú, pingüino, ¿Dónde? ¡AÉIOU! Nº 5 - \"ok\""},
	} {
		t.Run(tc.page, func(t *testing.T) {
			b := render(t, r, Options{CodePage: tc.page})
			mustContain(t, "the decoded receipt", decodeText(t, b, tc.table), tc.want)
			var tables []int
			for _, c := range commands(t, b) {
				if c.class() == "SelectCodeTableCmd" {
					tables = append(tables, c.int("arg"))
				}
			}
			if len(tables) != 1 || tables[0] != tc.n {
				t.Errorf("ESC t %v, want [%d]", tables, tc.n)
			}
		})
	}
	t.Run("code_table overrides the number", func(t *testing.T) {
		b := render(t, r, Options{CodePage: "cp858", CodeTable: 47})
		if !bytes.HasPrefix(b, []byte{esc, '@', esc, 't', 47}) {
			t.Errorf("starts % x", b[:5])
		}
	})
}

// TestRender_CutAndDrawer checks the end of the receipt as escpos-tools
// parses it: the cut asked for, and the drawer pulse only when asked.
func TestRender_CutAndDrawer(t *testing.T) {
	t.Parallel()
	r := receiptOf(t, sample(t, samples[0]))
	for _, tc := range []struct {
		o          Options
		cut        int // GS V m, 0 = none
		pulses     int
		lastIsFeed bool
	}{
		{Options{}, 66, 0, false},
		{Options{Cut: CutFull, DrawerKick: true}, 65, 1, false},
		{Options{Cut: CutNone, DrawerKick: true}, 0, 1, true},
	} {
		t.Run(fmt.Sprintf("%s-kick=%v", tc.o.Cut, tc.o.DrawerKick), func(t *testing.T) {
			cmds := commands(t, render(t, r, tc.o))
			var cuts []int
			pulses := 0
			for _, c := range cmds {
				switch c.class() {
				case "FeedAndCutCmd":
					cuts = append(cuts, c.int("arg1"))
				case "PulseCmd":
					pulses++
				}
			}
			switch {
			case tc.cut == 0 && len(cuts) != 0, tc.cut != 0 && (len(cuts) != 1 || cuts[0] != tc.cut):
				t.Errorf("cuts %v, want %d", cuts, tc.cut)
			}
			if pulses != tc.pulses {
				t.Errorf("%d drawer pulses, want %d", pulses, tc.pulses)
			}
			if last := cmds[len(cmds)-1].class(); tc.lastIsFeed != (last == "PrintAndFeedLinesCmd") {
				t.Errorf("last command %s", last)
			}
		})
	}
}

// TestOptions_Validate names each bad option.
func TestOptions_Validate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		o     Options
		field string
	}{
		{Options{}, ""},
		{Options{PaperMM: 58, Columns: 32, CodePage: "CP850", DPI: 180, QR: QRRaster, Cut: CutFull}, ""},
		{Options{PaperMM: 76}, "paper_mm"},
		{Options{PaperMM: 58, Columns: 48}, "columns"},
		{Options{Columns: 40}, "columns"},
		{Options{CodePage: "utf8"}, "code_page"},
		{Options{CodeTable: 300}, "code_table"},
		{Options{DPI: 72}, "dpi"},
		{Options{QR: "image"}, "qr"},
		{Options{Cut: "half"}, "cut"},
	} {
		err := tc.o.Validate()
		if tc.field == "" {
			if err != nil {
				t.Errorf("%+v: %v", tc.o, err)
			}
			continue
		}
		var fields []string
		if e := (*cfe.Error)(nil); errors.As(err, &e) && e.Code == cfe.EINVALID {
			for _, f := range e.Fields {
				fields = append(fields, f.Campo)
			}
		}
		if len(fields) != 1 || fields[0] != tc.field {
			t.Errorf("%+v: error %v, want EINVALID naming %s", tc.o, err, tc.field)
		}
	}
}

// TestQRModule checks the module size for the QR versions DGI's URLs take
// at common densities: always within 22–30 mm.
func TestQRModule(t *testing.T) {
	t.Parallel()
	for _, dpi := range []int{180, 203, 300} {
		for _, size := range []int{33, 37, 41, 45, 49} {
			m, err := qrModule(size, float64(dpi)/25.4)
			if err != nil {
				t.Errorf("%d modules at %d dpi: %v", size, dpi, err)
				continue
			}
			if side := float64(m*size) * 25.4 / float64(dpi); side < 22 || side > 30 {
				t.Errorf("%d modules at %d dpi: module %d gives %.1f mm", size, dpi, m, side)
			}
		}
	}
	if _, err := qrModule(21, 600/25.4); err == nil {
		t.Error("a 21-module code at 600 dpi cannot reach 22 mm with 16-dot modules, want an error")
	}
}

// TestRender_NoRealTimeCommands checks that no receipt, in either QR mode,
// carries a byte sequence a printer would take for a real-time command
// (DLE EOT, DLE ENQ, DLE DC4): the status queries the transports send
// would be answered out of turn.
func TestRender_NoRealTimeCommands(t *testing.T) {
	t.Parallel()
	for _, name := range samples {
		r := receiptOf(t, sample(t, name))
		for _, o := range []Options{{}, {QR: QRRaster}, {PaperMM: 58, QR: QRRaster}, {DPI: 180, QR: QRRaster}} {
			if b := render(t, r, o); hasRealTime(b) {
				t.Errorf("%s %+v: the receipt holds a real-time command", name, o)
			}
		}
	}
	if !hasRealTime([]byte{0xff, dle, eot, 1}) || hasRealTime([]byte{dle, 'a', eot}) {
		t.Error("hasRealTime misreads its input")
	}
}
