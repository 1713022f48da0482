package main

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/beevik/etree"
	"github.com/spf13/cobra"

	"github.com/cfe-agent/cfe-agent/assets"
	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/signer"
)

func newVerifyCommand(_ *globalOptions) *cobra.Command {
	var certFile string
	var skipXSD bool
	cmd := &cobra.Command{
		Use:   "verify [--cert FILE] FILE.xml...",
		Short: "Verifica firma, digest y esquema XSD de CFE firmados y archivos CAE",
		Long: "Verifica cada archivo: la firma XML-DSig y su digest (con el certificado incluido en el archivo, " +
			"o el de --cert), y el esquema XSD oficial de DGI con xmllint. Imprime una línea por archivo y " +
			"termina con estado 0 solo si todos pasan.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var cert *x509.Certificate
			if certFile != "" {
				var err error
				if cert, err = readCertificate(certFile); err != nil {
					return err
				}
			}
			v, err := newVerifier(cert, skipXSD)
			if err != nil {
				return err
			}
			defer v.close()
			failed := 0
			for _, f := range args {
				if !v.verify(cmd.OutOrStdout(), f) {
					failed++
				}
			}
			if failed > 0 {
				return errChecksFailed{failed}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&certFile, "cert", "", "certificate (PEM or DER) to verify with, for files whose KeyInfo has no certificate")
	cmd.Flags().BoolVar(&skipXSD, "skip-xsd", false, "do not run the XSD check (when xmllint is not installed)")
	return cmd
}

// verifier checks signed CFEs and CAE files. The XSD check runs xmllint with
// DGI's schemas, which the binary carries.
type verifier struct {
	cert    *x509.Certificate
	xmllint string // "" when the XSD check is skipped
	schemas string // temp folder with the XSDs
	noLint  bool   // xmllint wanted but not installed
}

func newVerifier(cert *x509.Certificate, skipXSD bool) (*verifier, error) {
	v := &verifier{cert: cert}
	if skipXSD {
		return v, nil
	}
	p, err := exec.LookPath("xmllint")
	if err != nil {
		v.noLint = true
		return v, nil
	}
	dir, err := os.MkdirTemp("", "cfe-agent-xsd-")
	if err != nil {
		return nil, err
	}
	if _, err := assets.WriteSchemas(dir); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	v.xmllint, v.schemas = p, dir
	return v, nil
}

func (v *verifier) close() {
	if v.schemas != "" {
		os.RemoveAll(v.schemas)
	}
}

// verify checks one file and prints one line: OK or FAIL, the file, and what
// was found. It reports whether every check passed.
func (v *verifier) verify(w io.Writer, file string) bool {
	b, err := os.ReadFile(file)
	if err != nil {
		fmt.Fprintf(w, "FAIL %s: %v\n", file, unwrapPathError(err))
		return false
	}
	var notes []string
	ok := true
	fail := func(format string, args ...any) { ok = false; notes = append(notes, fmt.Sprintf(format, args...)) }

	what, schema := describeDocument(b)
	notes = append(notes, what)
	// The certificate in KeyInfo first; --cert for files that carry none (DGI's
	// CFEs inside an envelope name theirs only by issuer and serial).
	res, err := signer.Verify(b, signer.VerifyOptions{})
	if err != nil && v.cert != nil {
		res, err = signer.Verify(b, signer.VerifyOptions{Certificate: v.cert})
	}
	if err != nil {
		fail("firma inválida: %s", describe(err))
	} else {
		notes = append(notes, fmt.Sprintf("firma %s válida, digest %s, certificado %q",
			res.Algorithm, res.DigestValue, res.Certificate.Subject.CommonName))
	}
	switch {
	case v.noLint:
		fail("XSD no verificado: xmllint no está instalado (instale libxml2-utils o use --skip-xsd)")
	case v.xmllint == "":
		notes = append(notes, "XSD omitido")
	case schema == "":
		fail("XSD: no es un CFE ni un archivo CAE")
	default:
		if out, err := v.lint(b, schema); err != nil {
			fail("XSD %s inválido: %s", schema, out)
		} else {
			notes = append(notes, "XSD "+schema+" válido")
		}
	}
	status := "OK  "
	if !ok {
		status = "FAIL"
	}
	fmt.Fprintf(w, "%s %s: %s\n", status, file, strings.Join(notes, "; "))
	return ok
}

// longSerial matches X509SerialNumber values longer than the 24 digits
// libxml2 accepts for xs:integer; the copy given to xmllint carries a short
// one instead (KeyInfo is not covered by the signature, checked above).
var longSerial = regexp.MustCompile(`(<(?:[A-Za-z0-9_]+:)?X509SerialNumber>)\d{25,}(</)`)

func (v *verifier) lint(doc []byte, schema string) (string, error) {
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

// describeDocument names what a file is (for the report line) and the schema
// that validates it, from its root element.
func describeDocument(b []byte) (string, string) {
	doc := etree.NewDocument()
	if err := doc.ReadFromBytes(b); err != nil || doc.Root() == nil {
		return "no es XML", ""
	}
	switch doc.Root().Tag {
	case "CFE":
		if c, err := cfe.ParseXML(b); err == nil {
			return fmt.Sprintf("%s %s-%d", c.Type().Name(), c.IdDoc.Serie, c.IdDoc.Nro), assets.SchemaCFE
		}
		return "CFE", assets.SchemaCFE
	case "CAE":
		if caeLayout2012(doc.Root()) {
			return "archivo CAE (formato 2012, sin TA)", assets.SchemaCAE2012
		}
		return "archivo CAE", assets.SchemaCAE
	}
	return "documento " + doc.Root().Tag, ""
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

// readCertificate reads a PEM or DER certificate file.
func readCertificate(path string) (*x509.Certificate, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if blk, _ := pem.Decode(b); blk != nil {
		b = blk.Bytes
	}
	c, err := x509.ParseCertificate(b)
	if err != nil {
		return nil, cfe.Errorf(cfe.EINVALID, "%s no es un certificado X.509 (PEM o DER): %v", path, err)
	}
	return c, nil
}

// describe renders an error for a terminal: the user message, each field error
// on its own line, and the cause of internal errors.
func describe(err error) string {
	msg := cfe.ErrorMessage(err)
	if cfe.ErrorCode(err) == cfe.EINTERNAL {
		return err.Error()
	}
	fields := cfe.ErrorFields(err)
	if len(fields) > 1 {
		var b strings.Builder
		b.WriteString(msg)
		for _, f := range fields {
			fmt.Fprintf(&b, "\n  %s: %s", f.Campo, f.Mensaje)
		}
		return b.String()
	}
	return msg
}
