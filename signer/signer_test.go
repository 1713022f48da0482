package signer

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/beevik/etree"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

func TestSigner_Sign_EveryElectronicType(t *testing.T) {
	t.Parallel()
	s := newTestSigner(t, RSASHA1)
	xsd := testtool.XSD(t, "CFEDGI.xsd")
	types := cfe.ElectronicTypes()
	if len(types) != 21 {
		t.Fatalf("cfe.ElectronicTypes() has %d types, want DGI's 21", len(types))
	}
	for _, typ := range types {
		t.Run(typ.String(), func(t *testing.T) {
			unsigned := unsignedCFE(t, typ, 3)
			signed := sign(t, s, unsigned)

			mustXMLSecVerify(t, signed.XML)
			testtool.MustValidateXSD(t, xsd, signed.XML)

			// The digest is SHA-1 over libxml2's canonical form of the unsigned
			// document: the enveloped transform removes exactly what Sign added.
			if want := sha1Base64(xmllintC14N(t, unsigned)); signed.DigestValue != want {
				t.Errorf("DigestValue %s, libxml2's C14N hashes to %s", signed.DigestValue, want)
			}
			v, err := Verify(signed.XML, VerifyOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if v.DigestValue != signed.DigestValue || !v.Certificate.Equal(s.Certificate()) || v.Algorithm != RSASHA1 {
				t.Errorf("Verify = %+v, want digest %s by the signer's certificate", v, signed.DigestValue)
			}
		})
	}
}

func TestSigner_Sign_KeepsBytesAndAppendsSignature(t *testing.T) {
	t.Parallel()
	s := newTestSigner(t, RSASHA1)
	unsigned := unsignedCFE(t, cfe.EFactura, 2)
	signed := sign(t, s, unsigned)

	head, tail := unsigned[:len(unsigned)-len("</CFE>")], []byte("</CFE>")
	if !bytes.HasSuffix(unsigned, tail) {
		t.Fatalf("fixture does not end with </CFE>: %q", unsigned[len(unsigned)-20:])
	}
	if !bytes.HasPrefix(signed.XML, head) || !bytes.HasSuffix(signed.XML, append([]byte("</Signature>"), tail...)) {
		t.Fatal("signed document is not the unsigned bytes with Signature inserted before </CFE>")
	}
	sig := signed.XML[len(head) : len(signed.XML)-len(tail)]
	if !bytes.HasPrefix(sig, []byte(`<Signature xmlns="http://www.w3.org/2000/09/xmldsig#"><SignedInfo>`)) {
		t.Errorf("signature does not start as DGI's unprefixed one: %.80s", sig)
	}
	if bytes.ContainsAny(sig, "\r\n\t") {
		t.Error("signature is not compact")
	}

	// Trailing white space after the root stays where it was.
	signedNL := sign(t, s, append(bytes.Clone(unsigned), "\n"...))
	if !bytes.Equal(signedNL.XML, append(bytes.Clone(signed.XML), "\n"...)) {
		t.Error("a trailing newline changed more than itself")
	}
}

func TestSigner_Sign_Profile(t *testing.T) {
	t.Parallel()
	s := newTestSigner(t, RSASHA1)
	signed := sign(t, s, unsignedCFE(t, cfe.ETicket, 1))
	doc := etree.NewDocument()
	if err := doc.ReadFromBytes(signed.XML); err != nil {
		t.Fatal(err)
	}
	root := doc.Root()
	last := root.ChildElements()[len(root.ChildElements())-1]
	if last.FullTag() != "Signature" || last.NamespaceURI() != nsDSig {
		t.Fatalf("last child of CFE is %s in %q, want an unprefixed xmldsig Signature", last.FullTag(), last.NamespaceURI())
	}
	want := map[string]string{
		"SignedInfo/CanonicalizationMethod/@Algorithm":            "http://www.w3.org/TR/2001/REC-xml-c14n-20010315",
		"SignedInfo/SignatureMethod/@Algorithm":                   "http://www.w3.org/2000/09/xmldsig#rsa-sha1",
		"SignedInfo/Reference/@URI":                               "",
		"SignedInfo/Reference/Transforms/Transform[1]/@Algorithm": "http://www.w3.org/2000/09/xmldsig#enveloped-signature",
		"SignedInfo/Reference/Transforms/Transform[2]/@Algorithm": "http://www.w3.org/TR/2001/REC-xml-c14n-20010315",
		"SignedInfo/Reference/DigestMethod/@Algorithm":            "http://www.w3.org/2000/09/xmldsig#sha1",
		"SignedInfo/Reference/DigestValue":                        signed.DigestValue,
		"KeyInfo/X509Data/X509IssuerSerial/X509IssuerName":        s.Certificate().Issuer.String(),
		"KeyInfo/X509Data/X509IssuerSerial/X509SerialNumber":      s.Certificate().SerialNumber.String(),
		"KeyInfo/X509Data/X509Certificate":                        base64.StdEncoding.EncodeToString(s.Certificate().Raw),
	}
	for path, v := range want {
		if got := valueAt(t, last, path); got != v {
			t.Errorf("%s = %q, want %q", path, got, v)
		}
	}
	if n := len(last.FindElements("SignedInfo/Reference")); n != 1 {
		t.Errorf("%d References, want 1", n)
	}
	if n := len(last.FindElements("SignedInfo/Reference/Transforms/Transform")); n != 2 {
		t.Errorf("%d Transforms, want 2", n)
	}
	// X509Certificate before X509IssuerSerial, as in DGI's examples.
	var order []string
	for _, c := range last.FindElement("KeyInfo/X509Data").ChildElements() {
		order = append(order, c.Tag)
	}
	if strings.Join(order, ",") != "X509Certificate,X509IssuerSerial" {
		t.Errorf("X509Data holds %v", order)
	}
	if !regexp.MustCompile(`^\d{1,20}$`).MatchString(s.Certificate().SerialNumber.String()) {
		t.Errorf("test certificate serial %s has more than 20 digits", s.Certificate().SerialNumber)
	}
}

// valueAt reads an element's text, or an attribute with a final "/@name".
func valueAt(t *testing.T, el *etree.Element, path string) string {
	t.Helper()
	attr := ""
	if i := strings.Index(path, "/@"); i >= 0 {
		path, attr = path[:i], path[i+2:]
	}
	e := el.FindElement(path)
	if e == nil {
		t.Fatalf("no %s in the signature", path)
	}
	if attr == "" {
		return e.Text()
	}
	a := e.SelectAttr(attr)
	if a == nil {
		t.Fatalf("no attribute %s on %s", attr, path)
	}
	return a.Value
}

func TestSigner_Sign_Algorithms(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		alg                  Algorithm
		method, digestMethod string
		digestLen            int
	}{
		{RSASHA1, "http://www.w3.org/2000/09/xmldsig#rsa-sha1", "http://www.w3.org/2000/09/xmldsig#sha1", 20},
		{RSASHA256, "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256", "http://www.w3.org/2001/04/xmlenc#sha256", 32},
	} {
		t.Run(string(tc.alg), func(t *testing.T) {
			s := newTestSigner(t, tc.alg)
			signed := sign(t, s, unsignedCFE(t, cfe.ETicket, 4))
			mustXMLSecVerify(t, signed.XML)
			for _, uri := range []string{tc.method, tc.digestMethod} {
				if !bytes.Contains(signed.XML, []byte(`Algorithm="`+uri+`"`)) {
					t.Errorf("signature does not use %s", uri)
				}
			}
			if d, _ := base64.StdEncoding.DecodeString(signed.DigestValue); len(d) != tc.digestLen {
				t.Errorf("DigestValue has %d bytes, want %d", len(d), tc.digestLen)
			}
			v, err := Verify(signed.XML, VerifyOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if v.Algorithm != tc.alg {
				t.Errorf("Verify reports %s", v.Algorithm)
			}
		})
	}
}

// TestSigner_Sign_DGISampleContent signs the content of DGI's own signed
// examples again: the digest must be the one DGI computed, whatever the prefix,
// CRLF line ends or redundant namespace declarations (182) of the content.
func TestSigner_Sign_DGISampleContent(t *testing.T) {
	t.Parallel()
	s := newTestSigner(t, RSASHA1)
	cert := caratulaCert(t)
	files, _ := filepath.Glob(filepath.Join(samplesDir(t), "extracted-cfe", "*.xml"))
	if len(files) == 0 {
		t.Fatal("no DGI samples")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			original := readFile(t, f)
			dgi, err := Verify(original, VerifyOptions{Certificate: cert})
			if err != nil {
				t.Fatal(err)
			}
			i, j := bytes.Index(original, []byte("<Signature")), bytes.LastIndex(original, []byte("</Signature>"))
			unsigned := append(bytes.Clone(original[:i]), original[j+len("</Signature>"):]...)

			signed := sign(t, s, unsigned)
			if signed.DigestValue != dgi.DigestValue {
				t.Errorf("DigestValue %s, DGI's is %s", signed.DigestValue, dgi.DigestValue)
			}
			mustXMLSecVerify(t, signed.XML)
		})
	}
}

