// Command xwd2png converts a screenshot taken with xwd (X Window Dump, a
// ZPixmap of 24-bit colour in 3 or 4 bytes a pixel, as Xvfb's 24-bit
// screens give) to PNG, for
// scripts/tray-screenshots.sh: xwd2png < shot.xwd > shot.png. It can cut a
// rectangle out: xwd2png -crop X,Y,W,H.
package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math/bits"
	"os"
)

func main() {
	crop := flag.String("crop", "", "X,Y,W,H: keep only this rectangle")
	flag.Parse()
	img, err := decode(bufio.NewReader(os.Stdin))
	if err == nil && *crop != "" {
		var x, y, w, h int
		if _, err = fmt.Sscanf(*crop, "%d,%d,%d,%d", &x, &y, &w, &h); err == nil {
			img = img.SubImage(image.Rect(x, y, x+w, y+h)).(*image.NRGBA)
		}
	}
	if err == nil {
		err = png.Encode(os.Stdout, img)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "xwd2png:", err)
		os.Exit(1)
	}
}

// decode reads an XWD file (version 7, ZPixmap, 24 or 32 bits per pixel,
// each line padded to bytes_per_line).
func decode(r io.Reader) (*image.NRGBA, error) {
	var h [25]uint32
	if err := binary.Read(r, binary.BigEndian, &h); err != nil {
		return nil, err
	}
	size, version, format, width, height, order, bpp, stride := h[0], h[1], h[2], h[4], h[5], h[7], h[11], h[12]
	masks := [3]uint32{h[14], h[15], h[16]}
	ncolors := h[19]
	if version != 7 || format != 2 || (bpp != 24 && bpp != 32) || size < 100 || width == 0 {
		return nil, errors.New("not an XWD ZPixmap of 24 or 32 bits per pixel")
	}
	px := int(bpp / 8)
	if uint32(px)*width > stride {
		return nil, fmt.Errorf("%d bytes a line for %d pixels of %d bytes", stride, width, px)
	}
	if _, err := io.CopyN(io.Discard, r, int64(size-100)+int64(ncolors)*12); err != nil {
		return nil, err
	}
	img := image.NewNRGBA(image.Rect(0, 0, int(width), int(height)))
	line := make([]byte, stride)
	for y := range int(height) {
		if _, err := io.ReadFull(r, line); err != nil {
			return nil, err
		}
		for x := range int(width) {
			var p [4]byte
			copy(p[:], line[px*x:px*x+px])
			v := binary.LittleEndian.Uint32(p[:])
			if order == 1 {
				v = binary.BigEndian.Uint32(p[:]) >> (8 * (4 - px))
			}
			var c [3]uint8
			for i, m := range masks {
				c[i] = uint8((v & m) >> bits.TrailingZeros32(m))
			}
			img.SetNRGBA(x, y, color.NRGBA{c[0], c[1], c[2], 0xff})
		}
	}
	return img, nil
}
