package main

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/beevik/etree"
	"github.com/spf13/cobra"

	"github.com/cfe-agent/cfe-agent/app"
	"github.com/cfe-agent/cfe-agent/assets"
	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/cfe/xsdvalid"
	"github.com/cfe-agent/cfe-agent/signer"
)

func newVerifyCommand(opts *app.Options) *cobra.Command {
	var (
		certFiles      []string
		profileCert    bool
		allowUntrusted bool
		skipXSD        bool
	)
	cmd := &cobra.Command{
		Use:   "verify [--cert ARCHIVO]... [--profile-cert] [--allow-untrusted] ARCHIVO.xml...",
		Short: "Verifica firma, certificado del firmante y esquema XSD de CFE firmados, archivos CAE, reportes y sobres",
		Long: "Verifica cada archivo (un CFE firmado, un archivo CAE de DGI, un reporte diario o un sobre de CFE, a DGI o a un receptor, " +
			"cuyos CFE se verifican uno por uno con el certificado de la carátula): la firma XML-DSig y su digest; " +
			"que el certificado que firmó sea del RUC emisor del CFE o del reporte (de DGI en un archivo CAE) y " +
			"estuviera vigente en la fecha de firma que el documento indica (TmstFirma), no hoy; que su cadena llegue, " +
			"vigente en esa fecha, a la Autoridad Certificadora Raíz Nacional de Uruguay o a otra autoridad " +
			"acreditada que el programa incluye; y el esquema XSD oficial de DGI (incluida la firma ds:Signature), " +
			"con el validador que el programa incluye, sin programas externos. Si xmllint está instalado también " +
			"se consulta como segunda opinión: si los dos no coinciden el archivo falla y la línea dice qué dijo cada uno. " +
			"Con --cert la firma debe ser de ese certificado (o de uno de ellos, si se indica varias veces), y ese " +
			"certificado se acepta aunque su cadena no llegue a una autoridad acreditada; --profile-cert hace lo " +
			"mismo con el certificado del perfil activo (así se verifican los CFE de prueba del agente, firmados con " +
			"un certificado autofirmado). Con --allow-untrusted una cadena no confiable se informa como advertencia " +
			"y no como falla; una firma inválida, otro RUC o un certificado no vigente al firmar fallan siempre. " +
			"Imprime una línea por archivo (y una por CFE de un sobre) y termina con estado 0 solo si todos pasan.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var pinned []pin
			for _, f := range certFiles {
				c, err := readCertificate(f)
				if err != nil {
					return err
				}
				pinned = append(pinned, pin{cert: c, by: "--cert " + f})
			}
			if profileCert {
				c, err := activeProfileCertificate(*opts)
				if err != nil {
					return err
				}
				pinned = append(pinned, pin{cert: c, by: "--profile-cert"})
			}
			trust, err := embeddedTrust()
			if err != nil {
				return err
			}
			v, err := newVerifier(pinned, trust, allowUntrusted, skipXSD)
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
	cmd.Flags().StringArrayVar(&certFiles, "cert", nil, "`CERTIFICADO` (PEM o DER) que debe haber hecho la firma; se confía en él aunque su cadena no llegue a una autoridad acreditada (repítalo para varios)")
	cmd.Flags().BoolVar(&profileCert, "profile-cert", false, "como --cert, con el certificado del perfil activo (los CFE del propio agente, también los de prueba)")
	cmd.Flags().BoolVar(&allowUntrusted, "allow-untrusted", false, "informa una cadena que no llega a una autoridad acreditada como advertencia, no como falla")
	cmd.Flags().BoolVar(&skipXSD, "skip-xsd", false, "no hace la comprobación contra el XSD de DGI")
	return cmd
}

// pin is a certificate the user named as the signer's.
type pin struct {
	cert *x509.Certificate
	by   string // the flag that named it, for the report
}

// embeddedTrust is the trust the binary carries: Uruguay's national root and
// the accredited CAs of assets/roots.
func embeddedTrust() (signer.Trust, error) {
	cas, err := assets.CAs()
	if err != nil {
		return signer.Trust{}, err
	}
	var t signer.Trust
	for _, ca := range cas {
		blk, _ := pem.Decode(ca.PEM)
		if blk == nil {
			return signer.Trust{}, fmt.Errorf("assets/roots/%s: no PEM certificate", ca.File)
		}
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			return signer.Trust{}, fmt.Errorf("assets/roots/%s: %w", ca.File, err)
		}
		if ca.Anchor {
			t.Anchors = append(t.Anchors, c)
		} else {
			t.Intermediates = append(t.Intermediates, c)
		}
	}
	return t, nil
}