func TestSigner_Sign_ISO88591(t *testing.T) {
	t.Parallel()
	s := newTestSigner(t, RSASHA1)
	utf8Doc := unsignedCFE(t, cfe.ETicket, 2)
	latin1 := bytes.Replace(toLatin1(t, utf8Doc), []byte(`encoding="UTF-8"`), []byte(`encoding="ISO-8859-1"`), 1)
	if bytes.Equal(latin1, utf8Doc) || !bytes.Contains(latin1, []byte{0xD1}) { // Ñ
		t.Fatal("fixture did not become ISO-8859-1")
	}
	signed := sign(t, s, latin1)
	mustXMLSecVerify(t, signed.XML)
	if want := sign(t, s, utf8Doc).DigestValue; signed.DigestValue != want {
		t.Errorf("same content in ISO-8859-1 digests to %s, in UTF-8 to %s", signed.DigestValue, want)
	}
	if _, err := Verify(signed.XML, VerifyOptions{}); err != nil {
		t.Fatal(err)
	}
}

func toLatin1(t *testing.T, b []byte) []byte {
	var out []byte
	for _, r := range string(b) {
		if r > 0xFF {
			t.Fatalf("%q is not in ISO-8859-1", r)
		}
		out = append(out, byte(r))
	}
	return out
}

