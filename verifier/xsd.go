package verifier

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/cfe-agent/cfe-agent/cfe/xsdvalid"
)

// checkXSD validates b against DGI's schema with the built-in validator and,
// when xmllint is installed, with xmllint too. The file passes only if every
// validator that ran accepts it: when the two disagree it fails, and the
// note gives both verdicts, so that the disagreement is seen and reported.
// (Known case: libxml2 accepts base64 values with characters outside the
// alphabet, which XML Schema and the built-in validator refuse.)
func (v *Verifier) checkXSD(b []byte, schema string, r *report) {
	s, err := xsdvalid.DGI(schema)
	if err != nil {
		r.fail("XSD %s: el esquema no se pudo cargar: %v", schema, err)
		return
	}
	goErr := s.Validate(b)
	if goErr != nil {
		goErr = xsdSummary{goErr}
	}
	alone := func() {
		if goErr != nil {
			r.fail("XSD %s inválido: %s", schema, goErr)
		} else {
			r.note("XSD %s válido", schema)
		}
	}
	if v.xmllint == "" {
		alone()
		return
	}
	out, lintErr := v.lint(b, schema)
	var exit *exec.ExitError
	if lintErr != nil && !errors.As(lintErr, &exit) {
		// xmllint did not run: the built-in verdict stands alone.
		r.note("xmllint no se pudo ejecutar (%v)", lintErr)
		alone()
		return
	}
	switch {
	case goErr == nil && lintErr == nil:
		r.note("XSD %s válido (también según xmllint)", schema)
	case goErr != nil && lintErr != nil:
		r.fail("XSD %s inválido: %s", schema, goErr)
	case goErr != nil:
		r.fail("XSD %s inválido según el validador del programa: %s; xmllint lo acepta: los validadores no coinciden", schema, goErr)
	default:
		r.fail("XSD %s inválido según xmllint: %s; el validador del programa lo acepta: los validadores no coinciden", schema, out)
	}
}

// xsdSummary shows the first few errors of a validation, and how many more
// there are, so that a badly broken file does not fill the screen.
type xsdSummary struct{ err error }

func (x xsdSummary) Error() string {
	var es xsdvalid.Errors
	if !errors.As(x.err, &es) || len(es) <= 3 {
		return x.err.Error()
	}
	return fmt.Sprintf("%s; y %d errores más", es[:3].Error(), len(es)-3)
}

// longSerial matches X509SerialNumber values longer than the 24 digits
// libxml2 accepts for xs:integer; the copy given to xmllint carries a short
// one instead (KeyInfo is not covered by the signature, checked above).
var longSerial = regexp.MustCompile(`(<(?:[A-Za-z0-9_]+:)?X509SerialNumber>)\d{25,}(</)`)

// lint runs xmllint on doc against schema and returns what it said, on one
// line, the temporary file's name replaced by "documento".
func (v *Verifier) lint(doc []byte, schema string) (string, error) {
	f, err := os.CreateTemp(v.schemas, "doc-*.xml")
	if err != nil {
		return "", err
	}
	defer os.Remove(f.Name())
	_, err = f.Write(longSerial.ReplaceAll(doc, []byte("${1}1${2}")))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	out, err := exec.Command(v.xmllint, "--noout", "--nonet", "--schema", filepath.Join(v.schemas, schema), f.Name()).CombinedOutput()
	msg := strings.TrimSpace(strings.ReplaceAll(string(out), f.Name(), "documento"))
	return strings.ReplaceAll(msg, "\n", " | "), err
}
