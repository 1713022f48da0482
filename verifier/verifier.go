package verifier

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/cfe-agent/cfe-agent/assets"
	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/signer"
)

// Pin is a certificate the technician named as the signer's (--cert,
// --profile-cert): the signature must be by it, and it is accepted although
// its chain reaches no accredited CA.
type Pin struct {
	Cert *x509.Certificate
	By   string // the flag that named it, for the report
}

// Config is what a Verifier checks against.
type Config struct {
	// Pinned are the certificates that must have signed (one of them);
	// none: the certificate each document carries, which must chain to Trust.
	Pinned []Pin
	// Trust is the accredited CAs (EmbeddedTrust).
	Trust signer.Trust
	// AllowUntrusted reports a chain that reaches no accredited CA as a
	// warning instead of a failure.
	AllowUntrusted bool
	// SkipXSD leaves out the check against DGI's schema.
	SkipXSD bool
	// LookPath finds xmllint, the XSD check's second opinion; exec.LookPath
	// when nil. When it finds none, the built-in validator speaks alone.
	LookPath func(file string) (string, error)
}

// Verifier checks signed CFEs, CAE files, daily reports and envelopes. The
// XSD check validates with cfe/xsdvalid against DGI's schemas, which the
// binary carries; when xmllint is installed it also runs, as a second
// opinion (see checkXSD). Close removes the schemas it wrote for xmllint.
type Verifier struct {
	cfg     Config
	xmllint string // "" when not installed or the XSD check is skipped
	schemas string // temp folder with the XSDs, for xmllint
}

