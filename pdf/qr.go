package pdf

import "rsc.io/qr"

// QR sizes (V24, Sello Digital): at least 22 × 22 mm with a 3 mm clear
// margin, at most 30 × 30 mm with 5 mm.
const (
	qrMin    = 22.0
	qrMax    = 30.0
	qrMargin = 3.0
)

// encodeQR encodes the QR data with error correction M (15 %), enough for
// a printed receipt that may be creased, small enough to keep the modules
// large (about 0.5 mm at 25 mm for DGI's URL).
func encodeQR(data string) (*qr.Code, error) { return qr.Encode(data, qr.M) }

// qrRuns calls fn for every horizontal run of dark modules of code drawn in
// the square (x, y) of the given side: one rectangle per run instead of one
// per module. Runs overlap the next row by a hair so that no light seam
// shows between rows when the page is rasterised.
func qrRuns(code *qr.Code, x, y, side float64, fn func(x, y, w, h float64)) {
	m := side / float64(code.Size)
	for row := 0; row < code.Size; row++ {
		for col := 0; col < code.Size; {
			if !code.Black(col, row) {
				col++
				continue
			}
			start := col
			for col < code.Size && code.Black(col, row) {
				col++
			}
			h := m
			if row < code.Size-1 {
				h += m * 0.05
			}
			fn(x+float64(start)*m, y+float64(row)*m, float64(col-start)*m, h)
		}
	}
}
