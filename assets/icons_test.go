package assets

import (
	"bytes"
	"encoding/binary"
	"image/color"
	"image/png"
	"testing"
)

func TestIcons(t *testing.T) {
	t.Parallel()
	for s := IconOK; s <= IconError; s++ {
		img, err := png.Decode(bytes.NewReader(IconPNG(s)))
		if err != nil {
			t.Fatal(err)
		}
		if b := img.Bounds(); b.Dx() != iconSize || b.Dy() != iconSize {
			t.Errorf("state %d: %v", s, b)
		}
		// Inside the disc, left of the receipt: the state's colour.
		r, g, b, _ := img.At(5, 16).RGBA()
		want := iconColors[s]
		if uint8(r>>8) != want.R || uint8(g>>8) != want.G || uint8(b>>8) != want.B {
			t.Errorf("state %d: pixel (5,16) = %d,%d,%d", s, r>>8, g>>8, b>>8)
		}
		// A corner is outside the disc: transparent.
		if _, _, _, a := img.At(0, 0).RGBA(); a != 0 {
			t.Errorf("state %d: corner not transparent", s)
		}
		ico := IconICO(s)
		var hdr struct {
			Reserved, Type, Count uint16
			W, H, Colors, _       uint8
			Planes, BPP           uint16
			Size, Offset          uint32
		}
		if err := binary.Read(bytes.NewReader(ico), binary.LittleEndian, &hdr); err != nil {
			t.Fatal(err)
		}
		if hdr.Type != 1 || hdr.Count != 1 || hdr.W != iconSize || int(hdr.Offset)+int(hdr.Size) != len(ico) ||
			!bytes.Equal(ico[hdr.Offset:], IconPNG(s)) {
			t.Errorf("state %d: ICO header %+v", s, hdr)
		}
	}
}

// TestTestModeIcons checks the test mode's icons: the state's colour where
// the plain icon has it, the violet badge with its white "P" in the bottom
// right corner, which the plain icon does not have.
func TestTestModeIcons(t *testing.T) {
	t.Parallel()
	for s := IconOK; s <= IconError; s++ {
		img, err := png.Decode(bytes.NewReader(TestModeIconPNG(s)))
		if err != nil {
			t.Fatal(err)
		}
		plain, err := png.Decode(bytes.NewReader(IconPNG(s)))
		if err != nil {
			t.Fatal(err)
		}
		rgb := func(x, y int, img interface{ At(x, y int) color.Color }) [3]uint8 {
			r, g, b, _ := img.At(x, y).RGBA()
			return [3]uint8{uint8(r >> 8), uint8(g >> 8), uint8(b >> 8)}
		}
		want := iconColors[s]
		if got := rgb(5, 16, img); got != [3]uint8{want.R, want.G, want.B} {
			t.Errorf("state %d: pixel (5,16) = %v, want the state's colour", s, got)
		}
		violet := [3]uint8{testMarkColor.R, testMarkColor.G, testMarkColor.B}
		if got := rgb(21, 29, img); got != violet {
			t.Errorf("state %d: badge pixel (21,29) = %v, want violet", s, got)
		}
		if got := rgb(23, 22, img); got != [3]uint8{0xff, 0xff, 0xff} {
			t.Errorf("state %d: the P's top left (23,22) = %v, want white", s, got)
		}
		if rgb(21, 29, plain) == violet {
			t.Errorf("state %d: the plain icon has the test badge", s)
		}
		if ico := TestModeIconICO(s); !bytes.HasSuffix(ico, TestModeIconPNG(s)) {
			t.Errorf("state %d: the test ICO does not hold the test PNG", s)
		}
	}
}
