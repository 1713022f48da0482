package signer

import (
	"crypto/sha1"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// testNow is the clock of the tests: inside the validity of testCredentials.
var testNow = time.Date(2026, 11, 20, 10, 15, 30, 0, cfe.Montevideo)

var (
	credsOnce sync.Once
	creds     *Credentials
	credsErr  error
)

// testCredentials returns one sandbox certificate for the whole test binary
// (RSA key generation is slow).
func testCredentials(t testing.TB) *Credentials {
	t.Helper()
	credsOnce.Do(func() {
		creds, credsErr = GenerateTestCertificate(fixtureRUC, "Almacén Ñandú S.R.L.", testNow.Add(-24*time.Hour))
	})
	if credsErr != nil {
		t.Fatal(credsErr)
	}
	return creds
}

func newTestSigner(t testing.TB, alg Algorithm) *Signer {
	t.Helper()
	s, err := New(Config{Credentials: testCredentials(t), Algorithm: alg, Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func sign(t testing.TB, s *Signer, unsigned []byte) *Signed {
	t.Helper()
	signed, err := s.Sign(unsigned)
	if err != nil {
		t.Fatal(err)
	}
	return signed
}

// writePEM writes the certificate and key of c as PEM files for the CLI tools.
func writePEM(t testing.TB, c *Credentials) (certFile, keyFile string) {
	t.Helper()
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	der, err := x509.MarshalPKCS8PrivateKey(c.Key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Certificate.Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// mustXMLSecVerify checks a signature with xmlsec1 and the certificate in KeyInfo.
func mustXMLSecVerify(t testing.TB, doc []byte) {
	t.Helper()
	if out, ok := testtool.XMLSecVerify(t, doc, ""); !ok {
		t.Fatalf("xmlsec1 rejects the signature:\n%s", out)
	}
}

// xmllintC14N returns the inclusive C14N 1.0 form of doc computed by libxml2.
func xmllintC14N(t testing.TB, doc []byte) []byte {
	t.Helper()
	bin := testtool.Require(t, "xmllint")
	f := filepath.Join(t.TempDir(), "doc.xml")
	if err := os.WriteFile(f, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "--nonet", "--c14n", f).Output()
	if err != nil {
		t.Fatalf("xmllint --c14n: %v", err)
	}
	return out
}

func sha1Base64(b []byte) string {
	sum := sha1.Sum(b)
	return base64.StdEncoding.EncodeToString(sum[:])
}

// samplesDir is DGI's folder of signed examples.
func samplesDir(t testing.TB) string {
	t.Helper()
	return filepath.Join(testtool.SharedDir(t), "dgi", "samples")
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func readPEMCert(t testing.TB, path string) *x509.Certificate {
	t.Helper()
	b, _ := pem.Decode(readFile(t, path))
	if b == nil {
		t.Fatalf("%s: no PEM block", path)
		return nil
	}
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// caratulaCert is the certificate of DGI's example envelope, which signed the
// CFEs in extracted-cfe (they carry only X509IssuerSerial).
func caratulaCert(t testing.TB) *x509.Certificate {
	return readPEMCert(t, filepath.Join(samplesDir(t), "extracted-cfe", "Sob_Ej_Mod_19072016__caratula_cert.pem"))
}
