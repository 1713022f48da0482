package pdf

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// TestRender_DocsImages refreshes the pictures of docs/ (pdftoppm at 110
// dpi) when CFE_UPDATE_DOCS=1: an e-Ticket on an 80 mm roll and on A4 as
// production prints them, and a 58 mm roll printed outside production.
func TestRender_DocsImages(t *testing.T) {
	t.Parallel()
	if os.Getenv("CFE_UPDATE_DOCS") != "1" {
		t.Skip("set CFE_UPDATE_DOCS=1 to refresh docs/*.png")
	}
	ppm := testtool.Require(t, "pdftoppm")
	c := fixture(cfe.ETicket)
	c.Items[0].DscItem = "Paquete de 1 kg, molienda tradicional"
	c.MediosPago = []cfe.MedioPago{{NroLinMP: 1, GlosaMP: "Efectivo", ValorPago: num("600")}}
	doc := signed(t, c)
	opts := Options{Adenda: "Cliente frecuente Nº 1234\nPuntos acumulados: 536", Footer: Footer{WebURL: "https://www.laesquina.com.uy", FechaEmisor: cfe.Date{Year: 2012, Month: 10, Day: 1}},
		Template: Template{Legends: []string{"¡Gracias por su compra!"}}}
	docs := filepath.Join(testtool.RepoRoot(t), "docs")
	for name, o := range map[string]struct {
		base       Base
		production bool
	}{
		"pdf-rollo":          {Rollo, true},
		"pdf-estandar":       {Estandar, true},
		"pdf-rollo58-prueba": {Rollo58, false},
	} {
		opts.Template.Base, opts.Production = o.base, o.production
		f := writeTemp(t, name+".pdf", render(t, doc, opts))
		out := filepath.Join(docs, name)
		if msg, err := exec.Command(ppm, "-png", "-r", "110", "-singlefile", f, out).CombinedOutput(); err != nil {
			t.Fatalf("pdftoppm: %v\n%s", err, msg)
		}
	}
}
