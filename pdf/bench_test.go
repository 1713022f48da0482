package pdf

import "testing"

// The benchmarks render DGI's e-Ticket A-1 (3 lines) as production does.
// Targets: Rollo under 4 ms, Estandar under 6 ms per document.

func benchmarkRender(b *testing.B, base Base, production bool) {
	doc := sampleCFE(b, "Sob_Ej_Mod_19072016__CFE_101_A1.xml")
	opts := Options{Template: Template{Base: base}, Production: production}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Render(doc, opts); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRenderRollo(b *testing.B)    { benchmarkRender(b, Rollo, true) }
func BenchmarkRenderRollo58(b *testing.B)  { benchmarkRender(b, Rollo58, true) }
func BenchmarkRenderEstandar(b *testing.B) { benchmarkRender(b, Estandar, true) }

// Outside production each page also carries the outlined watermark.
func BenchmarkRenderRolloTest(b *testing.B)    { benchmarkRender(b, Rollo, false) }
func BenchmarkRenderEstandarTest(b *testing.B) { benchmarkRender(b, Estandar, false) }
