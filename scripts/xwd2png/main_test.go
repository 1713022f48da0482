package main

import (
	"bytes"
	"encoding/binary"
	"image/color"
	"testing"
)

// xwd builds an X Window Dump of width × 1 pixels as Xvfb's xwd writes it:
// a header with a window name, no colour map, pixels of px bytes in
// little-endian order, each line padded to stride.
func xwd(pixels []uint32, bpp, px, stride int) []byte {
	var b bytes.Buffer
	name := []byte("xwdump\x00\x00")
	h := [25]uint32{uint32(100 + len(name)), 7, 2, 24, uint32(len(pixels)), 1, 0, 0, 32, 0, 8, uint32(bpp), uint32(stride), 5,
		0xff0000, 0x00ff00, 0x0000ff, 8, 256, 0, uint32(len(pixels)), 1, 0, 0, 0}
	_ = binary.Write(&b, binary.BigEndian, h)
	b.Write(name)
	line := make([]byte, stride)
	for i, p := range pixels {
		var le [4]byte
		binary.LittleEndian.PutUint32(le[:], p)
		copy(line[i*px:], le[:px])
	}
	b.Write(line)
	return b.Bytes()
}

// TestDecode reads 24-bit pixels packed in 3 bytes with a padded line (what
// Xvfb's xwd gives) and in 4 bytes, colour by colour.
func TestDecode(t *testing.T) {
	t.Parallel()
	pixels := []uint32{0xd0332b, 0x6a1b9a, 0xffffff}
	want := []color.NRGBA{{0xd0, 0x33, 0x2b, 0xff}, {0x6a, 0x1b, 0x9a, 0xff}, {0xff, 0xff, 0xff, 0xff}}
	for _, c := range []struct{ bpp, px, stride int }{{24, 3, 16}, {32, 4, 12}} {
		img, err := decode(bytes.NewReader(xwd(pixels, c.bpp, c.px, c.stride)))
		if err != nil {
			t.Fatalf("%d bits per pixel: %v", c.bpp, err)
		}
		for x, w := range want {
			if got := img.NRGBAAt(x, 0); got != w {
				t.Errorf("%d bits per pixel, pixel %d: %v, want %v", c.bpp, x, got, w)
			}
		}
	}
	if _, err := decode(bytes.NewReader(xwd(pixels, 16, 2, 8))); err == nil {
		t.Error("16 bits per pixel decoded; want an error")
	}
}