func TestSigner_Sign_Rejects(t *testing.T) {
	t.Parallel()
	s := newTestSigner(t, RSASHA1)
	good := unsignedCFE(t, cfe.ETicket, 1)
	signed := sign(t, s, good)
	for _, tc := range []struct {
		name string
		doc  []byte
		msg  string
	}{
		{"already signed", signed.XML, "ya está firmado"},
		{"not XML", []byte("hola"), "XML mal formado"},
		{"unclosed root", good[:len(good)-3], "XML mal formado"},
		{"two roots", append(bytes.Clone(good), "<CFE/>"...), "exactamente un elemento raíz"},
		{"comment after root", append(bytes.Clone(good), "<!-- x -->"...), "solo se admiten espacios"},
		{"doctype", bytes.Replace(good, []byte("<CFE "), []byte("<!DOCTYPE CFE><CFE "), 1), "DOCTYPE"},
		{"processing instruction", bytes.Replace(good, []byte("<CFE "), []byte("<?pi x?><CFE "), 1), "instrucciones de procesamiento"},
		{"xml:lang on root", bytes.Replace(good, []byte("<CFE "), []byte(`<CFE xml:lang="es" `), 1), "xml:lang"},
		{"newline in attribute", bytes.Replace(good, []byte(`version="1.0">`), []byte("version=\"1.0\n\">"), 1), "saltos de línea"},
		{"undeclared element prefix", bytes.Replace(good, []byte("<eTck>"), []byte("<eTck><p:x/>"), 1), `prefijo "p"`},
		{"undeclared attribute prefix", bytes.Replace(good, []byte("<eTck>"), []byte(`<eTck p:a="1">`), 1), `prefijo "p"`},
		{"unknown encoding", bytes.Replace(good, []byte(`encoding="UTF-8"`), []byte(`encoding="KOI8-R"`), 1), "KOI8-R"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.Sign(tc.doc)
			if cfe.ErrorCode(err) != cfe.EINVALID || !strings.Contains(cfe.ErrorMessage(err), tc.msg) {
				t.Fatalf("Sign = %v, want EINVALID saying %q", err, tc.msg)
			}
		})
	}
}

