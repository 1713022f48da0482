package signer

import (
	"bytes"
	"crypto"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/beevik/etree"
	dsig "github.com/russellhaering/goxmldsig"
	"github.com/russellhaering/goxmldsig/etreeutils"
)

// digestMethods maps the DigestMethod identifiers DGI documents use to hashes.
var digestMethods = map[string]crypto.Hash{
	"http://www.w3.org/2000/09/xmldsig#sha1":  crypto.SHA1,
	"http://www.w3.org/2001/04/xmlenc#sha256": crypto.SHA256,
}

// VerifyOptions says how to verify.
type VerifyOptions struct {
	// Certificate, when set, is the certificate whose key must have made the
	// signature, whatever KeyInfo carries. DGI's example CFEs carry only
	// X509IssuerSerial: their certificate travels in the envelope's Caratula.
	// When nil, the X509Certificate in KeyInfo is used.
	Certificate *x509.Certificate
}

// Verified describes a valid signature.
type Verified struct {
	Certificate     *x509.Certificate // the certificate whose key made the signature
	Algorithm       Algorithm         // the signature method
	DigestAlgorithm crypto.Hash       // the Reference's digest method
	DigestValue     string            // base64, as written in the document
	// Embedded are the other certificates KeyInfo carries (a CA chain, when
	// the signer included it), for building the certificate's chain. They
	// are not checked here.
	Embedded []*x509.Certificate
}

// Verify checks the enveloped signature of a whole document (a CFE, a DGI CAE
// file, a daily report): the last child of the root must be a Signature in
// DGI's profile (inclusive C14N 1.0, one Reference URI="", enveloped-signature
// transform), the digest of the document without it must equal DigestValue,
// and SignatureValue must verify with the certificate's key. Certificate chain
// and validity dates are not checked: that is a policy of the caller (Trust,
// CertRUC).
//
// Errors: EINVALID, with cause ErrNotSigned, ErrDigestMismatch (the content was
// changed), ErrBadSignature (wrong key or changed SignedInfo), or a description
// of what breaks the profile or the XML.
func Verify(signed []byte, opts VerifyOptions) (*Verified, error) {
	doc, err := parseXML(signed)
	if err != nil {
		return nil, invalid("signer.Verify", err.Error(), nil)
	}
	return verifyDocument(doc, opts)
}

// signature holds what Verify reads from a Signature element.
type signature struct {
	el             *etree.Element
	signedInfo     *etree.Element
	algorithm      Algorithm
	hash           crypto.Hash // of the signature method
	digestHash     crypto.Hash
	digestValue    string // base64, as written
	digest         []byte // digestValue decoded
	signatureValue []byte
	certificates   [][]byte // X509Certificate values, DER
	serial         *big.Int // X509IssuerSerial/X509SerialNumber, if present
}

func verifyDocument(doc *etree.Document, opts VerifyOptions) (*Verified, error) {
	const op = "signer.Verify"
	root := doc.Root()
	sigEl := lastChildElement(root)
	if sigEl == nil || sigEl.Tag != dsig.SignatureTag || sigEl.NamespaceURI() != nsDSig {
		return nil, invalid(op, fmt.Sprintf("el documento no está firmado: falta Signature como último elemento de <%s>", root.FullTag()), ErrNotSigned)
	}
	sig, err := readSignature(sigEl)
	if err != nil {
		return nil, invalid(op, "la firma no sigue el perfil de DGI: "+err.Error(), nil)
	}
	cert, err := sig.certificate(opts.Certificate)
	if err != nil {
		return nil, invalid(op, err.Error(), nil)
	}
	pub, err := rsaPublicKey(cert)
	if err != nil {
		return nil, invalid(op, err.Error(), nil)
	}

	signedInfo, err := sig.canonicalSignedInfo()
	if err != nil {
		return nil, invalid(op, "no se pudo canonicalizar SignedInfo", err)
	}
	h := sig.hash.New()
	h.Write(signedInfo)
	if err := rsa.VerifyPKCS1v15(pub, sig.hash, h.Sum(nil), sig.signatureValue); err != nil {
		return nil, invalid(op, fmt.Sprintf("la firma no es válida con el certificado %q", cert.Subject.CommonName), fmt.Errorf("%w: %w", ErrBadSignature, err))
	}

	// The enveloped-signature transform: the root without its Signature.
	// The canonicalizer copies what it is given, so the Signature is taken
	// out of the parsed tree for it and put back after, instead of copying
	// the whole document once more.
	at := sigEl.Index()
	root.RemoveChildAt(at)
	canonical, err := dsig.MakeC14N10RecCanonicalizer().Canonicalize(root)
	root.InsertChildAt(at, sigEl)
	if err != nil {
		return nil, invalid(op, "no se pudo canonicalizar el documento", err)
	}
	d := sig.digestHash.New()
	d.Write(canonical)
	if !bytes.Equal(d.Sum(nil), sig.digest) {
		return nil, invalid(op, "el documento fue modificado después de firmarlo (DigestValue no coincide)", ErrDigestMismatch)
	}
	return &Verified{Certificate: cert, Algorithm: sig.algorithm, DigestAlgorithm: sig.digestHash, DigestValue: sig.digestValue,
		Embedded: sig.others(cert)}, nil
}