// activeProfileCertificate reads the certificate of the active profile.
func activeProfileCertificate(opts app.Options) (*x509.Certificate, error) {
	dataDir, cfg, _, err := app.LoadConfig(opts)
	if err != nil {
		return nil, err
	}
	p, ok := cfg.ActiveProfile()
	if !ok {
		return nil, cfe.Errorf(cfe.ENOTFOUND, "el perfil %q no existe", cfg.Active)
	}
	s, err := app.LoadSigner(p.Resolve(dataDir).Certificate)
	if err != nil {
		return nil, err
	}
	return s.Certificate(), nil
}

// dgiRUCs are the RUCs of the certificates DGI signs CAE files with: its own
// and that of its test company "DGI-RUC PRUEBA CEDE" (test environment; DGI's
// 2012 sample CAE file).
var dgiRUCs = map[string]bool{"214844360018": true, "219999830019": true}

// verifier checks signed CFEs, CAE files, daily reports and envelopes. The
// XSD check validates with cfe/xsdvalid against DGI's schemas, which the
// binary carries; when xmllint is installed it also runs, as a second
// opinion (see checkXSD).
type verifier struct {
	pinned         []pin
	trust          signer.Trust
	allowUntrusted bool
	skipXSD        bool
	xmllint        string // "" when not installed or the XSD check is skipped
	schemas        string // temp folder with the XSDs, for xmllint
}

