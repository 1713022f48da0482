package signer

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
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

// method is what an Algorithm writes into SignedInfo and how it hashes.
type method struct {
	signatureMethod string
	digestMethod    string
	hash            crypto.Hash
}

// algorithms maps each Algorithm to its XML-DSig identifiers and hash.
var algorithms = map[Algorithm]method{
	RSASHA1:   {dsig.RSASHA1SignatureMethod, "http://www.w3.org/2000/09/xmldsig#sha1", crypto.SHA1},
	RSASHA256: {dsig.RSASHA256SignatureMethod, "http://www.w3.org/2001/04/xmlenc#sha256", crypto.SHA256},
}

// Algorithm identifiers of DGI's profile: inclusive C14N 1.0 (not goxmldsig's
// default, C14N 1.1) and the enveloped-signature transform.
const (
	algC14N      = string(dsig.CanonicalXML10RecAlgorithmId)
	algEnveloped = string(dsig.EnvelopedSignatureAltorithmId)
)

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
//
// Every signature it writes has the same shape (DGI's profile): SignedInfo
// with inclusive C14N 1.0, the Algorithm's methods and one Reference URI=""
// with the enveloped-signature and C14N transforms; SignatureValue; KeyInfo
// with the certificate and its issuer and serial. Only DigestValue and
// SignatureValue change from one document to the next, so Signature is
// written from that template, and SignedInfo is signed in its canonical form
// without building or canonicalizing a tree for it.
type Signer struct {
	creds     Credentials
	algorithm Algorithm
	method    method
	now       func() time.Time
	// c14n canonicalizes a parsed document for its digest (Sign).
	c14n dsig.Canonicalizer
	// keyInfo is the KeyInfo element, the same in every signature.
	keyInfo string
}

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
	keyInfo, err := keyInfoXML(c.Certificate)
	if err != nil {
		return nil, invalid(op, "el certificado no se puede escribir en la firma", err)
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	return &Signer{creds: *c, algorithm: alg, method: a, now: now,
		c14n: dsig.MakeC14N10RecCanonicalizer(), keyInfo: keyInfo}, nil
}

// keyInfoXML writes the KeyInfo of every signature by cert: X509Certificate,
// then the X509IssuerSerial CFEType.xsd asks for, as in DGI's examples.
// KeyInfo is outside SignedInfo: it is not signed.
func keyInfoXML(cert *x509.Certificate) (string, error) {
	keyInfo := etree.NewElement("KeyInfo")
	x509Data := keyInfo.CreateElement("X509Data")
	x509Data.CreateElement("X509Certificate").SetText(base64.StdEncoding.EncodeToString(cert.Raw))
	is := x509Data.CreateElement("X509IssuerSerial")
	is.CreateElement("X509IssuerName").SetText(cert.Issuer.String())
	is.CreateElement("X509SerialNumber").SetText(cert.SerialNumber.String())
	doc := etree.NewDocument()
	doc.WriteSettings = etree.WriteSettings{CanonicalText: true, CanonicalAttrVal: true}
	doc.SetRoot(keyInfo)
	return doc.WriteToString()
}

// Certificate returns the signing certificate (it travels in an envelope's
// Caratula).
func (s *Signer) Certificate() *x509.Certificate { return s.creds.Certificate }

// Credentials returns the company's key and certificate, for the other
// messages they sign (DGI's web services: WS-Security and client TLS).
func (s *Signer) Credentials() *Credentials { c := s.creds; return &c }

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
	end, err := rootEndTag(unsigned, root.FullTag())
	if err != nil {
		return nil, invalid(op, err.Error(), nil)
	}
	if err := checkSignable(root); err != nil {
		return nil, invalid(op, err.Error(), nil)
	}
	canonical, err := s.c14n.Canonicalize(root)
	if err != nil {
		return nil, &cfe.Error{Code: cfe.EINTERNAL, Op: op, Message: "no se pudo firmar el documento", Err: err}
	}
	var decls []nsDecl
	for _, a := range root.Attr {
		if a.Space == "xmlns" {
			decls = append(decls, nsDecl{prefix: a.Key, uri: a.Value})
		}
	}
	return s.sign(op, unsigned, end, canonical, decls)
}

// SignCanonical signs a document given in its canonical form (inclusive
// C14N 1.0 without comments, as cfe.MarshalXML writes a CFE), optionally
// followed by white space. The digest is taken over the bytes as they are,
// without parsing them: it is only right when they really are canonical, which
// is the caller's promise. For such bytes the result is byte for byte what
// Sign returns.
//
// Errors: as Sign's; EINVALID when the bytes do not start with the root's
// start tag or do not end with its end tag, or already end with a signature.
func (s *Signer) SignCanonical(canonical []byte) (*Signed, error) {
	const op = "signer.SignCanonical"
	if err := s.checkValidity(op); err != nil {
		return nil, err
	}
	name, decls, err := rootStartTag(canonical)
	if err != nil {
		return nil, invalid(op, err.Error(), nil)
	}
	end, err := rootEndTag(canonical, name)
	if err != nil {
		return nil, invalid(op, err.Error(), nil)
	}
	if bytes.HasSuffix(canonical[:end], []byte("Signature>")) {
		return nil, invalid(op, "el documento ya está firmado", nil)
	}
	return s.sign(op, canonical, end, bytes.TrimRight(canonical, xmlSpace), decls)
}

