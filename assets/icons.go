package assets

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/png"
	"math"
	"sync"
)

// IconState is the condition the tray icon shows.
type IconState int

// The icon states, from good to bad.
const (
	IconOK      IconState = iota // green: the agent signs and nothing needs attention
	IconWarning                  // amber: the agent signs, but something needs attention soon
	IconError                    // red: the agent cannot sign
)

// iconSize is the side of the tray icons in pixels; tray hosts scale it.
const iconSize = 32

var iconColors = [...]color.NRGBA{
	IconOK:      {0x2e, 0x9e, 0x4f, 0xff},
	IconWarning: {0xe0, 0x9b, 0x13, 0xff},
	IconError:   {0xd0, 0x33, 0x2b, 0xff},
}

// testMarkColor is the test mode's badge: violet, a colour no state uses.
var testMarkColor = color.NRGBA{0x6a, 0x1b, 0x9a, 0xff}

// iconSet holds every icon: [test mode][state].
type iconSet struct{ png, ico [2][len(iconColors)][]byte }

// icons draws every icon once, on first use.
var icons = sync.OnceValue(func() iconSet {
	var set iconSet
	for test := range 2 {
		for s := range iconColors {
			set.png[test][s] = drawIcon(iconColors[s], test == 1)
			set.ico[test][s] = wrapICO(set.png[test][s], iconSize)
		}
	}
	return set
})

// IconPNG returns the tray icon for s as a PNG image.
func IconPNG(s IconState) []byte { return icons().png[0][clampState(s)] }

// IconICO returns the tray icon for s as a Windows ICO file (one PNG-encoded
// image, which Windows accepts since Vista).
func IconICO(s IconState) []byte { return icons().ico[0][clampState(s)] }

// TestModeIconPNG is IconPNG marked for test mode (a sandbox profile, whose
// receipts have no fiscal value): a violet badge with a white "P" (prueba)
// in the bottom right corner, over the state's colour.
func TestModeIconPNG(s IconState) []byte { return icons().png[1][clampState(s)] }

// TestModeIconICO is TestModeIconPNG as a Windows ICO file.
func TestModeIconICO(s IconState) []byte { return icons().ico[1][clampState(s)] }

// testGlyph is the badge's "P", 5 × 7 pixels.
var testGlyph = [7]string{"####.", "#...#", "#...#", "####.", "#....", "#....", "#...."}

// drawTestMark paints the test mode's badge: a violet square with a white
// rim in the bottom right corner (columns and rows 19..31) holding a "P".
func drawTestMark(img *image.NRGBA) {
	white := color.NRGBA{0xff, 0xff, 0xff, 0xff}
	for y := 19; y < iconSize; y++ {
		for x := 19; x < iconSize; x++ {
			if x == 19 || y == 19 || x == iconSize-1 || y == iconSize-1 {
				img.SetNRGBA(x, y, white)
				continue
			}
			img.SetNRGBA(x, y, testMarkColor)
		}
	}
	for dy, row := range testGlyph {
		for dx, c := range row {
			if c == '#' {
				img.SetNRGBA(23+dx, 22+dy, white)
			}
		}
	}
}

func clampState(s IconState) IconState { return min(max(s, IconOK), IconError) }

// drawIcon paints a filled disc of colour c holding a white receipt: a
// rectangle with a zigzag foot and three text lines; test adds the test
// mode's badge.
func drawIcon(c color.NRGBA, test bool) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, iconSize, iconSize))
	const center, radius = (iconSize - 1) / 2.0, iconSize/2.0 - 0.5
	white := color.NRGBA{0xff, 0xff, 0xff, 0xff}
	for y := range iconSize {
		for x := range iconSize {
			d := math.Hypot(float64(x)-center, float64(y)-center)
			switch {
			case d > radius:
				continue
			case d > radius-1: // anti-aliased rim
				a := uint8(255 * (radius - d))
				img.SetNRGBA(x, y, color.NRGBA{c.R, c.G, c.B, a})
			default:
				img.SetNRGBA(x, y, c)
			}
		}
	}
	// The receipt: columns 10..21, rows 7..24, with a zigzag bottom edge.
	for y := 7; y <= 24; y++ {
		for x := 10; x <= 21; x++ {
			if y >= 23 && (x-10)%4 < y-22 {
				continue // zigzag teeth
			}
			img.SetNRGBA(x, y, white)
		}
	}
	for _, row := range []int{11, 15, 19} {
		for x := 12; x <= 19; x++ {
			if row == 19 && x > 16 {
				break // a shorter last line
			}
			img.SetNRGBA(x, row, c)
		}
	}
	if test {
		drawTestMark(img)
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		panic(err) // encoding an in-memory image cannot fail
	}
	return buf.Bytes()
}

// wrapICO returns an ICO file holding one PNG image of side size.
func wrapICO(pngData []byte, size int) []byte {
	const headerLen, entryLen = 6, 16
	var buf bytes.Buffer
	w := func(v any) { _ = binary.Write(&buf, binary.LittleEndian, v) }
	w([3]uint16{0, 1, 1})    // reserved, type 1 (icon), one image
	dim := uint8(size % 256) // 0 means 256
	w([4]uint8{dim, dim, 0, 0})
	w([2]uint16{1, 32}) // colour planes, bits per pixel
	w([2]uint32{uint32(len(pngData)), headerLen + entryLen})
	buf.Write(pngData)
	return buf.Bytes()
}
