package assets

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/beevik/etree"
)

//go:embed xsd/*.xsd
var xsdFS embed.FS

// Schema file names of DGI's entry points.
const (
	SchemaCFE = "CFEDGI.xsd" // a standalone signed CFE
	SchemaCAE = "CAE.xsd"    // a DGI CAE file
	// SchemaReport is a daily report (Reporte), SchemaEnvelope an envelope
	// of CFEs sent to DGI (EnvioCFE).
	SchemaReport   = "ReporteDiarioCFE.xsd"
	SchemaEnvelope = "EnvioCFE.xsd"
	// SchemaEnvelopeReceiver is an envelope of CFEs sent to an electronic
	// receiver (EnvioCFE_entreEmpresas, each CFE in a CFE_Adenda).
	SchemaEnvelopeReceiver = "EnvioCFE_entreEmpresas.xsd"
	// DGI's acknowledgements: of an envelope (ACKSobre), of its CFEs
	// (ACKCFE) and of a daily report (ACKRepDiario), which a DGI client
	// checks every answer against.
	SchemaACKSobre  = "ACKSobre.xsd"
	SchemaACKCFE    = "ACKCFE_DGI.xsd"
	SchemaACKReport = "ACKRepDiario.xsd"
	// SchemaCAE2012 is for CAE files of DGI's first layout (they declare
	// CAE_v1.1.xsd, 2012), which had no TA (Tipo de Autorización) in DA. DGI
	// does not publish that schema any more: WriteSchemas derives it from
	// CAE.xsd by leaving TA out, the one element such a file lacks (DGI's
	// signed 2012 sample in shared/dgi/samples).
	SchemaCAE2012 = "CAE-2012.xsd"
)

// WriteSchemas writes DGI's embedded XSD set into dir (for xmllint), with the
// derived SchemaCAE2012, and returns dir.
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
	if err := writeCAE2012(dir); err != nil {
		return "", fmt.Errorf("deriving %s: %w", SchemaCAE2012, err)
	}
	return dir, nil
}

// caeType2012 is the derived type file SchemaCAE2012 includes.
const caeType2012 = "CAEType-2012.xsd"

// writeCAE2012 writes SchemaCAE2012 and its type file into dir: CAE.xsd and
// CAEType.xsd with the element TA of DA removed.
func writeCAE2012(dir string) error {
	files, err := cae2012()
	if err != nil {
		return err
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// cae2012 derives SchemaCAE2012 and its type file, by name.
func cae2012() (map[string][]byte, error) {
	types, err := readSchema("CAEType.xsd")
	if err != nil {
		return nil, err
	}
	ta := types.FindElement(`//complexType[@name='CAEdefType']//element[@name='DA']//element[@name='TA']`)
	if ta == nil {
		return nil, fmt.Errorf("CAEType.xsd has no element TA in DA")
	}
	ta.Parent().RemoveChild(ta)
	typesXML, err := types.WriteToBytes()
	if err != nil {
		return nil, err
	}
	top, err := readSchema(SchemaCAE)
	if err != nil {
		return nil, err
	}
	inc := top.FindElement(`/schema/include[@schemaLocation='CAEType.xsd']`)
	if inc == nil {
		return nil, fmt.Errorf("%s does not include CAEType.xsd", SchemaCAE)
	}
	inc.CreateAttr("schemaLocation", caeType2012)
	topXML, err := top.WriteToBytes()
	if err != nil {
		return nil, err
	}
	return map[string][]byte{caeType2012: typesXML, SchemaCAE2012: topXML}, nil
}

// ReadSchema returns the schema file name of the set WriteSchemas writes
// (DGI's embedded files and the derived SchemaCAE2012 with its type file).
func ReadSchema(name string) ([]byte, error) {
	if name == SchemaCAE2012 || name == caeType2012 {
		files, err := cae2012()
		if err != nil {
			return nil, fmt.Errorf("deriving %s: %w", SchemaCAE2012, err)
		}
		return files[name], nil
	}
	return xsdFS.ReadFile("xsd/" + name)
}

// readSchema parses the embedded schema file name.
func readSchema(name string) (*etree.Document, error) {
	b, err := xsdFS.ReadFile("xsd/" + name)
	if err != nil {
		return nil, err
	}
	doc := etree.NewDocument()
	if err := doc.ReadFromBytes(b); err != nil {
		return nil, err
	}
	return doc, nil
}
