package cfe

import "testing"

// benchRequest is an e-Ticket of n lines.
func benchRequest(n int) *Request {
	r := validRequest(ETicket)
	r.CFE.Detalles = lines(r, n)
	r.CFE.Receptor = &RequestReceptor{TipoDocumento: 3, CodigoPais: "UY", Documento: "12345672"}
	return r
}

// BenchmarkToCFEAndValidate measures ToCFE and Validate, what the issuer runs on a
// request before numbering, for 1 and 700 lines.
func BenchmarkToCFEAndValidate(b *testing.B) {
	for _, n := range []int{1, 700} {
		b.Run(itoa(int64(n))+"_lines", func(b *testing.B) {
			r := benchRequest(n)
			for b.Loop() {
				c, err := r.ToCFE(testParams())
				if err == nil {
					err = Validate(c, DefaultTaxConfig())
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCheckCAE measures the check store.ReserveFor runs per candidate
// range while it holds the store's lock.
func BenchmarkCheckCAE(b *testing.B) {
	cae := CAEData{CAEID: "90269999990", DNro: 1, HNro: 100, FecVenc: Date{2027, 12, 31}, CAEEspecial: 1, CausalCAEEsp: 1}
	for _, n := range []int{1, 700} {
		b.Run(itoa(int64(n))+"_lines", func(b *testing.B) {
			r := benchRequest(n)
			for i := range r.CFE.Detalles {
				r.CFE.Detalles[i].IndicadorFacturacion = indExento
			}
			c, err := r.ToCFE(testParams())
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if err := CheckCAE(c, cae); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
