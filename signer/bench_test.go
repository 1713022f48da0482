package signer

import (
	"bytes"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// realisticCFE is an unsigned e-Factura of about 5 KB (17 lines).
func realisticCFE(tb testing.TB) []byte {
	tb.Helper()
	doc := unsignedCFE(tb, cfe.EFactura, 17)
	if n := len(doc); n < 4500 || n > 5500 {
		tb.Fatalf("realistic CFE is %d bytes, want about 5 KB", n)
	}
	return doc
}

// xmlsecTemplate inserts the empty Signature xmlsec1 --sign fills in: DGI's
// profile with rsa-sha1.
func xmlsecTemplate(tb testing.TB, unsigned []byte) []byte {
	tb.Helper()
	const tmpl = `<Signature xmlns="http://www.w3.org/2000/09/xmldsig#"><SignedInfo>` +
		`<CanonicalizationMethod Algorithm="http://www.w3.org/TR/2001/REC-xml-c14n-20010315"/>` +
		`<SignatureMethod Algorithm="http://www.w3.org/2000/09/xmldsig#rsa-sha1"/>` +
		`<Reference URI=""><Transforms>` +
		`<Transform Algorithm="http://www.w3.org/2000/09/xmldsig#enveloped-signature"/>` +
		`<Transform Algorithm="http://www.w3.org/TR/2001/REC-xml-c14n-20010315"/>` +
		`</Transforms><DigestMethod Algorithm="http://www.w3.org/2000/09/xmldsig#sha1"/><DigestValue/></Reference>` +
		`</SignedInfo><SignatureValue/><KeyInfo><X509Data><X509Certificate/></X509Data></KeyInfo></Signature>`
	end := bytes.LastIndex(unsigned, []byte("</CFE>"))
	if end < 0 {
		tb.Fatal("no </CFE>")
	}
	return append(append(bytes.Clone(unsigned[:end]), tmpl...), unsigned[end:]...)
}

// xmlsecSign signs the template file with the xmlsec1 CLI.
func xmlsecSign(tb testing.TB, bin, tmplFile, keyFile, certFile, outFile string) {
	out, err := exec.Command(bin, "--sign", "--privkey-pem", keyFile+","+certFile, "--output", outFile, tmplFile).CombinedOutput()
	if err != nil {
		tb.Fatalf("xmlsec1 --sign: %v\n%s", err, out)
	}
}

var (
	digestRE         = regexp.MustCompile(`<DigestValue>([^<]+)</DigestValue>`)
	signatureValueRE = regexp.MustCompile(`<SignatureValue>([^<]+)</SignatureValue>`)
)

// TestSigner_Sign_MatchesXMLSec1 signs one document with xmlsec1 and with
// Sign. RSA PKCS#1 v1.5 is deterministic: equal SignatureValues mean both
// canonicalized SignedInfo (namespaces included) to the same bytes.
func TestSigner_Sign_MatchesXMLSec1(t *testing.T) {
	t.Parallel()
	bin := testtool.Require(t, "xmlsec1")
	s := newTestSigner(t, RSASHA1)
	certFile, keyFile := writePEM(t, testCredentials(t))
	unsigned := realisticCFE(t)
	dir := t.TempDir()
	tmplFile, outFile := filepath.Join(dir, "tmpl.xml"), filepath.Join(dir, "out.xml")
	if err := os.WriteFile(tmplFile, xmlsecTemplate(t, unsigned), 0o600); err != nil {
		t.Fatal(err)
	}
	xmlsecSign(t, bin, tmplFile, keyFile, certFile, outFile)
	theirs := readFile(t, outFile)
	ours := sign(t, s, unsigned).XML
	for name, re := range map[string]*regexp.Regexp{"DigestValue": digestRE, "SignatureValue": signatureValueRE} {
		a, b := re.FindSubmatch(ours), re.FindSubmatch(theirs)
		if a == nil || b == nil {
			t.Fatalf("%s missing: ours %v, xmlsec1's %v", name, a != nil, b != nil)
		}
		if !bytes.Equal(bytes.Join(bytes.Fields(a[1]), nil), bytes.Join(bytes.Fields(b[1]), nil)) {
			t.Errorf("%s differs:\nours    %s\nxmlsec1 %s", name, a[1], b[1])
		}
	}
}

func BenchmarkSign(b *testing.B) {
	s := newTestSigner(b, RSASHA1)
	doc := realisticCFE(b)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Sign(doc); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSignParallel(b *testing.B) {
	s := newTestSigner(b, RSASHA1)
	doc := realisticCFE(b)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.Sign(doc); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkSignCanonicalParallel is the issuer's path: a canonical document
// signed without parsing, from every core.
func BenchmarkSignCanonicalParallel(b *testing.B) {
	s := newTestSigner(b, RSASHA1)
	doc := xmllintC14N(b, realisticCFE(b))
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := s.SignCanonical(doc); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkRSA2048Sign is the floor: one raw RSA-2048 PKCS#1 v1.5 signature
// of a SHA-1 digest, what Sign does once per document.
func BenchmarkRSA2048Sign(b *testing.B) {
	key := testCredentials(b).Key.(*rsa.PrivateKey)
	digest := sha1.Sum(realisticCFE(b))
	for b.Loop() {
		if _, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA1, digest[:]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerify(b *testing.B) {
	signed := sign(b, newTestSigner(b, RSASHA1), realisticCFE(b)).XML
	b.SetBytes(int64(len(signed)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Verify(signed, VerifyOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkXmlsec1Sign runs the xmlsec1 CLI on the same document, one process
// per signature, for comparison.
func BenchmarkXmlsec1Sign(b *testing.B) {
	bin := testtool.Require(b, "xmlsec1")
	certFile, keyFile := writePEM(b, testCredentials(b))
	dir := b.TempDir()
	tmplFile, outFile := filepath.Join(dir, "tmpl.xml"), filepath.Join(dir, "out.xml")
	if err := os.WriteFile(tmplFile, xmlsecTemplate(b, realisticCFE(b)), 0o600); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		xmlsecSign(b, bin, tmplFile, keyFile, certFile, outFile)
	}
}
