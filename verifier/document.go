package verifier

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/beevik/etree"

	"github.com/cfe-agent/cfe-agent/assets"
	"github.com/cfe-agent/cfe-agent/cfe"
)

// Kinds of document the verifier knows.
const (
	kindOther = iota
	kindCFE
	kindCAE
	kindReport   // a daily report (Reporte)
	kindEnvelope // an envelope of CFEs (EnvioCFE), whose CFEs are signed
)

// docInfo is what the verifier reads from a document before checking it.
type docInfo struct {
	what        string // for the report line
	schema      string // the XSD that validates it, "" when none
	kind        int
	noun        string    // "CFE", "reporte": what the RUC check names
	ruc         string    // a CFE's RUCEmisor
	signedAt    time.Time // TmstFirma (CFE) or TmstFrma (CAE file); zero when absent
	signedAtTag string    // the element signedAt comes from
}

// describeDocument reads what a file is from its root element: what to call
// it, the schema that validates it, the issuer's RUC and the signing time.
func describeDocument(b []byte) docInfo {
	doc := etree.NewDocument()
	if err := doc.ReadFromBytes(b); err != nil || doc.Root() == nil {
		return docInfo{what: "no es XML"}
	}
	root := doc.Root()
	switch root.Tag {
	case "CFE":
		d := docInfo{what: "CFE", schema: assets.SchemaCFE, kind: kindCFE, noun: "CFE", signedAtTag: "TmstFirma"}
		if c, err := cfe.ParseXML(b); err == nil {
			d.what = fmt.Sprintf("%s %s-%d", c.Type().Name(), c.IdDoc.Serie, c.IdDoc.Nro)
		}
		// Read from the document's own elements, not the model: what the
		// signer's certificate is compared with is what was signed.
		d.ruc = childText(root, "./*/Encabezado/Emisor/RUCEmisor")
		d.signedAt = timestamp(childText(root, "./*/TmstFirma"))
		return d
	case "CAE":
		d := docInfo{what: "archivo CAE", schema: assets.SchemaCAE, kind: kindCAE, signedAtTag: "TmstFrma"}
		if caeLayout2012(root) {
			d.what, d.schema = "archivo CAE (formato 2012, sin TA)", assets.SchemaCAE2012
		}
		d.signedAt = timestamp(childText(root, "./TmstFrma"))
		return d
	case "Reporte":
		d := docInfo{what: "reporte diario", schema: assets.SchemaReport, kind: kindReport, noun: "reporte", signedAtTag: "TmstFirmaEnv"}
		d.ruc = childText(root, "./Caratula/RUCEmisor")
		d.signedAt = timestamp(childText(root, "./Caratula/TmstFirmaEnv"))
		if sum, err := cfe.DescribeReport(b); err == nil {
			d.what = sum
		}
		return d
	case "EnvioCFE":
		return docInfo{what: "sobre de CFE", schema: assets.SchemaEnvelope, kind: kindEnvelope}
	case "EnvioCFE_entreEmpresas":
		return docInfo{what: "sobre de CFE para un receptor", schema: assets.SchemaEnvelopeReceiver, kind: kindEnvelope}
	}
	return docInfo{what: "documento " + root.Tag}
}

// childText returns the trimmed text of the only element path selects from
// el, or "" when there is none or more than one.
func childText(el *etree.Element, path string) string {
	found := el.FindElements(path)
	if len(found) != 1 {
		return ""
	}
	return strings.TrimSpace(found[0].Text())
}

// timestamp parses an xs:dateTime with its zone (DGI writes -03:00); the
// zero time when it is not one.
func timestamp(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// caeSchemaVersion matches the CAE schema a CAE file declares in
// xsi:schemaLocation ("http://cfe.dgi.gub.uy CAE_v1.1.xsd").
var caeSchemaVersion = regexp.MustCompile(`\bCAE_v(\d+)\.(\d+)\.xsd\b`)

// xsiNS is the namespace of xsi:schemaLocation.
const xsiNS = "http://www.w3.org/2001/XMLSchema-instance"

// caeLayout2012 reports whether the CAE file root is of DGI's first layout:
// its DA has no TA and it declares a CAE schema older than 1.4 (the version
// DGI's 2016 sample, which has TA, declares). The declaration is inside what
// DGI signed, so a file cannot claim the old layout without failing the
// signature check; a TA-less file that declares no version or a newer one is
// checked against CAE.xsd and fails there.
func caeLayout2012(root *etree.Element) bool {
	if da := root.SelectElement("DA"); da == nil || da.SelectElement("TA") != nil {
		return false
	}
	var m []string
	for _, a := range root.Attr {
		if a.Key == "schemaLocation" && a.NamespaceURI() == xsiNS {
			m = caeSchemaVersion.FindStringSubmatch(a.Value)
		}
	}
	if m == nil {
		return false
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	return major < 1 || major == 1 && minor < 4
}
