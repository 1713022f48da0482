package assets

import (
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
)

// Font is a TrueType font compiled into the binary.
type Font struct {
	Name string // a family name, unique among the fonts here
	TTF  []byte // the font file; shared, never to be modified
}

// The fonts of the printed representation.
var (
	Regular = Font{Name: "GoRegular", TTF: goregular.TTF}
	Bold    = Font{Name: "GoBold", TTF: gobold.TTF}
)