// New returns a Verifier of cfg.
func New(cfg Config) (*Verifier, error) {
	v := &Verifier{cfg: cfg}
	if cfg.SkipXSD {
		return v, nil
	}
	look := cfg.LookPath
	if look == nil {
		look = exec.LookPath
	}
	p, err := look("xmllint")
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

// Close removes what New wrote.
func (v *Verifier) Close() {
	if v.schemas != "" {
		os.RemoveAll(v.schemas)
	}
}

// SecondOpinion reports whether xmllint runs beside the built-in validator.
func (v *Verifier) SecondOpinion() bool { return v.xmllint != "" }

// Result is what the verification of one file found.
type Result struct {
	File  string
	OK    bool     // every check passed
	Notes []string // what was found, in order: the document, its signature, signer, chain, XSD
	// CFEs are the checks of each CFE of an envelope, in its order.
	CFEs []Part
}

// Part is the verification of one CFE of an envelope.
type Part struct {
	OK    bool
	Notes []string
}

// Write writes the technician's report of r: one line, OK or FAIL, the file
// and what was found; for an envelope, then one indented line per CFE.
func (r Result) Write(w io.Writer) {
	fmt.Fprintf(w, "%s %s: %s\n", status(r.OK), r.File, strings.Join(r.Notes, "; "))
	for i, p := range r.CFEs {
		fmt.Fprintf(w, "  %s CFE %d/%d: %s\n", status(p.OK), i+1, len(r.CFEs), strings.Join(p.Notes, "; "))
	}
}

func status(ok bool) string {
	if ok {
		return "OK  "
	}
	return "FAIL"
}

// report collects the notes of one document and whether a check failed.
type report struct {
	ok    bool
	notes []string
}

func newReport() *report { return &report{ok: true} }

func (r *report) note(format string, args ...any) {
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
}

func (r *report) fail(format string, args ...any) {
	r.ok = false
	r.note(format, args...)
}

// File checks one file.
func (v *Verifier) File(file string) Result {
	b, err := os.ReadFile(file)
	if err != nil {
		return Result{File: file, Notes: []string{unwrapPathError(err).Error()}}
	}
	res := v.Document(b)
	res.File = file
	return res
}

// Document checks one document (the Result's File is left empty).
func (v *Verifier) Document(b []byte) Result {
	r := newReport()
	doc := describeDocument(b)
	r.note("%s", doc.what)
	var parts []Part
	if doc.kind == kindEnvelope {
		parts = v.envelope(b, r)
	} else {
		v.checkSignature(b, doc, nil, r)
	}
	switch {
	case v.cfg.SkipXSD:
		r.note("XSD omitido")
	case doc.schema == "":
		r.fail("XSD: no es un CFE, un archivo CAE, un reporte diario ni un sobre de CFE")
	default:
		v.checkXSD(b, doc.schema, r)
	}
	return Result{OK: r.ok, Notes: r.notes, CFEs: parts}
}

// checkSignature verifies the signature of a signed document and who made it.
// by, when set, is the certificate an envelope names for its CFEs, used unless
// the user pinned certificates.
func (v *Verifier) checkSignature(b []byte, doc docInfo, by *x509.Certificate, r *report) {
	var res *signer.Verified
	var pinnedBy string
	var err error
	if by != nil && len(v.cfg.Pinned) == 0 {
		res, err = signer.Verify(b, signer.VerifyOptions{Certificate: by})
	} else {
		res, pinnedBy, err = v.signature(b)
	}
	if err != nil {
		r.fail("firma inválida: %s", cfe.Describe(err))
		return
	}
	r.note("firma %s válida, digest %s, certificado %q", res.Algorithm, res.DigestValue, res.Certificate.Subject.CommonName)
	v.checkSigner(doc, res, pinnedBy, r)
}

// envelope checks each CFE of an envelope (EnvioCFE) as a signed CFE of its
// own, made with the certificate the envelope's Caratula carries (or a pinned
// one), and returns a Part per CFE. The envelope fails if any fails.
func (v *Verifier) envelope(b []byte, r *report) []Part {
	env, err := signer.ReadEnvelope(b)
	if err != nil {
		r.fail("%s", cfe.Describe(err))
		return nil
	}
	r.note("%d CFE, certificado de la carátula %q, RUC emisor %s, RUC receptor %s, Idemisor %d",
		len(env.CFEs), env.Certificate.Subject.CommonName, env.RUCEmisor, env.RutReceptor, env.IdEmisor)
	var parts []Part
	failed := 0
	for _, c := range env.CFEs {
		doc := describeDocument(c)
		pr := newReport()
		pr.note("%s", doc.what)
		v.checkSignature(c, doc, env.Certificate, pr)
		if !pr.ok {
			failed++
		}
		parts = append(parts, Part{OK: pr.ok, Notes: pr.notes})
	}
	if failed > 0 {
		r.fail("%d de %d CFE del sobre no pasan la verificación", failed, len(env.CFEs))
	}
	return parts
}

// signature verifies the signature: by one of the pinned certificates when
// there are any (whatever KeyInfo carries), else by the certificate in
// KeyInfo. It returns the flag that pinned the signer, if any.
func (v *Verifier) signature(b []byte) (*signer.Verified, string, error) {
	pinned := v.cfg.Pinned
	if len(pinned) == 0 {
		res, err := signer.Verify(b, signer.VerifyOptions{})
		return res, "", err
	}
	var first error
	for _, p := range pinned {
		res, err := signer.Verify(b, signer.VerifyOptions{Certificate: p.Cert})
		if err == nil {
			return res, p.By, nil
		}
		if first == nil {
			first = err
		}
	}
	if len(pinned) == 1 {
		return nil, "", cfe.Errorf(cfe.EINVALID, "no la hizo el certificado indicado (%s): %s", pinned[0].By, cfe.Describe(first))
	}
	return nil, "", cfe.Errorf(cfe.EINVALID, "no la hizo ninguno de los %d certificados indicados", len(pinned))
}

// dgiRUCs are the RUCs of the certificates DGI signs CAE files with: its own
// and that of its test company "DGI-RUC PRUEBA CEDE" (test environment; DGI's
// 2012 sample CAE file).
var dgiRUCs = map[string]bool{"214844360018": true, "219999830019": true}

// checkSigner checks who signed: the certificate's RUC is the CFE's (or the
// report's) RUCEmisor, DGI's for a CAE file; it was valid at the signing time
// the document states, and it chains to an accredited CA (or was pinned by
// the user).
func (v *Verifier) checkSigner(doc docInfo, res *signer.Verified, pinnedBy string, r *report) {
	if !v.checkRUC(doc, res.Certificate, r) {
		return
	}
	cert := res.Certificate
	if doc.signedAt.IsZero() {
		r.fail("falta la fecha de firma (%s) o no es una fecha y hora con zona: no se puede comprobar el certificado", doc.signedAtTag)
		return
	}
	at := doc.signedAt.Format(time.RFC3339)
	validity := fmt.Sprintf("vigente del %s al %s", cert.NotBefore.Format(time.DateOnly), cert.NotAfter.Format(time.DateOnly))
	if doc.signedAt.Before(cert.NotBefore) || doc.signedAt.After(cert.NotAfter) {
		r.fail("el certificado no estaba vigente al firmar (%s %s; %s)", doc.signedAtTag, at, validity)
		return
	}
	r.note("certificado vigente al firmar (%s %s; %s)", doc.signedAtTag, at, validity)
	chain, err := v.cfg.Trust.Chain(cert, res.Embedded, doc.signedAt)
	switch {
	case err == nil:
		r.note("cadena confiable: %s", chainNames(chain))
	case pinnedBy != "":
		r.note("%s; certificado aceptado por %s", cfe.ErrorMessage(err), pinnedBy)
	case v.cfg.AllowUntrusted:
		r.note("ADVERTENCIA %s (aceptado por --allow-untrusted)", cfe.ErrorMessage(err))
	default:
		r.fail("%s (indique el certificado del emisor con --cert, o use --allow-untrusted)", cfe.ErrorMessage(err))
	}
}

// checkRUC checks that the certificate is of the RUC that had to sign doc;
// false when who had to sign cannot be told (the checks stop there).
func (v *Verifier) checkRUC(doc docInfo, cert *x509.Certificate, r *report) bool {
	ruc := signer.CertRUC(cert)
	shown := ruc
	if shown == "" {
		shown = "(ninguno: el certificado no indica RUC en serialNumber)"
	}
	switch doc.kind {
	case kindCFE, kindReport:
		if doc.ruc == "" {
			r.fail("el %s no indica su RUC emisor: no se puede comprobar el certificado", doc.noun)
			return false
		}
		if ruc != doc.ruc {
			r.fail("el certificado es del RUC %s y el %s es del RUC emisor %s", shown, doc.noun, doc.ruc)
		} else {
			r.note("RUC del certificado = RUC emisor %s", ruc)
		}
	case kindCAE:
		if !dgiRUCs[ruc] {
			r.fail("el archivo CAE no lo firmó DGI: el certificado es del RUC %s", shown)
		} else {
			r.note("RUC del certificado = RUC de DGI %s", ruc)
		}
	default:
		r.fail("no se puede comprobar quién debía firmarlo: no es un CFE, un archivo CAE ni un reporte diario")
		return false
	}
	return true
}

// chainNames names the CAs of a certification path (the certificate
// itself left out), as "CA → root".
func chainNames(chain []*x509.Certificate) string {
	names := make([]string, 0, len(chain))
	for _, c := range chain[1:] {
		names = append(names, c.Subject.CommonName)
	}
	return strings.Join(names, " → ")
}

// EmbeddedTrust is the trust the binary carries: Uruguay's national root and
// the accredited CAs of assets/roots.
func EmbeddedTrust() (signer.Trust, error) {
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

// TrustedChain is the certification path of cert (with the intermediates
// its signature carries) to an accredited CA the binary carries, as of at,
// written "CA → root".
func TrustedChain(cert *x509.Certificate, intermediates []*x509.Certificate, at time.Time) (string, error) {
	trust, err := EmbeddedTrust()
	if err != nil {
		return "", err
	}
	chain, err := trust.Chain(cert, intermediates, at)
	if err != nil {
		return "", err
	}
	return chainNames(chain), nil
}

// ReadCertificate reads a PEM or DER certificate file.
func ReadCertificate(path string) (*x509.Certificate, error) {
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

// unwrapPathError returns the system's error inside a *fs.PathError (the
// path is already in the line that shows it), else err.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
