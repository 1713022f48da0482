package assets

import (
	"bytes"
	"encoding/binary"
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