func newVerifier(pinned []pin, trust signer.Trust, allowUntrusted, skipXSD bool) (*verifier, error) {
	v := &verifier{pinned: pinned, trust: trust, allowUntrusted: allowUntrusted, skipXSD: skipXSD}
	if skipXSD {
		return v, nil
	}
	p, err := exec.LookPath("xmllint")
	if err != nil {
		return v, nil // the built-in validator alone
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
// was found; for an envelope, then one indented line per CFE in it. It
// reports whether every check passed.
func (v *verifier) verify(w io.Writer, file string) bool {
	b, err := os.ReadFile(file)
	if err != nil {
		fmt.Fprintf(w, "FAIL %s: %v\n", file, app.UnwrapPathError(err))
		return false
	}
	var notes, parts []string
	ok := true
	fail := func(format string, args ...any) { ok = false; notes = append(notes, fmt.Sprintf(format, args...)) }

	doc := describeDocument(b)
	notes = append(notes, doc.what)
	if doc.kind == kindEnvelope {
		parts = v.envelope(b, &notes, fail)
	} else {
		v.checkSignature(b, doc, nil, &notes, fail)
	}
	switch {
	case v.skipXSD:
		notes = append(notes, "XSD omitido")
	case doc.schema == "":
		fail("XSD: no es un CFE, un archivo CAE, un reporte diario ni un sobre de CFE")
	default:
		v.checkXSD(b, doc.schema, &notes, fail)
	}
	fmt.Fprintf(w, "%s %s: %s\n", status(ok), file, strings.Join(notes, "; "))
	for _, p := range parts {
		fmt.Fprintf(w, "  %s\n", p)
	}
	return ok
}

func status(ok bool) string {
	if ok {
		return "OK  "
	}
	return "FAIL"
}

// checkSignature verifies the signature of a signed document and who made it.
// by, when set, is the certificate an envelope names for its CFEs, used unless
// the user pinned certificates.
func (v *verifier) checkSignature(b []byte, doc docInfo, by *x509.Certificate, notes *[]string, fail func(string, ...any)) {
	var res *signer.Verified
	var pinnedBy string
	var err error
	if by != nil && len(v.pinned) == 0 {
		res, err = signer.Verify(b, signer.VerifyOptions{Certificate: by})
	} else {
		res, pinnedBy, err = v.signature(b)
	}
	if err != nil {
		fail("firma inválida: %s", describe(err))
		return
	}
	*notes = append(*notes, fmt.Sprintf("firma %s válida, digest %s, certificado %q",
		res.Algorithm, res.DigestValue, res.Certificate.Subject.CommonName))
	v.checkSigner(doc, res, pinnedBy, notes, fail)
}

// envelope checks each CFE of an envelope (EnvioCFE) as a signed CFE of its
// own, made with the certificate the envelope's Caratula carries (or a pinned
// one), and returns a report line per CFE. The envelope fails if any fails.
func (v *verifier) envelope(b []byte, notes *[]string, fail func(string, ...any)) []string {
	env, err := signer.ReadEnvelope(b)
	if err != nil {
		fail("%s", describe(err))
		return nil
	}
	*notes = append(*notes, fmt.Sprintf("%d CFE, certificado de la carátula %q, RUC emisor %s, RUC receptor %s, Idemisor %d",
		len(env.CFEs), env.Certificate.Subject.CommonName, env.RUCEmisor, env.RutReceptor, env.IdEmisor))
	var parts []string
	failed := 0
	for i, c := range env.CFEs {
		doc := describeDocument(c)
		notes := []string{doc.what}
		ok := true
		v.checkSignature(c, doc, env.Certificate, &notes, func(format string, args ...any) {
			ok = false
			notes = append(notes, fmt.Sprintf(format, args...))
		})
		if !ok {
			failed++
		}
		parts = append(parts, fmt.Sprintf("%s CFE %d/%d: %s", status(ok), i+1, len(env.CFEs), strings.Join(notes, "; ")))
	}
	if failed > 0 {
		fail("%d de %d CFE del sobre no pasan la verificación", failed, len(env.CFEs))
	}
	return parts
}

// signature verifies the signature: by one of the pinned certificates when
// there are any (whatever KeyInfo carries), else by the certificate in
// KeyInfo. It returns the flag that pinned the signer, if any.
func (v *verifier) signature(b []byte) (*signer.Verified, string, error) {
	if len(v.pinned) == 0 {
		res, err := signer.Verify(b, signer.VerifyOptions{})
		return res, "", err
	}
	var first error
	for _, p := range v.pinned {
		res, err := signer.Verify(b, signer.VerifyOptions{Certificate: p.cert})
		if err == nil {
			return res, p.by, nil
		}
		if first == nil {
			first = err
		}
	}
	if len(v.pinned) == 1 {
		return nil, "", cfe.Errorf(cfe.EINVALID, "no la hizo el certificado indicado (%s): %s", v.pinned[0].by, describe(first))
	}
	return nil, "", cfe.Errorf(cfe.EINVALID, "no la hizo ninguno de los %d certificados indicados", len(v.pinned))
}

// checkSigner checks who signed: the certificate's RUC is the CFE's (or the
// report's) RUCEmisor, DGI's for a CAE file; it was valid at the signing time the document
// states, and it chains to an accredited CA (or was pinned by the user).
func (v *verifier) checkSigner(doc docInfo, res *signer.Verified, pinnedBy string, notes *[]string, fail func(string, ...any)) {
	note := func(format string, args ...any) { *notes = append(*notes, fmt.Sprintf(format, args...)) }
	cert := res.Certificate
	ruc := signer.CertRUC(cert)
	shown := ruc
	if shown == "" {
		shown = "(ninguno: el certificado no indica RUC en serialNumber)"
	}
	switch doc.kind {
	case kindCFE, kindReport:
		if doc.ruc == "" {
			fail("el %s no indica su RUC emisor: no se puede comprobar el certificado", doc.noun)
			return
		}
		if ruc != doc.ruc {
			fail("el certificado es del RUC %s y el %s es del RUC emisor %s", shown, doc.noun, doc.ruc)
		} else {
			note("RUC del certificado = RUC emisor %s", ruc)
		}
	case kindCAE:
		if !dgiRUCs[ruc] {
			fail("el archivo CAE no lo firmó DGI: el certificado es del RUC %s", shown)
		} else {
			note("RUC del certificado = RUC de DGI %s", ruc)
		}
	default:
		fail("no se puede comprobar quién debía firmarlo: no es un CFE, un archivo CAE ni un reporte diario")
		return
	}
	if doc.signedAt.IsZero() {
		fail("falta la fecha de firma (%s) o no es una fecha y hora con zona: no se puede comprobar el certificado", doc.signedAtTag)
		return
	}
	at := doc.signedAt.Format(time.RFC3339)
	validity := fmt.Sprintf("vigente del %s al %s", cert.NotBefore.Format(time.DateOnly), cert.NotAfter.Format(time.DateOnly))
	if doc.signedAt.Before(cert.NotBefore) || doc.signedAt.After(cert.NotAfter) {
		fail("el certificado no estaba vigente al firmar (%s %s; %s)", doc.signedAtTag, at, validity)
		return
	}
	note("certificado vigente al firmar (%s %s; %s)", doc.signedAtTag, at, validity)
	chain, err := v.trust.Chain(cert, res.Embedded, doc.signedAt)
	switch {
	case err == nil:
		names := make([]string, len(chain)-1)
		for i, c := range chain[1:] {
			names[i] = c.Subject.CommonName
		}
		note("cadena confiable: %s", strings.Join(names, " → "))
	case pinnedBy != "":
		note("%s; certificado aceptado por %s", cfe.ErrorMessage(err), pinnedBy)
	case v.allowUntrusted:
		note("ADVERTENCIA %s (aceptado por --allow-untrusted)", cfe.ErrorMessage(err))
	default:
		fail("%s (indique el certificado del emisor con --cert, o use --allow-untrusted)", cfe.ErrorMessage(err))
	}
}

// checkXSD validates b against DGI's schema with the built-in validator and,
// when xmllint is installed, with xmllint too. The file passes only if every
// validator that ran accepts it: when the two disagree it fails, and the
// note gives both verdicts, so that the disagreement is seen and reported.
// (Known case: libxml2 accepts base64 values with characters outside the
// alphabet, which XML Schema and the built-in validator refuse.)
func (v *verifier) checkXSD(b []byte, schema string, notes *[]string, fail func(string, ...any)) {
	s, err := xsdvalid.DGI(schema)
	if err != nil {
		fail("XSD %s: el esquema no se pudo cargar: %v", schema, err)
		return
	}
	goErr := s.Validate(b)
	if goErr != nil {
		goErr = xsdSummary{goErr}
	}
	if v.xmllint == "" {
		if goErr != nil {
			fail("XSD %s inválido: %s", schema, goErr)
		} else {
			*notes = append(*notes, "XSD "+schema+" válido")
		}
		return
	}
	out, lintErr := v.lint(b, schema)
	var exit *exec.ExitError
	if lintErr != nil && !errors.As(lintErr, &exit) {
		// xmllint did not run: the built-in verdict stands alone.
		*notes = append(*notes, fmt.Sprintf("xmllint no se pudo ejecutar (%v)", lintErr))
		if goErr != nil {
			fail("XSD %s inválido: %s", schema, goErr)
		} else {
			*notes = append(*notes, "XSD "+schema+" válido")
		}
		return
	}
	switch {
	case goErr == nil && lintErr == nil:
		*notes = append(*notes, "XSD "+schema+" válido (también según xmllint)")
	case goErr != nil && lintErr != nil:
		fail("XSD %s inválido: %s", schema, goErr)
	case goErr != nil:
		fail("XSD %s inválido según el validador del programa: %s; xmllint lo acepta: los validadores no coinciden", schema, goErr)
	default:
		fail("XSD %s inválido según xmllint: %s; el validador del programa lo acepta: los validadores no coinciden", schema, out)
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

// Kinds of document verify knows.
const (
	kindOther = iota
	kindCFE
	kindCAE
	kindReport   // a daily report (Reporte)
	kindEnvelope // an envelope of CFEs (EnvioCFE), whose CFEs are signed
)

// docInfo is what verify reads from a document before checking it.
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
