package pdf

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
)

func TestCatalog_Template(t *testing.T) {
	t.Parallel()
	logo := filepath.Join(t.TempDir(), "logo.png")
	if err := os.WriteFile(logo, pngLogo(t), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := NewCatalog([]TemplateConfig{{Name: "Mostrador", Base: "rollo58", LogoPath: logo,
		Legends: []string{"¡Gracias!"}, FontSize: 8, WebURL: " www.laesquina.com.uy "}})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]Base{"": Estandar, "estandar": Estandar, "ROLLO": Rollo, "Rollo58": Rollo58,
		"mostrador": Rollo58} {
		got, err := c.Template(name)
		if err != nil || got.Base != want {
			t.Errorf("Template(%q) = %v, %v; want base %s", name, got.Base, err, want)
		}
	}
	got, _ := c.Template("MOSTRADOR")
	if got.Name != "Mostrador" || len(got.Logo) == 0 || got.FontSize != 8 || got.WebURL != "www.laesquina.com.uy" ||
		!slices.Equal(got.Legends, []string{"¡Gracias!"}) {
		t.Errorf("custom template %+v", got)
	}
	_, err = c.Template("carta")
	var e *cfe.Error
	if !errors.As(err, &e) || e.Code != cfe.ENOTFOUND || e.Message == "" {
		t.Errorf("unknown template: %v, want ENOTFOUND", err)
	}
}

func TestNewCatalog_RejectsBadTemplates(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	text := filepath.Join(dir, "logo.png")
	if err := os.WriteFile(text, []byte("no soy una imagen"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := NewCatalog([]TemplateConfig{
		{Name: "", Base: "Rollo"},
		{Name: "rollo", Base: "Rollo"}, // a built-in name
		{Name: "a", Base: "Carta"},
		{Name: "b", Base: "Estandar", FontSize: 3},
		{Name: "c", Base: "Estandar", LogoPath: filepath.Join(dir, "no-existe.png")},
		{Name: "d", Base: "Estandar", LogoPath: text},
	})
	var e *cfe.Error
	if !errors.As(err, &e) || e.Code != cfe.EINVALID {
		t.Fatalf("NewCatalog: %v, want EINVALID", err)
	}
	var fields []string
	for _, f := range e.Fields {
		fields = append(fields, f.Campo)
	}
	want := []string{"templates[0].name", "templates.rollo.name", "templates.a.base", "templates.b.font_size",
		"templates.c.logo", "templates.d.logo"}
	if !slices.Equal(fields, want) {
		t.Errorf("fields %v, want %v", fields, want)
	}
}

func TestFace_WrapAndClean(t *testing.T) {
	t.Parallel()
	st := style{regular, 9}
	text := "Paquete de un kilo, molienda tradicional con palo, origen Brasil; " +
		"CódigoDeProductoMuyLargoQueNoCabeEnUnaLíneaDeLaColumna fin"
	for _, w := range []float64{15, 30, 70} {
		lines := st.face.wrap(text, st.size, w)
		joined := ""
		for _, l := range lines {
			if got := st.face.width(l, st.size); got > w+1e-9 {
				t.Errorf("width %g: line %q is %.2f mm wide", w, l, got)
			}
			joined += l
		}
		// Only spaces are dropped at the breaks.
		if want := removeSpaces(text); removeSpaces(joined) != want {
			t.Errorf("width %g: lines %q lose text", w, lines)
		}
	}
	if got := regular.clean("  Línea\tcon\ncontrol  y 😀 漢 ñ  "); got != "Línea con control y ? ? ñ" {
		t.Errorf("clean: %q", got)
	}
	if lines := regular.wrap(" \t ", 9, 50); lines != nil {
		t.Errorf("blank text wraps to %q, want no line", lines)
	}
}

func removeSpaces(s string) string {
	out := []rune{}
	for _, r := range s {
		if r != ' ' {
			out = append(out, r)
		}
	}
	return string(out)
}