// sign writes the Signature of the document doc, whose root element's end tag
// starts at end, whose canonical form is canonical and whose root declares the
// namespace prefixes decls.
func (s *Signer) sign(op string, doc []byte, end int, canonical []byte, decls []nsDecl) (*Signed, error) {
	h := s.method.hash.New()
	h.Write(canonical)
	digestValue := base64.StdEncoding.EncodeToString(h.Sum(nil))

	h.Reset()
	h.Write(s.appendSignedInfo(nil, digestValue, true, decls))
	sigValue, err := s.creds.Key.Sign(rand.Reader, h.Sum(nil), s.method.hash)
	if err != nil {
		return nil, &cfe.Error{Code: cfe.EINTERNAL, Op: op, Message: "no se pudo firmar el documento", Err: err}
	}

	out := make([]byte, 0, len(doc)+1024+base64.StdEncoding.EncodedLen(len(sigValue))+len(s.keyInfo))
	out = append(out, doc[:end]...)
	out = append(out, `<Signature xmlns="`+nsDSig+`">`...)
	out = s.appendSignedInfo(out, digestValue, false, nil)
	out = append(out, "<SignatureValue>"...)
	out = base64.StdEncoding.AppendEncode(out, sigValue)
	out = append(out, "</SignatureValue>"...)
	out = append(out, s.keyInfo...)
	out = append(out, "</Signature>"...)
	out = append(out, doc[end:]...)
	return &Signed{XML: out, DigestValue: digestValue}, nil
}

// nsDecl is a namespace prefix declared on the root element.
type nsDecl struct{ prefix, uri string }

// appendSignedInfo appends the SignedInfo element with digestValue to b. In
// canonical form (what is signed) it declares the namespaces in scope where it
// stands, the signature's default one and the prefixes the root declares
// (decls), and its empty elements have end tags; as written into the document
// it declares nothing and its empty elements are self-closing, as goxmldsig,
// xmlsec1 and DGI's samples write them.
func (s *Signer) appendSignedInfo(b []byte, digestValue string, canonical bool, decls []nsDecl) []byte {
	if canonical {
		b = append(b, `<SignedInfo xmlns="`+nsDSig+`"`...)
		slices.SortFunc(decls, func(x, y nsDecl) int { return strings.Compare(x.prefix, y.prefix) })
		for _, d := range decls {
			b = append(b, " xmlns:"...)
			b = append(b, d.prefix...)
			b = append(b, `="`...)
			b = append(b, canonicalAttr.Replace(d.uri)...)
			b = append(b, '"')
		}
		b = append(b, '>')
	} else {
		b = append(b, "<SignedInfo>"...)
	}
	b = appendAlgorithm(b, "CanonicalizationMethod", algC14N, canonical)
	b = appendAlgorithm(b, "SignatureMethod", s.method.signatureMethod, canonical)
	b = append(b, `<Reference URI=""><Transforms>`...)
	b = appendAlgorithm(b, "Transform", algEnveloped, canonical)
	b = appendAlgorithm(b, "Transform", algC14N, canonical)
	b = append(b, "</Transforms>"...)
	b = appendAlgorithm(b, "DigestMethod", s.method.digestMethod, canonical)
	b = append(b, "<DigestValue>"...)
	b = append(b, digestValue...)
	return append(b, "</DigestValue></Reference></SignedInfo>"...)
}

// appendAlgorithm appends an empty element tag with an Algorithm attribute
// (the identifiers are plain URIs: nothing in them needs escaping).
func appendAlgorithm(b []byte, tag, algorithm string, canonical bool) []byte {
	b = append(b, '<')
	b = append(b, tag...)
	b = append(b, ` Algorithm="`...)
	b = append(b, algorithm...)
	if !canonical {
		return append(b, `"/>`...)
	}
	b = append(b, `"></`...)
	b = append(b, tag...)
	return append(b, '>')
}

// canonicalAttr escapes an attribute value as canonical XML does.
var canonicalAttr = strings.NewReplacer("&", "&amp;", "<", "&lt;", `"`, "&quot;", "\t", "&#x9;", "\n", "&#xA;", "\r", "&#xD;")

// Ready reports whether Sign can sign now as far as the certificate goes:
// EUNAVAILABLE with Respuesta cfe.RespCertificado (ErrCertificateExpired) when
// it is expired or not yet valid. The issuer asks before it reserves a number.
func (s *Signer) Ready() error { return s.checkValidity("signer.Ready") }

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

// rsaPublicKey returns the RSA key of cert, the only kind DGI uses.
func rsaPublicKey(cert *x509.Certificate) (*rsa.PublicKey, error) {
	pub, ok := cert.PublicKey.(*rsa.PublicKey)
	if !ok {
		return nil, fmt.Errorf("el certificado %q no tiene una clave RSA", cert.Subject.CommonName)
	}
	return pub, nil
}

// Canonical signs documents already in canonical form (what cfe.MarshalXML
// writes) with SignCanonical, and answers as the issuing use case asks
// (issuer.Signer): the signed bytes and the reference's DigestValue. Ready is
// the Signer's.
type Canonical struct{ *Signer }

// Sign signs canonical; errors as SignCanonical's.
func (c Canonical) Sign(canonical []byte) ([]byte, string, error) {
	r, err := c.SignCanonical(canonical)
	if err != nil {
		return nil, "", err
	}
	return r.XML, r.DigestValue, nil
}
