package signer

import (
	"bytes"
	"crypto"
	"crypto/rsa"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/beevik/etree"
	dsig "github.com/russellhaering/goxmldsig"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// Algorithm names a signature method.
type Algorithm string

// The signature methods DGI documents use. RSASHA1 (with a SHA-1 digest) is
// what DGI's examples and Documento Técnico use; RSASHA256 (with a SHA-256
// digest) is offered for when DGI's testing environment accepts it.
const (
	RSASHA1   Algorithm = "rsa-sha1"
	RSASHA256 Algorithm = "rsa-sha256"
)

// algorithms maps each Algorithm to its XML-DSig identifiers and hash.
var algorithms = map[Algorithm]struct {
	signatureMethod string
	hash            crypto.Hash
}{
	RSASHA1:   {dsig.RSASHA1SignatureMethod, crypto.SHA1},
	RSASHA256: {dsig.RSASHA256SignatureMethod, crypto.SHA256},
}

// Config configures a Signer.
type Config struct {
	// Credentials are the company's key and certificate (LoadPKCS12, LoadPEM or
	// GenerateTestCertificate).
	Credentials *Credentials
	// Algorithm is the signature method; empty means RSASHA1.
	Algorithm Algorithm
	// Now is the clock Sign reads to refuse an expired certificate; nil means
	// time.Now.
	Now func() time.Time
}

// Signer signs documents with one certificate. It is safe for concurrent use:
// after New nothing in it changes.
type Signer struct {
	creds     Credentials
	algorithm Algorithm
	now       func() time.Time
	// ctx is goxmldsig's signing context, configured once for DGI's profile.
	// ConstructSignature only reads it, so goroutines share it.
	ctx *dsig.SigningContext
}

// idAttrNone is the ID attribute goxmldsig looks for on the root to build
// Reference URI="#id". It is not a valid XML name, so no element has it and the
// Reference is always URI="", the whole document, as DGI signs.
const idAttrNone = "-"

// New returns a Signer for cfg. Errors: EINVALID when the credentials are
// missing, the key is not RSA or does not match the certificate, or the
// algorithm is unknown.
func New(cfg Config) (*Signer, error) {
	const op = "signer.New"
	c := cfg.Credentials
	if c == nil || c.Key == nil || c.Certificate == nil {
		return nil, invalid(op, "falta la clave privada o el certificado de firma", nil)
	}
	if err := c.check(); err != nil {
		return nil, invalid(op, err.Error(), nil)
	}
	alg := cfg.Algorithm
	if alg == "" {
		alg = RSASHA1
	}
	a, ok := algorithms[alg]
	if !ok {
		return nil, invalid(op, fmt.Sprintf("algoritmo de firma %q no admitido: use %q o %q", alg, RSASHA1, RSASHA256), nil)
	}
	ctx, err := dsig.NewSigningContext(c.Key, [][]byte{c.Certificate.Raw})
	if err != nil {
		return nil, invalid(op, "la clave privada no sirve para firmar", err)
	}
	ctx.Canonicalizer = dsig.MakeC14N10RecCanonicalizer()
	ctx.Prefix = ""
	ctx.IdAttribute = idAttrNone
	if err := ctx.SetSignatureMethod(a.signatureMethod); err != nil {
		return nil, invalid(op, "la clave privada no admite el algoritmo "+string(alg), err)
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	return &Signer{creds: *c, algorithm: alg, now: now, ctx: ctx}, nil
}

// Certificate returns the signing certificate (it travels in an envelope's
// Caratula).
func (s *Signer) Certificate() *x509.Certificate { return s.creds.Certificate }

// Chain returns the certificates that issued the signing certificate, as
// loaded; they are not written into signatures.
func (s *Signer) Chain() []*x509.Certificate { return s.creds.Chain }

// Algorithm returns the signature method.
func (s *Signer) Algorithm() Algorithm { return s.algorithm }

// Signed is a document signed by Sign.
type Signed struct {
	// XML is the signed document: the unsigned bytes with the Signature element
	// inserted before the root's end tag. Store and send it as is.
	XML []byte
	// DigestValue is the base64 DigestValue of the Reference, the document's
	// "hash": its first 6 characters are a CFE's security code, and it goes
	// into the QR.
	DigestValue string
}

// Sign signs a whole XML document (a CFE, a daily report) with an enveloped
// signature in DGI's profile. unsigned must be UTF-8 or ISO-8859-1, without a
// DOCTYPE, with nothing but white space after the root element, and its root
// must declare the namespaces it uses (a CFE is signed as its own document).
//
// Errors: EUNAVAILABLE with Respuesta cfe.RespCertificado when the certificate
// is expired or not yet valid at the Signer's clock (ErrCertificateExpired);
// EINVALID when the bytes are not such a document or are already signed.
func (s *Signer) Sign(unsigned []byte) (*Signed, error) {
	const op = "signer.Sign"
	if err := s.checkValidity(op); err != nil {
		return nil, err
	}
	doc, err := parseXML(unsigned)
	if err != nil {
		return nil, invalid(op, err.Error(), nil)
	}
	root := doc.Root()
	end, err := rootEndTag(unsigned, root)
	if err != nil {
		return nil, invalid(op, err.Error(), nil)
	}
	if err := checkSignable(root); err != nil {
		return nil, invalid(op, err.Error(), nil)
	}

	sig, err := s.ctx.ConstructSignature(root, true)
	if err != nil {
		return nil, &cfe.Error{Code: cfe.EINTERNAL, Op: op, Message: "no se pudo firmar el documento", Err: err}
	}
	s.addIssuerSerial(sig)

	var out bytes.Buffer
	out.Grow(len(unsigned) + 2048 + len(s.creds.Certificate.Raw)*4/3)
	out.Write(unsigned[:end])
	sig.WriteTo(&out, &etree.WriteSettings{CanonicalText: true, CanonicalAttrVal: true})
	out.Write(unsigned[end:])
	return &Signed{XML: out.Bytes(), DigestValue: sig.FindElement("./SignedInfo/Reference/DigestValue").Text()}, nil
}

// checkValidity refuses to sign outside the certificate's validity: DGI would
// reject the document and its number would be lost.
func (s *Signer) checkValidity(op string) error {
	cert, now := s.creds.Certificate, s.now()
	var msg string
	switch {
	case now.After(cert.NotAfter):
		msg = fmt.Sprintf("el certificado de firma venció el %s; cargue un certificado vigente", cert.NotAfter.In(cfe.Montevideo).Format(time.DateOnly))
	case now.Before(cert.NotBefore):
		msg = fmt.Sprintf("el certificado de firma es válido recién desde el %s", cert.NotBefore.In(cfe.Montevideo).Format(time.DateOnly))
	default:
		return nil
	}
	return &cfe.Error{Code: cfe.EUNAVAILABLE, Op: op, Message: msg, Respuesta: cfe.RespCertificado, Err: ErrCertificateExpired}
}

// checkSignable rejects what would make goxmldsig's digest differ from the
// canonical form other tools compute: an existing signature, xml:* attributes
// on the root (inclusive C14N would copy them onto SignedInfo), and TAB, CR or
// LF in attribute values (a conforming parser normalizes them to spaces).
func checkSignable(root *etree.Element) error {
	if last := lastChildElement(root); last != nil && last.Tag == dsig.SignatureTag && last.NamespaceURI() == nsDSig {
		return errors.New("el documento ya está firmado")
	}
	for _, a := range root.Attr {
		if a.Space == "xml" {
			return fmt.Errorf("el elemento raíz no puede llevar el atributo xml:%s", a.Key)
		}
	}
	var bad error
	walk(root, func(el *etree.Element) bool {
		for _, a := range el.Attr {
			if a.Space != "xmlns" && a.Key != "xmlns" && strings.ContainsAny(a.Value, "\t\r\n") {
				bad = fmt.Errorf("el atributo %s de <%s> contiene tabulaciones o saltos de línea", a.FullKey(), el.FullTag())
				return false
			}
		}
		return true
	})
	return bad
}

// addIssuerSerial adds X509IssuerSerial after the X509Certificate goxmldsig
// wrote: CFEType.xsd asks for it. KeyInfo is outside SignedInfo, so this does
// not touch what was signed.
func (s *Signer) addIssuerSerial(sig *etree.Element) {
	cert := s.creds.Certificate
	is := sig.FindElement("./KeyInfo/X509Data").CreateElement("X509IssuerSerial")
	is.CreateElement("X509IssuerName").SetText(cert.Issuer.String())
	is.CreateElement("X509SerialNumber").SetText(cert.SerialNumber.String())
}

// rsaPublicKey returns the RSA key of cert, the only kind DGI uses.
func rsaPublicKey(cert *x509.Certificate) (*rsa.PublicKey, error) {
	pub, ok := cert.PublicKey.(*rsa.PublicKey)
	if !ok {
		return nil, fmt.Errorf("el certificado %q no tiene una clave RSA", cert.Subject.CommonName)
	}
	return pub, nil
}
