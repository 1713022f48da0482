package escpos

import (
	"fmt"
	"strings"

	"golang.org/x/text/encoding/charmap"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// Options describe one printer: its paper, characters and commands.
type Options struct {
	// PaperMM is the roll's width: 80 or 58 (0 means 80).
	PaperMM int
	// Columns is the characters per line of the printer's font A: 48 or 42
	// on 80 mm paper, 32 on 58 mm (0 means 48 and 32).
	Columns int
	// CodePage is the printer's character table for text beyond ASCII:
	// cp858 (default), cp850, cp437 or cp1252.
	CodePage string
	// CodeTable is the number ESC t selects CodePage with on this printer;
	// 0 means Epson's number for it (cp858 19, cp850 2, cp437 0, cp1252 16).
	CodeTable int
	// DPI is the printer's dot density (0 means 203, 8 dots per mm); it
	// sizes the QR code to DGI's 22 to 30 mm.
	DPI int
	// QR is how the QR code is printed: QRNative (the printer's GS ( k
	// command, default) or QRRaster (an image, for printers without it).
	QR QRMode
	// Cut is the cut at the end of each copy: CutPartial (default),
	// CutFull or CutNone.
	Cut CutMode
	// DrawerKick opens the cash drawer (pulse on pin 2) after the receipt.
	DrawerKick bool
}

// QRMode is how the QR code is printed.
type QRMode string

// The QR modes.
const (
	QRNative QRMode = "native" // the printer's 2D-code command (GS ( k)
	QRRaster QRMode = "raster" // a raster image (GS v 0)
)

// CutMode is the cut at the end of a receipt.
type CutMode string

// The cuts.
const (
	CutPartial CutMode = "partial"
	CutFull    CutMode = "full"
	CutNone    CutMode = "none"
)

// codePages are the code pages a printer may be told to use, with Epson's
// ESC t number for each.
var codePages = map[string]struct {
	table *charmap.Charmap
	epson int
}{
	"cp858":  {charmap.CodePage858, 19},
	"cp850":  {charmap.CodePage850, 2},
	"cp437":  {charmap.CodePage437, 0},
	"cp1252": {charmap.Windows1252, 16},
}

// CodePages lists the code page names Options accept.
func CodePages() []string { return []string{"cp858", "cp850", "cp437", "cp1252"} }

// normalize returns o with its defaults filled in, or EINVALID naming each
// bad option (paper_mm, columns, code_page, code_table, dpi, qr, cut).
func (o Options) normalize() (Options, error) {
	var bad []cfe.FieldError
	fail := func(field, format string, args ...any) {
		bad = append(bad, cfe.FieldError{Campo: field, Mensaje: fmt.Sprintf(format, args...)})
	}
	if o.PaperMM == 0 {
		o.PaperMM = 80
	}
	switch o.PaperMM {
	case 80:
		if o.Columns == 0 {
			o.Columns = 48
		}
		if o.Columns != 48 && o.Columns != 42 {
			fail("columns", "en papel de 80 mm se espera 48 o 42 columnas")
		}
	case 58:
		if o.Columns == 0 {
			o.Columns = 32
		}
		if o.Columns != 32 {
			fail("columns", "en papel de 58 mm se espera 32 columnas")
		}
	default:
		fail("paper_mm", "se espera 80 o 58 (milímetros)")
	}
	o.CodePage = strings.ToLower(strings.TrimSpace(o.CodePage))
	if o.CodePage == "" {
		o.CodePage = "cp858"
	}
	if _, ok := codePages[o.CodePage]; !ok {
		fail("code_page", "se espera %s", strings.Join(CodePages(), ", "))
	}
	if o.CodeTable < 0 || o.CodeTable > 255 {
		fail("code_table", "debe estar entre 0 y 255")
	}
	if o.DPI == 0 {
		o.DPI = 203
	}
	if o.DPI < 150 || o.DPI > 600 {
		fail("dpi", "debe estar entre 150 y 600 puntos por pulgada")
	}
	if o.QR == "" {
		o.QR = QRNative
	}
	if o.QR != QRNative && o.QR != QRRaster {
		fail("qr", "se espera %s o %s", QRNative, QRRaster)
	}
	if o.Cut == "" {
		o.Cut = CutPartial
	}
	if o.Cut != CutPartial && o.Cut != CutFull && o.Cut != CutNone {
		fail("cut", "se espera %s, %s o %s", CutPartial, CutFull, CutNone)
	}
	if len(bad) > 0 {
		return o, cfe.Invalid("escpos.Options", bad...)
	}
	return o, nil
}

// Validate returns EINVALID naming each bad option, or nil.
func (o Options) Validate() error {
	_, err := o.normalize()
	return err
}

// printableMM is the width a thermal head prints on a roll: 72 mm of 80,
// 48 mm of 58.
func (o Options) printableMM() float64 {
	if o.PaperMM == 58 {
		return 48
	}
	return 72
}

// dotsPerMM is the printer's dot density.
func (o Options) dotsPerMM() float64 { return float64(o.DPI) / 25.4 }
