package assets

import (
	"embed"
	"io/fs"
	"os"
	"path/filepath"
)

//go:embed xsd/*.xsd
var xsdFS embed.FS

// Schema file names of DGI's entry points.
const (
	SchemaCFE = "CFEDGI.xsd" // a standalone signed CFE
	SchemaCAE = "CAE.xsd"    // a DGI CAE file
)

// WriteSchemas writes DGI's embedded XSD set into dir (for xmllint) and returns dir.
func WriteSchemas(dir string) (string, error) {
	entries, err := fs.ReadDir(xsdFS, "xsd")
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		b, err := xsdFS.ReadFile("xsd/" + e.Name())
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			return "", err
		}
	}
	return dir, nil
}
