package pdf

import (
	"bytes"
	"fmt"
	"image"
	_ "image/jpeg" // logos may be JPEG
	_ "image/png"  // or PNG
	"os"
	"strings"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// Base is a built-in layout of the printed representation.
type Base string

// The built-in layouts.
const (
	// Estandar is an A4 sheet: several pages when the lines need them, each
	// with the header, the Sello Digital and "Página x de y"; the footer on
	// the last page only; the running sum carried between pages
	// ("Transporte").
	Estandar Base = "Estandar"
	// Rollo is an 80 mm thermal roll (72 mm printable; content is kept
	// 70 mm wide to respect DGI's 5 mm margins); the page is as long as
	// the content (at least DGI's minimum of 150 mm).
	Rollo Base = "Rollo"
	// Rollo58 is a 58 mm thermal roll (48 mm printable and used).
	Rollo58 Base = "Rollo58"
)

// Bases lists the built-in layouts.
func Bases() []Base { return []Base{Estandar, Rollo, Rollo58} }

// Font sizes a template may ask for, in points: below 7 the characters
// would be smaller than DGI's 2 mm.
const (
	MinFontSize = 7.0
	MaxFontSize = 14.0
)

// Template is a layout with the company's choices. The zero Template is the
// plain Estandar layout.
type Template struct {
	Name     string   // the name a request uses (FormatoRepImpresa / variant)
	Base     Base     // the layout; "" means Estandar
	Logo     []byte   // PNG or JPEG printed on top (at most 1/5 of the document)
	Legends  []string // extra lines printed at the end of the body
	FontSize float64  // body text size in points; 0 means the layout's default
	WebURL   string   // where e-Tickets are verified; overrides Options.WebURL
}

// TemplateConfig describes a custom template as configuration holds it.
type TemplateConfig struct {
	Name     string
	Base     string // Estandar, Rollo or Rollo58
	LogoPath string // a PNG or JPEG file
	Legends  []string
	FontSize float64
	WebURL   string
}

// Catalog resolves template names: the built-in layouts under their own
// names, and the company's custom templates. It is safe for concurrent use
// (it is never modified after NewCatalog).
type Catalog struct {
	byName map[string]Template
}

// NewCatalog validates custom templates and reads their logos. It returns
// EINVALID, naming each bad field (templates.<name>.<field>), when a name is
// missing or repeated, a base is unknown, a logo cannot be read or is not a
// PNG or JPEG image, or a font size is out of range.
func NewCatalog(custom []TemplateConfig) (*Catalog, error) {
	c := &Catalog{byName: make(map[string]Template, len(custom)+3)}
	for _, b := range Bases() {
		c.byName[strings.ToLower(string(b))] = Template{Name: string(b), Base: b}
	}
	var bad []cfe.FieldError
	for i, tc := range custom {
		at := fmt.Sprintf("templates[%d]", i)
		if name := strings.TrimSpace(tc.Name); name != "" {
			at = "templates." + name
		}
		fail := func(field, msg string) {
			bad = append(bad, cfe.FieldError{Campo: at + "." + field, Mensaje: msg})
		}
		t := Template{Name: strings.TrimSpace(tc.Name), Legends: tc.Legends, FontSize: tc.FontSize,
			WebURL: strings.TrimSpace(tc.WebURL)}
		key := strings.ToLower(t.Name)
		switch _, taken := c.byName[key]; {
		case t.Name == "":
			fail("name", "es obligatorio")
		case taken:
			fail("name", fmt.Sprintf("%q ya existe (los nombres no distinguen mayúsculas)", t.Name))
		}
		base, ok := baseNamed(tc.Base)
		if !ok {
			fail("base", fmt.Sprintf("%q no es una plantilla base: use Estandar, Rollo o Rollo58", tc.Base))
		}
		t.Base = base
		if t.FontSize != 0 && (t.FontSize < MinFontSize || t.FontSize > MaxFontSize) {
			fail("font_size", fmt.Sprintf("debe estar entre %g y %g puntos", MinFontSize, MaxFontSize))
		}
		if tc.LogoPath != "" {
			logo, err := readLogo(tc.LogoPath)
			if err != nil {
				fail("logo", err.Error())
			}
			t.Logo = logo
		}
		c.byName[key] = t
	}
	if len(bad) > 0 {
		return nil, cfe.Invalid("pdf.NewCatalog", bad...)
	}
	return c, nil
}

// Template returns the template of that name (case-insensitive); "" means
// Estandar. It returns ENOTFOUND for a name that is neither built in nor
// configured.
func (c *Catalog) Template(name string) (Template, error) {
	if strings.TrimSpace(name) == "" {
		name = string(Estandar)
	}
	t, ok := c.byName[strings.ToLower(strings.TrimSpace(name))]
	if !ok {
		return Template{}, &cfe.Error{Code: cfe.ENOTFOUND, Op: "pdf.Catalog.Template",
			Message: fmt.Sprintf("la plantilla de impresión %q no existe", name)}
	}
	return t, nil
}

func baseNamed(s string) (Base, bool) {
	for _, b := range Bases() {
		if strings.EqualFold(strings.TrimSpace(s), string(b)) {
			return b, true
		}
	}
	return "", false
}

// readLogo reads a logo file and checks that it is a PNG or JPEG image.
func readLogo(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("no se pudo leer %s", path)
	}
	if err := checkLogo(b); err != nil {
		return nil, err
	}
	return b, nil
}

func checkLogo(b []byte) error {
	cfg, format, err := image.DecodeConfig(bytes.NewReader(b))
	if err != nil || (format != "png" && format != "jpeg") {
		return fmt.Errorf("el logo debe ser una imagen PNG o JPEG")
	}
	if cfg.Width == 0 || cfg.Height == 0 {
		return fmt.Errorf("el logo no tiene tamaño")
	}
	return nil
}