// others returns the certificates of KeyInfo other than cert, skipping any
// that does not parse (the signature check does not depend on them).
func (s *signature) others(cert *x509.Certificate) []*x509.Certificate {
	var out []*x509.Certificate
	for _, der := range s.certificates {
		if bytes.Equal(der, cert.Raw) {
			continue // the signing certificate, parsed already
		}
		if c, err := x509.ParseCertificate(der); err == nil && !c.Equal(cert) {
			out = append(out, c)
		}
	}
	return out
}

// readSignature reads a Signature element and checks it follows DGI's profile.
func readSignature(el *etree.Element) (*signature, error) {
	s := &signature{el: el}
	var err error
	if s.signedInfo, err = oneChild(el, nsDSig, "SignedInfo"); err != nil {
		return nil, err
	}
	c14n, err := algorithmOf(s.signedInfo, "CanonicalizationMethod")
	if err != nil {
		return nil, err
	}
	if c14n != string(dsig.CanonicalXML10RecAlgorithmId) {
		return nil, fmt.Errorf("CanonicalizationMethod %q no admitido (se espera C14N 1.0 inclusivo)", c14n)
	}
	method, err := algorithmOf(s.signedInfo, "SignatureMethod")
	if err != nil {
		return nil, err
	}
	for alg, a := range algorithms {
		if a.signatureMethod == method {
			s.algorithm, s.hash = alg, a.hash
		}
	}
	if s.algorithm == "" {
		return nil, fmt.Errorf("SignatureMethod %q no admitido (se espera rsa-sha1 o rsa-sha256)", method)
	}

	ref, err := oneChild(s.signedInfo, nsDSig, "Reference")
	if err != nil {
		return nil, err
	}
	if uri := ref.SelectAttr("URI"); uri == nil || uri.Value != "" {
		return nil, errors.New(`la Reference debe tener URI="" (todo el documento)`)
	}
	if err := checkTransforms(ref); err != nil {
		return nil, err
	}
	dm, err := algorithmOf(ref, "DigestMethod")
	if err != nil {
		return nil, err
	}
	var ok bool
	if s.digestHash, ok = digestMethods[dm]; !ok {
		return nil, fmt.Errorf("DigestMethod %q no admitido (se espera sha1 o sha256)", dm)
	}
	dv, err := oneChild(ref, nsDSig, "DigestValue")
	if err != nil {
		return nil, err
	}
	s.digestValue = strings.TrimSpace(dv.Text())
	if s.digest, err = base64.StdEncoding.DecodeString(s.digestValue); err != nil || len(s.digest) != s.digestHash.Size() {
		return nil, errors.New("DigestValue no es un resumen en base64 del largo esperado")
	}

	sv, err := oneChild(el, nsDSig, "SignatureValue")
	if err != nil {
		return nil, err
	}
	if s.signatureValue, err = decodeBase64(sv.Text()); err != nil {
		return nil, errors.New("SignatureValue no es base64")
	}
	if err := s.readKeyInfo(); err != nil {
		return nil, err
	}
	return s, nil
}

