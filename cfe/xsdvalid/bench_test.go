package xsdvalid_test

import (
	"testing"

	"github.com/cfe-agent/cfe-agent/assets"
	"github.com/cfe-agent/cfe-agent/cfe/xsdvalid"
)

// BenchmarkValidate_signedETicket validates the e-Ticket the agent signs from
// examples/e-ticket.json against CFEDGI.xsd (parse and validation).
func BenchmarkValidate_signedETicket(b *testing.B) {
	var x []byte
	for _, d := range signedExamples(b) {
		if d.name == "example-e-ticket.xml" {
			x = d.xml
		}
	}
	if x == nil {
		b.Fatal("no example-e-ticket.xml")
	}
	s := schema(b, assets.SchemaCFE)
	b.SetBytes(int64(len(x)))
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Validate(x); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoad_DGI loads CFEDGI.xsd and what it includes and imports, as
// verify does once per schema.
func BenchmarkLoad_DGI(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := xsdvalid.Load(assets.SchemaCFE, assets.ReadSchema); err != nil {
			b.Fatal(err)
		}
	}
}
