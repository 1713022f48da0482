// Command xsdgen writes package cfe's table of DGI's XSD facets. It runs from
// `go generate ./cfe/` (see cfe/dgifacets.go):
//
//	xsdgen -xsd ../assets/xsd -o dgifacets_gen.go
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/cfe-agent/cfe-agent/cfe/internal/xsdgen"
)

func main() {
	xsd := flag.String("xsd", "../assets/xsd", "folder of DGI's XSD set")
	out := flag.String("o", xsdgen.Generated, "Go file to write")
	pkg := flag.String("pkg", "cfe", "package of the written file")
	flag.Parse()
	if err := xsdgen.WriteFile(*xsd, *pkg, *out); err != nil {
		fmt.Fprintln(os.Stderr, "xsdgen:", err)
		os.Exit(1)
	}
}
