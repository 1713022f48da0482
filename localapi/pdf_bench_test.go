package localapi_test

import (
	"net/http"
	"testing"
)

// The benchmarks measure POST /pdf end to end as a point-of-sale sees it:
// an HTTP request on loopback through the security pipeline, the e-Ticket
// read from a real bbolt store, rendered (sandbox: with the watermark), and
// written as one file by the directory printer; the PDF read back.

func benchmarkPDF(b *testing.B, variant string) {
	a := startPrintAgent(b, "sandbox")
	body := `{"uuid":"venta-0001","impresora":"cocina","variant":"` + variant + `"}`
	b.ReportAllocs()
	for b.Loop() {
		if resp, doc := a.print(b, body); resp.StatusCode != http.StatusOK {
			b.Fatalf("POST /pdf: %d %s", resp.StatusCode, doc)
		}
	}
}

func BenchmarkPDF_Rollo(b *testing.B)    { benchmarkPDF(b, "Rollo") }
func BenchmarkPDF_Estandar(b *testing.B) { benchmarkPDF(b, "Estandar") }
