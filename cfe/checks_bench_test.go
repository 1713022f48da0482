package cfe

import (
	"bytes"
	"encoding/json"
	"testing"
)

// BenchmarkChecksBeforeNumbering is every check a signing request passes
// before a number is reserved, as the issuer runs them: decoding (with the
// UTF-8 rule), the document, DGI's rules and the XSD facets, over a realistic
// request of every electronic CFE type in turn. ns/op is per CFE.
//
//	go test -run '^$' -bench ChecksBeforeNumbering -benchmem ./cfe/
func BenchmarkChecksBeforeNumbering(b *testing.B) {
	var bodies [][]byte
	for _, typ := range ElectronicTypes() {
		body, err := json.Marshal(validRequest(typ))
		if err != nil {
			b.Fatal(err)
		}
		bodies = append(bodies, body)
	}
	tax := DefaultTaxConfig()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		req, err := DecodeRequest(bytes.NewReader(bodies[i%len(bodies)]))
		if err != nil {
			b.Fatal(err)
		}
		c, err := req.ToCFE(testParams())
		if err != nil {
			b.Fatal(err)
		}
		if err := Validate(c, tax); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
