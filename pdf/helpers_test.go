package pdf

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// Tests render signed XML only. Documents of the types DGI's samples do not
// cover are built from the model, marshalled with cfe.MarshalXML, checked
// against DGI's XSD, and signed by xmlsec1 (an independent implementation
// of XML-DSig) with DGI's profile and a throw-away key.

// sampleCFE returns one of DGI's signed sample CFEs (shared/dgi/samples).
func sampleCFE(t testing.TB, name string) []byte { return testtool.DGISample(t, name) }

// signatureTemplate is an empty enveloped signature in DGI's profile
// (inclusive C14N 1.0, RSA-SHA1, Reference URI=""), which xmlsec1 fills in.
const signatureTemplate = `<Signature xmlns="http://www.w3.org/2000/09/xmldsig#"><SignedInfo>` +
	`<CanonicalizationMethod Algorithm="http://www.w3.org/TR/2001/REC-xml-c14n-20010315"/>` +
	`<SignatureMethod Algorithm="http://www.w3.org/2000/09/xmldsig#rsa-sha1"/>` +
	`<Reference URI=""><Transforms>` +
	`<Transform Algorithm="http://www.w3.org/2000/09/xmldsig#enveloped-signature"/>` +
	`<Transform Algorithm="http://www.w3.org/TR/2001/REC-xml-c14n-20010315"/></Transforms>` +
	`<DigestMethod Algorithm="http://www.w3.org/2000/09/xmldsig#sha1"/><DigestValue/></Reference>` +
	`</SignedInfo><SignatureValue/><KeyInfo><X509Data><X509Certificate/></X509Data></KeyInfo></Signature>`

// signingKey is a key and certificate in PEM files, made once per test run.
var signingKey = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "pdf-test-key-")
	if err != nil {
		return "", err
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "cfe-agent pdf tests"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return "", err
	}
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := os.WriteFile(filepath.Join(dir, "key.pem"), keyPEM, 0o600); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "cert.pem"), certPEM, 0o600); err != nil {
		return "", err
	}
	return dir, nil
})

func TestMain(m *testing.M) {
	code := m.Run()
	if dir, err := signingKey(); err == nil {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

// signed returns c signed by xmlsec1; DGI's XSD must accept the result.
func signed(t testing.TB, c *cfe.CFE) []byte {
	t.Helper()
	xmlsec := testtool.Require(t, "xmlsec1")
	unsigned, err := cfe.MarshalXML(c)
	if err != nil {
		t.Fatalf("MarshalXML: %v", err)
	}
	end := bytes.LastIndex(unsigned, []byte("</CFE>"))
	if end < 0 {
		t.Fatalf("no </CFE> in %s", unsigned)
	}
	tmpl := append(append(bytes.Clone(unsigned[:end]), signatureTemplate...), unsigned[end:]...)
	dir, err := signingKey()
	if err != nil {
		t.Fatalf("test key: %v", err)
	}
	work := t.TempDir()
	in, out := filepath.Join(work, "in.xml"), filepath.Join(work, "out.xml")
	if err := os.WriteFile(in, tmpl, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(xmlsec, "--sign", "--privkey-pem",
		filepath.Join(dir, "key.pem")+","+filepath.Join(dir, "cert.pem"), "--output", out, in)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("xmlsec1 --sign: %v\n%s", err, msg)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// xmlsec1 writes an XML declaration; a signed CFE as the agent keeps it
	// has none, and the declaration is outside what is signed.
	if i := bytes.Index(b, []byte("?>")); bytes.HasPrefix(b, []byte("<?xml")) && i > 0 {
		b = bytes.TrimLeft(b[i+2:], "\r\n")
	}
	testtool.MustValidateXSD(t, testtool.XSD(t, "CFEDGI.xsd"), b)
	return b
}

// render renders or fails the test.
func render(t testing.TB, signedXML []byte, opts Options) []byte {
	t.Helper()
	out, err := Render(signedXML, opts)
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return out
}

// writeTemp writes b to a file of the test's temporary directory.
func writeTemp(t testing.TB, name string, b []byte) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(f, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// pdfText extracts the text of pages first..last (0 = to the end) with
// pdftotext, in reading order.
func pdfText(t testing.TB, pdf []byte, first, last int) string {
	t.Helper()
	bin := testtool.Require(t, "pdftotext")
	args := []string{"-enc", "UTF-8", "-f", strconv.Itoa(max(first, 1))}
	if last > 0 {
		args = append(args, "-l", strconv.Itoa(last))
	}
	args = append(args, writeTemp(t, "doc.pdf", pdf), "-")
	out, err := exec.Command(bin, args...).Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	return string(out)
}

// pageSize is a page's size in points, as pdfinfo reports it.
type pageSize struct{ w, h float64 }

var pageSizeRE = regexp.MustCompile(`(?m)^Page\s+\d+ size:\s+([\d.]+) x ([\d.]+) pts`)

// pdfPages returns the size of every page, read with pdfinfo.
func pdfPages(t testing.TB, pdf []byte) []pageSize {
	t.Helper()
	bin := testtool.Require(t, "pdfinfo")
	out, err := exec.Command(bin, "-f", "1", "-l", "100000", writeTemp(t, "doc.pdf", pdf)).Output()
	if err != nil {
		t.Fatalf("pdfinfo: %v", err)
	}
	var sizes []pageSize
	for _, m := range pageSizeRE.FindAllStringSubmatch(string(out), -1) {
		w, _ := strconv.ParseFloat(m[1], 64)
		h, _ := strconv.ParseFloat(m[2], 64)
		sizes = append(sizes, pageSize{w, h})
	}
	if len(sizes) == 0 {
		t.Fatalf("pdfinfo reported no page:\n%s", out)
	}
	return sizes
}

// mm converts points to millimetres.
func mm(pt float64) float64 { return pt * 25.4 / 72 }

// pdfQR rasterises one page with pdftoppm and decodes its QR codes with
// zbarimg.
func pdfQR(t testing.TB, pdf []byte, page int) []string {
	t.Helper()
	ppm := testtool.Require(t, "pdftoppm")
	zbar := testtool.Require(t, "zbarimg")
	f := writeTemp(t, "doc.pdf", pdf)
	prefix := filepath.Join(filepath.Dir(f), "page")
	p := strconv.Itoa(page)
	if msg, err := exec.Command(ppm, "-png", "-r", "200", "-f", p, "-l", p, "-singlefile", f, prefix).CombinedOutput(); err != nil {
		t.Fatalf("pdftoppm: %v\n%s", err, msg)
	}
	out, err := exec.Command(zbar, "-q", "--raw", "-Sdisable", "-Sqrcode.enable", prefix+".png").Output()
	if err != nil {
		t.Fatalf("zbarimg found no code on page %d: %v", page, err)
	}
	return strings.Split(strings.TrimRight(string(out), "\n"), "\n")
}

// expectedQR recomputes the QR data of a signed CFE from its XML.
func expectedQR(t testing.TB, signedXML []byte) string {
	t.Helper()
	c, err := cfe.ParseXML(signedXML)
	if err != nil {
		t.Fatal(err)
	}
	digest, err := cfe.DigestValue(signedXML)
	if err != nil {
		t.Fatal(err)
	}
	return cfe.QRData(c, digest)
}

// mustContain is testtool.MustContain.
func mustContain(t testing.TB, what, text string, want ...string) {
	t.Helper()
	testtool.MustContain(t, what, text, want...)
}