func TestSigner_Sign_CertificateValidity(t *testing.T) {
	t.Parallel()
	c := testCredentials(t)
	for _, tc := range []struct {
		name string
		now  time.Time
		msg  string
	}{
		{"expired", c.Certificate.NotAfter.Add(time.Second), "venció"},
		{"not yet valid", c.Certificate.NotBefore.Add(-time.Second), "válido recién"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(Config{Credentials: c, Now: func() time.Time { return tc.now }})
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.Sign(unsignedCFE(t, cfe.ETicket, 1))
			if cfe.ErrorCode(err) != cfe.EUNAVAILABLE || cfe.RespuestaOf(err) != cfe.RespCertificado ||
				!errors.Is(err, ErrCertificateExpired) || !strings.Contains(cfe.ErrorMessage(err), tc.msg) {
				t.Fatalf("Sign = %v (respuesta %s), want EUNAVAILABLE/%s saying %q", err, cfe.RespuestaOf(err), cfe.RespCertificado, tc.msg)
			}
		})
	}
	// The last second of validity still signs.
	s, err := New(Config{Credentials: c, Now: func() time.Time { return c.Certificate.NotAfter }})
	if err != nil {
		t.Fatal(err)
	}
	sign(t, s, unsignedCFE(t, cfe.ETicket, 1))
}

// TestSigner_Sign_Concurrent signs from many goroutines at once (run it with
// -race). RSA PKCS#1 v1.5 is deterministic, so every goroutine must produce
// exactly the bytes one goroutine produces alone.
func TestSigner_Sign_Concurrent(t *testing.T) {
	t.Parallel()
	s := newTestSigner(t, RSASHA1)
	docs := make([][]byte, 4)
	want := make([][]byte, len(docs))
	for i := range docs {
		docs[i] = unsignedCFE(t, cfe.ElectronicTypes()[i], i+1)
		want[i] = sign(t, s, docs[i]).XML
	}
	const workers, rounds = 8, 10
	var wg sync.WaitGroup
	errs := make(chan error, workers*rounds)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				i := (w + r) % len(docs)
				got, err := s.Sign(docs[i])
				if err == nil && !bytes.Equal(got.XML, want[i]) {
					err = errors.New("concurrent signature differs from the sequential one")
				}
				if err == nil {
					_, err = Verify(got.XML, VerifyOptions{})
				}
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestNew(t *testing.T) {
	t.Parallel()
	c := testCredentials(t)
	other, err := GenerateTestCertificate(fixtureRUC, "Otra S.A.", testNow)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		cfg  Config
		msg  string
	}{
		{"no credentials", Config{}, "falta la clave"},
		{"no certificate", Config{Credentials: &Credentials{Key: c.Key}}, "falta la clave"},
		{"key of another certificate", Config{Credentials: &Credentials{Key: other.Key, Certificate: c.Certificate}}, "no corresponde al certificado"},
		{"non-RSA key", Config{Credentials: &Credentials{Key: ecKey, Certificate: c.Certificate}}, "no corresponde al certificado"},
		{"unknown algorithm", Config{Credentials: c, Algorithm: "rsa-md5"}, `"rsa-md5" no admitido`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.cfg)
			if cfe.ErrorCode(err) != cfe.EINVALID || !strings.Contains(cfe.ErrorMessage(err), tc.msg) {
				t.Fatalf("New = %v, want EINVALID saying %q", err, tc.msg)
			}
		})
	}
	s, err := New(Config{Credentials: c})
	if err != nil {
		t.Fatal(err)
	}
	if s.Algorithm() != RSASHA1 {
		t.Errorf("default algorithm %s, want rsa-sha1", s.Algorithm())
	}
}

