package cfe

import (
	"os"
	"path/filepath"
	"testing"
)

// exampleCFEs maps and validates the requests in examples/*.json.
func exampleCFEs(b *testing.B) map[string]*CFE {
	b.Helper()
	files, err := filepath.Glob("../examples/*.json")
	if err != nil || len(files) == 0 {
		b.Fatalf("no examples: %v", err)
	}
	out := make(map[string]*CFE, len(files))
	for _, f := range files {
		body, err := os.Open(f)
		if err != nil {
			b.Fatal(err)
		}
		r, err := DecodeRequest(body)
		body.Close()
		if err != nil {
			b.Fatalf("%s: %v", f, err)
		}
		c, err := issue(r)
		if err != nil {
			b.Fatalf("%s: %v", f, err)
		}
		out[filepath.Base(f)] = c
	}
	return out
}

// BenchmarkCheckXSDFacets measures the XSD facet check alone on each example
// (numbers in BENCHMARKS.md; issue 14's budget for all its validation is
// 0.1 ms per CFE).
func BenchmarkCheckXSDFacets(b *testing.B) {
	for name, c := range exampleCFEs(b) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if fs := checkXSDFacets(c); len(fs) > 0 {
					b.Fatal(describeFields(fs))
				}
			}
		})
	}
}

// BenchmarkValidate measures the whole of Validate, facet check included.
func BenchmarkValidate(b *testing.B) {
	tax := DefaultTaxConfig()
	for name, c := range exampleCFEs(b) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := Validate(c, tax); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