// checkTransforms accepts DGI's transforms: enveloped-signature, then
// optionally inclusive C14N 1.0 (the default for a node-set anyway).
func checkTransforms(ref *etree.Element) error {
	ts, err := oneChild(ref, nsDSig, "Transforms")
	if err != nil {
		return err
	}
	var algs []string
	for _, t := range childElements(ts, nsDSig, "Transform") {
		algs = append(algs, t.SelectAttrValue("Algorithm", ""))
	}
	enveloped, c14n := string(dsig.EnvelopedSignatureAltorithmId), string(dsig.CanonicalXML10RecAlgorithmId)
	if len(algs) == 0 || algs[0] != enveloped || len(algs) > 2 || (len(algs) == 2 && algs[1] != c14n) {
		return fmt.Errorf("Transforms %q no admitidos (se espera enveloped-signature y C14N 1.0)", algs)
	}
	return nil
}

// readKeyInfo reads the optional KeyInfo/X509Data: certificates and the
// serial number of X509IssuerSerial.
func (s *signature) readKeyInfo() error {
	for _, ki := range childElements(s.el, nsDSig, "KeyInfo") {
		for _, xd := range childElements(ki, nsDSig, "X509Data") {
			for _, c := range childElements(xd, nsDSig, "X509Certificate") {
				der, err := decodeBase64(c.Text())
				if err != nil {
					return errors.New("X509Certificate no es base64")
				}
				s.certificates = append(s.certificates, der)
			}
			for _, is := range childElements(xd, nsDSig, "X509IssuerSerial") {
				sn, err := oneChild(is, nsDSig, "X509SerialNumber")
				if err != nil {
					return err
				}
				serial, ok := new(big.Int).SetString(strings.TrimSpace(sn.Text()), 10)
				if !ok {
					return errors.New("X509SerialNumber no es un número decimal")
				}
				s.serial = serial
			}
		}
	}
	return nil
}

// certificate chooses the certificate to verify with: the caller's, else the
// one in KeyInfo. When X509IssuerSerial is present it must name that
// certificate.
func (s *signature) certificate(given *x509.Certificate) (*x509.Certificate, error) {
	cert := given
	if cert == nil {
		var err error
		if cert, err = s.embeddedCertificate(); err != nil {
			return nil, err
		}
	}
	if s.serial != nil && s.serial.Cmp(cert.SerialNumber) != 0 {
		return nil, fmt.Errorf("X509IssuerSerial nombra el certificado de número de serie %s, no el %s de %q", s.serial, cert.SerialNumber, cert.Subject.CommonName)
	}
	return cert, nil
}

// embeddedCertificate returns the X509Certificate of KeyInfo that
// X509IssuerSerial names, or the first one.
func (s *signature) embeddedCertificate() (*x509.Certificate, error) {
	if len(s.certificates) == 0 {
		return nil, errors.New("la firma no incluye el certificado (X509Certificate) y no se indicó con cuál verificarla")
	}
	var first *x509.Certificate
	for _, der := range s.certificates {
		c, err := x509.ParseCertificate(der)
		if err != nil {
			return nil, fmt.Errorf("el certificado de KeyInfo no se puede leer: %w", err)
		}
		if s.serial == nil || s.serial.Cmp(c.SerialNumber) == 0 {
			return c, nil
		}
		if first == nil {
			first = c
		}
	}
	return first, nil
}

// canonicalSignedInfo returns SignedInfo in inclusive C14N 1.0, with the
// namespace declarations it inherits from Signature and the root, as a
// conforming verifier computes it.
func (s *signature) canonicalSignedInfo() ([]byte, error) {
	ctx, err := etreeutils.NSBuildParentContext(s.el)
	if err != nil {
		return nil, err
	}
	if ctx, err = ctx.SubContext(s.el); err != nil {
		return nil, err
	}
	detached, err := etreeutils.NSDetatch(ctx, s.signedInfo)
	if err != nil {
		return nil, err
	}
	return dsig.MakeC14N10RecCanonicalizer().Canonicalize(detached)
}

// algorithmOf returns the Algorithm attribute of el's only child named tag.
func algorithmOf(el *etree.Element, tag string) (string, error) {
	c, err := oneChild(el, nsDSig, tag)
	if err != nil {
		return "", err
	}
	return c.SelectAttrValue("Algorithm", ""), nil
}

// decodeBase64 decodes base64 text that may be wrapped in lines.
func decodeBase64(s string) ([]byte, error) {
	return base64.StdEncoding.DecodeString(strings.Join(strings.Fields(s), ""))
}