// TestSigner_SignCanonical_SameAsSign gives SignCanonical documents in
// libxml2's canonical form, CFEs of every type and DGI's samples (whose root
// declares a prefix, which canonical SignedInfo must repeat): the result must
// be byte for byte Sign's, which parses and canonicalizes by itself, and
// xmlsec1 must accept it.
func TestSigner_SignCanonical_SameAsSign(t *testing.T) {
	t.Parallel()
	s := newTestSigner(t, RSASHA1)
	docs := map[string][]byte{}
	for _, typ := range cfe.ElectronicTypes() {
		docs[typ.String()] = unsignedCFE(t, typ, 3)
	}
	files, _ := filepath.Glob(filepath.Join(samplesDir(t), "extracted-cfe", "*.xml"))
	for _, f := range files {
		original := readFile(t, f)
		i, j := bytes.Index(original, []byte("<Signature")), bytes.LastIndex(original, []byte("</Signature>"))
		docs[filepath.Base(f)] = append(bytes.Clone(original[:i]), original[j+len("</Signature>"):]...)
	}
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			canonical := xmllintC14N(t, doc)
			got, err := s.SignCanonical(canonical)
			if err != nil {
				t.Fatal(err)
			}
			want := sign(t, s, canonical)
			if !bytes.Equal(got.XML, want.XML) || got.DigestValue != want.DigestValue {
				t.Fatalf("SignCanonical differs from Sign:\n got %s\nwant %s", got.XML, want.XML)
			}
			if fromOriginal := sign(t, s, doc); fromOriginal.DigestValue != got.DigestValue {
				t.Errorf("DigestValue %s, Sign of the original gives %s", got.DigestValue, fromOriginal.DigestValue)
			}
			mustXMLSecVerify(t, got.XML)
		})
	}
	// Trailing white space stays after the root and is not digested.
	canonical := xmllintC14N(t, docs[cfe.ETicket.String()])
	nl, err := s.SignCanonical(append(bytes.Clone(canonical), "\n"...))
	if err != nil {
		t.Fatal(err)
	}
	if want := sign(t, s, canonical); !bytes.Equal(nl.XML, append(want.XML, "\n"...)) {
		t.Error("a trailing newline changed more than itself")
	}
}

func TestSigner_SignCanonical_Rejects(t *testing.T) {
	t.Parallel()
	s := newTestSigner(t, RSASHA1)
	good := xmllintC14N(t, unsignedCFE(t, cfe.ETicket, 1))
	signed, err := s.SignCanonical(good)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		doc  []byte
		msg  string
	}{
		{"already signed", signed.XML, "ya está firmado"},
		{"XML declaration", append([]byte(`<?xml version="1.0"?>`), good...), "forma canónica"},
		{"not XML", []byte("hola"), "forma canónica"},
		{"empty", nil, "XML mal formado"},
		{"other end tag", append(bytes.TrimSuffix(good, []byte("</CFE>")), "</eTck>"...), "después de </CFE>"},
		{"text after root", append(bytes.Clone(good), "x"...), "después de </CFE>"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.SignCanonical(tc.doc)
			if cfe.ErrorCode(err) != cfe.EINVALID || !strings.Contains(cfe.ErrorMessage(err), tc.msg) {
				t.Fatalf("SignCanonical = %v, want EINVALID saying %q", err, tc.msg)
			}
		})
	}
}
