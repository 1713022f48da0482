package escpos

import (
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/unicode/norm"
)

// Command bytes (Epson ESC/POS Application Programming Guide).
const (
	esc = 0x1b
	gs  = 0x1d
	dle = 0x10
	eot = 0x04
	lf  = 0x0a
)

// Justifications of ESC a.
const (
	alignLeft   = 0
	alignCenter = 1
	alignRight  = 2
)

// encoder appends ESC/POS commands and text to a buffer.
type encoder struct {
	buf   []byte
	table *charmap.Charmap
}

// init resets the printer (ESC @) and selects the code table (ESC t n).
func (e *encoder) init(codeTable int) {
	e.buf = append(e.buf, esc, '@', esc, 't', byte(codeTable))
}

// align sets the justification of the following lines (ESC a n).
func (e *encoder) align(a byte) { e.buf = append(e.buf, esc, 'a', a) }

// bold turns emphasis on or off (ESC E n).
func (e *encoder) bold(on bool) { e.buf = append(e.buf, esc, 'E', boolByte(on)) }

// tall selects double-height characters, or the normal size (GS ! n).
func (e *encoder) tall(on bool) {
	n := byte(0)
	if on {
		n = 0x01
	}
	e.buf = append(e.buf, gs, '!', n)
}

// line writes one line of text and a line feed.
func (e *encoder) line(s string) {
	e.text(s)
	e.buf = append(e.buf, lf)
}

// text writes s in the printer's code page. A character the code page lacks
// is written without its accent when that one exists (ő → o), else as "?";
// control characters become spaces, so that text never turns into commands.
func (e *encoder) text(s string) {
	for _, r := range s {
		switch {
		case r < 0x20 || r == 0x7f:
			e.buf = append(e.buf, ' ')
		case r < 0x7f:
			e.buf = append(e.buf, byte(r))
		default:
			e.buf = append(e.buf, e.encodeRune(r))
		}
	}
}

// encodeRune is r in the code page, or its closest substitute.
func (e *encoder) encodeRune(r rune) byte {
	if b, ok := e.table.EncodeRune(r); ok && b >= 0x80 {
		return b
	}
	if sub, ok := substitutes[r]; ok {
		return sub
	}
	var tmp [utf8.UTFMax]byte
	d := norm.NFD.Bytes(tmp[:utf8.EncodeRune(tmp[:], r)])
	if base, _ := utf8.DecodeRune(d); base != r && base < 0x7f && base >= 0x20 {
		return byte(base)
	}
	return '?'
}

// substitutes are ASCII stand-ins for punctuation that code pages lack.
var substitutes = map[rune]byte{
	'‘': '\'', '’': '\'', '‚': ',', '“': '"', '”': '"', '„': '"', '–': '-', '—': '-', '‐': '-', '−': '-',
	'…': '.', '•': '*', '\u00a0': ' ', '\u2009': ' ', '\u202f': ' ',
}

// feed prints and feeds n lines (ESC d n).
func (e *encoder) feed(n int) { e.buf = append(e.buf, esc, 'd', byte(n)) }

// qr prints data as a QR code by the printer's 2D-code commands (GS ( k):
// model 2, module size dots, error correction M, then store and print.
func (e *encoder) qr(data string, module int) {
	e.buf = append(e.buf,
		gs, '(', 'k', 4, 0, 0x31, 0x41, 0x32, 0x00, // model 2
		gs, '(', 'k', 3, 0, 0x31, 0x43, byte(module), // module size
		gs, '(', 'k', 3, 0, 0x31, 0x45, 0x31, // error correction M (15 %)
	)
	n := len(data) + 3
	e.buf = append(e.buf, gs, '(', 'k', byte(n), byte(n>>8), 0x31, 0x50, 0x30)
	e.buf = append(e.buf, data...)
	e.buf = append(e.buf, gs, '(', 'k', 3, 0, 0x31, 0x51, 0x30) // print the stored symbol
}

// raster prints a 1-bit image (GS v 0, normal density): rows of
// widthBytes bytes, most significant bit leftmost, 1 = black.
func (e *encoder) raster(bits []byte, widthBytes, height int) {
	e.buf = append(e.buf, gs, 'v', '0', 0, byte(widthBytes), byte(widthBytes>>8), byte(height), byte(height>>8))
	e.buf = append(e.buf, bits...)
}

// cut feeds the paper to the cutter and cuts it (GS V m n, function B).
func (e *encoder) cut(c CutMode) {
	switch c {
	case CutFull:
		e.buf = append(e.buf, gs, 'V', 65, 3)
	case CutPartial:
		e.buf = append(e.buf, gs, 'V', 66, 3)
	default:
		e.feed(4)
	}
}

// kick pulses the cash drawer's pin 2 for 50 ms on, 500 ms off (ESC p).
func (e *encoder) kick() { e.buf = append(e.buf, esc, 'p', 0, 25, 250) }

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}
