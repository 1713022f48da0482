package escpos

import (
	"fmt"
	"math"

	"rsc.io/qr"
)

// DGI's size of the printed QR code (Formato de los CFE, Sello Digital): a
// side of 22 to 30 mm; the agent aims at 25 mm, as its PDF does.
const (
	qrMinMM    = 22.0
	qrMaxMM    = 30.0
	qrTargetMM = 25.0
	// qrClearMM is the clear margin DGI asks around the symbol.
	qrClearMM = 3.0
)

// maxModule is the largest module size GS ( k accepts, in dots.
const maxModule = 16

// qrModule returns the module size, in dots, that prints a QR code of size
// modules per side between 22 and 30 mm on a printer of dotsPerMM, as close
// to 25 mm as the printer's dots allow.
func qrModule(size int, dotsPerMM float64) (int, error) {
	best, bestOff := 0, math.Inf(1)
	for m := 1; m <= maxModule; m++ {
		side := float64(m*size) / dotsPerMM
		if side < qrMinMM || side > qrMaxMM {
			continue
		}
		if off := math.Abs(side - qrTargetMM); off < bestOff {
			best, bestOff = m, off
		}
	}
	if best == 0 {
		return 0, fmt.Errorf("no module size prints a QR code of %d modules between %g and %g mm at %.1f dots/mm",
			size, qrMinMM, qrMaxMM, dotsPerMM)
	}
	return best, nil
}

// qrBitmap draws code with module dots per module and a clear margin of
// quiet dots on every side, as rows of bytes for GS v 0.
func qrBitmap(code *qr.Code, module, quiet int) (bits []byte, widthBytes, height int) {
	side := code.Size*module + 2*quiet
	widthBytes = (side + 7) / 8
	bits = make([]byte, widthBytes*side)
	for y := 0; y < code.Size; y++ {
		for x := 0; x < code.Size; x++ {
			if !code.Black(x, y) {
				continue
			}
			for dy := 0; dy < module; dy++ {
				row := bits[(quiet+y*module+dy)*widthBytes:]
				for dx := 0; dx < module; dx++ {
					px := quiet + x*module + dx
					row[px/8] |= 0x80 >> (px % 8)
				}
			}
		}
	}
	return bits, widthBytes, side
}

// hasRealTime reports whether b holds a real-time command a printer would
// execute even inside image data: DLE EOT n, DLE ENQ n or DLE DC4 n.
func hasRealTime(b []byte) bool {
	for i := 0; i+1 < len(b); i++ {
		if b[i] == dle && (b[i+1] == eot || b[i+1] == 0x05 || b[i+1] == 0x14) {
			return true
		}
	}
	return false
}
