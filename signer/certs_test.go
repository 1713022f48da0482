package signer

import (
	"bytes"
	"crypto/rsa"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

const p12Password = "clave-secreta-123"

// openssl runs the openssl CLI in dir and fails the test on error.
func openssl(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command(testtool.Require(t, "openssl"), args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("openssl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// pki is a CA and a leaf certificate made with the openssl CLI, as a company
// receives them from a Uruguayan CA.
type pki struct {
	dir                              string
	caCert, leafCert, leafKey, pkcs1 string // file names in dir
}

func newPKI(t *testing.T) *pki {
	t.Helper()
	p := &pki{dir: t.TempDir(), caCert: "ca.pem", leafCert: "leaf.pem", leafKey: "leaf.key", pkcs1: "leaf-pkcs1.key"}
	openssl(t, p.dir, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", p.caCert,
		"-days", "30", "-subj", "/C=UY/O=CA de Prueba/CN=CA de Prueba")
	openssl(t, p.dir, "req", "-newkey", "rsa:2048", "-nodes", "-keyout", p.leafKey, "-out", "leaf.csr",
		"-subj", "/C=UY/O=Empresa de Prueba S.A./serialNumber=RUC219999830019/CN=Empresa de Prueba S.A.")
	openssl(t, p.dir, "x509", "-req", "-in", "leaf.csr", "-CA", p.caCert, "-CAkey", "ca.key", "-set_serial", "4242",
		"-days", "10", "-out", p.leafCert)
	openssl(t, p.dir, "rsa", "-in", p.leafKey, "-traditional", "-out", p.pkcs1)
	return p
}

func (p *pki) read(t *testing.T, name string) []byte { return readFile(t, filepath.Join(p.dir, name)) }

// export makes a .p12 with the leaf, its key and the CA certificate.
func (p *pki) export(t *testing.T, extra ...string) []byte {
	t.Helper()
	args := append([]string{"pkcs12", "-export", "-inkey", p.leafKey, "-in", p.leafCert, "-certfile", p.caCert,
		"-passout", "pass:" + p12Password, "-out", "out.p12"}, extra...)
	openssl(t, p.dir, args...)
	return p.read(t, "out.p12")
}

func TestLoadPKCS12(t *testing.T) {
	t.Parallel()
	p := newPKI(t)
	leaf := readPEMCert(t, filepath.Join(p.dir, p.leafCert))
	ca := readPEMCert(t, filepath.Join(p.dir, p.caCert))
	for _, tc := range []struct {
		name  string
		extra []string
		algo  string // what `openssl pkcs12 -info` reports for the key bag
	}{
		{"OpenSSL 3 default", nil, "PBES2"},
		{"legacy", []string{"-legacy"}, "pbeWithSHA1And3-KeyTripleDES-CBC"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p12 := p.export(t, tc.extra...)
			info := openssl(t, p.dir, "pkcs12", "-info", "-in", "out.p12", "-passin", "pass:"+p12Password, "-noout", "-legacy")
			if !strings.Contains(info, tc.algo) {
				t.Fatalf("fixture is not the kind under test (%s):\n%s", tc.algo, info)
			}
			c, err := LoadPKCS12(p12, p12Password)
			if err != nil {
				t.Fatal(err)
			}
			if !c.Certificate.Equal(leaf) {
				t.Errorf("leaf is %s", c.Certificate.Subject)
			}
			if len(c.Chain) != 1 || !c.Chain[0].Equal(ca) {
				t.Errorf("chain is %d certificates, want the CA", len(c.Chain))
			}
			s, err := New(Config{Credentials: c})
			if err != nil {
				t.Fatal(err)
			}
			signed := sign(t, s, unsignedCFE(t, cfe.ETicket, 1))
			mustXMLSecVerify(t, signed.XML)
		})
	}
}

func TestLoadPKCS12_Errors(t *testing.T) {
	t.Parallel()
	p := newPKI(t)
	p12 := p.export(t)

	_, err := LoadPKCS12(p12, "otra-clave")
	if cfe.ErrorCode(err) != cfe.EINVALID || !errors.Is(err, ErrWrongPassword) || cfe.ErrorMessage(err) != "la contraseña del certificado es incorrecta" {
		t.Errorf("wrong password: %v", err)
	}
	if err != nil && strings.Contains(err.Error(), "otra-clave") {
		t.Error("the error shows the password")
	}

	_, err = LoadPKCS12([]byte("no es un p12"), p12Password)
	if cfe.ErrorCode(err) != cfe.EINVALID || !strings.Contains(cfe.ErrorMessage(err), "PKCS#12") {
		t.Errorf("garbage: %v", err)
	}
}

func TestLoadPEM(t *testing.T) {
	t.Parallel()
	p := newPKI(t)
	leaf := readPEMCert(t, filepath.Join(p.dir, p.leafCert))
	chainFirst := append(p.read(t, p.caCert), p.read(t, p.leafCert)...) // leaf found by its key, not its place
	for _, tc := range []struct{ name, key string }{
		{"PKCS#8", p.leafKey},
		{"PKCS#1", p.pkcs1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keyPEM := p.read(t, tc.key)
			wantType := map[string]string{"PKCS#8": "BEGIN PRIVATE KEY", "PKCS#1": "BEGIN RSA PRIVATE KEY"}[tc.name]
			if !strings.Contains(string(keyPEM), wantType) {
				t.Fatalf("fixture key is not %s", tc.name)
			}
			c, err := LoadPEM(keyPEM, chainFirst)
			if err != nil {
				t.Fatal(err)
			}
			if !c.Certificate.Equal(leaf) || len(c.Chain) != 1 {
				t.Errorf("leaf %s with %d chain certificates", c.Certificate.Subject, len(c.Chain))
			}
			if _, ok := c.Key.(*rsa.PrivateKey); !ok {
				t.Errorf("key is %T", c.Key)
			}
		})
	}
}

func TestLoadPEM_Errors(t *testing.T) {
	t.Parallel()
	p := newPKI(t)
	openssl(t, p.dir, "rsa", "-in", p.leafKey, "-aes256", "-passout", "pass:x", "-out", "enc.key")
	openssl(t, p.dir, "pkcs8", "-topk8", "-in", p.leafKey, "-passout", "pass:x", "-out", "enc8.key")
	for _, tc := range []struct {
		name      string
		key, cert []byte
		msg       string
	}{
		{"encrypted PKCS#8", p.read(t, "enc8.key"), p.read(t, p.leafCert), "cifrada"},
		{"encrypted PKCS#1", p.read(t, "enc.key"), p.read(t, p.leafCert), "cifrada"},
		{"key of another certificate", p.read(t, p.leafKey), p.read(t, p.caCert), "ningún certificado corresponde"},
		{"no key", p.read(t, p.leafCert), p.read(t, p.leafCert), "no se encontró una clave"},
		{"no certificate", p.read(t, p.leafKey), p.read(t, p.leafKey), "CERTIFICATE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadPEM(tc.key, tc.cert)
			if cfe.ErrorCode(err) != cfe.EINVALID || !strings.Contains(cfe.ErrorMessage(err), tc.msg) {
				t.Fatalf("LoadPEM = %v, want EINVALID saying %q", err, tc.msg)
			}
		})
	}
}

func TestGenerateTestCertificate(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 22, 9, 30, 15, 500, cfe.Montevideo)
	c, err := GenerateTestCertificate("219999830019", "Panadería La Estrella S.A.", now)
	if err != nil {
		t.Fatal(err)
	}
	cert := c.Certificate
	const name = "Panadería La Estrella S.A. (PRUEBA - SIN VALOR FISCAL)"
	if cert.Subject.CommonName != name || len(cert.Subject.Organization) != 1 || cert.Subject.Organization[0] != name {
		t.Errorf("subject %s", cert.Subject)
	}
	if cert.Subject.SerialNumber != "RUC219999830019" {
		t.Errorf("subject serialNumber %q", cert.Subject.SerialNumber)
	}
	if n := len(cert.SerialNumber.String()); n > 20 || cert.SerialNumber.Sign() <= 0 {
		t.Errorf("serial %s: %d digits", cert.SerialNumber, n)
	}
	if !cert.NotBefore.Equal(now.Truncate(time.Second)) || !cert.NotAfter.Equal(time.Date(2028, 11, 22, 9, 30, 15, 0, cfe.Montevideo)) {
		t.Errorf("valid %s to %s, want two years from %s", cert.NotBefore, cert.NotAfter, now)
	}
	if k, ok := cert.PublicKey.(*rsa.PublicKey); !ok || k.N.BitLen() != 2048 {
		t.Errorf("key %T", cert.PublicKey)
	}
	if !bytes.Equal(cert.RawIssuer, cert.RawSubject) {
		t.Error("issuer is not the subject")
	}
	if err := cert.CheckSignature(cert.SignatureAlgorithm, cert.RawTBSCertificate, cert.Signature); err != nil {
		t.Errorf("not self-signed: %v", err)
	}
	// The serialNumber attribute is X.520's (2.5.4.5), as in DGI certificates.
	if !hasAttr(cert.Subject.Names, asn1.ObjectIdentifier{2, 5, 4, 5}, "RUC219999830019") {
		t.Error("no 2.5.4.5 attribute with the RUC")
	}

	long := strings.Repeat("Ñ", 100)
	c2, err := GenerateTestCertificate("219999830019", long, now)
	if err != nil {
		t.Fatal(err)
	}
	if cn := c2.Certificate.Subject.CommonName; len([]rune(cn)) != 64 || !strings.HasSuffix(cn, "(PRUEBA - SIN VALOR FISCAL)") {
		t.Errorf("long name gives CN %q (%d characters), want 64 ending in the marker", cn, len([]rune(cn)))
	}
}

func hasAttr(names []pkix.AttributeTypeAndValue, oid asn1.ObjectIdentifier, value string) bool {
	for _, n := range names {
		if n.Type.Equal(oid) && n.Value == value {
			return true
		}
	}
	return false
}

func TestGenerateTestCertificate_Invalid(t *testing.T) {
	t.Parallel()
	_, err := GenerateTestCertificate("21999983001", " ", testNow)
	var e *cfe.Error
	if !errors.As(err, &e) || e.Code != cfe.EINVALID || len(e.Fields) != 2 || e.Fields[0].Campo != "ruc" || e.Fields[1].Campo != "razon_social" {
		t.Fatalf("GenerateTestCertificate = %#v, want EINVALID naming ruc and razon_social", err)
	}
	// 12 digits are not enough: the check digit of 21999983001 is 9, not 8.
	_, err = GenerateTestCertificate("219999830018", "Panadería La Estrella S.A.", testNow)
	if !errors.As(err, &e) || e.Code != cfe.EINVALID || len(e.Fields) != 1 || e.Fields[0].Campo != "ruc" {
		t.Fatalf("GenerateTestCertificate with a wrong check digit = %#v, want EINVALID naming ruc", err)
	}
}

// TestCredentials_EncodePKCS12 checks that OpenSSL reads the file the agent
// stores, and that it loads back.
func TestCredentials_EncodePKCS12(t *testing.T) {
	t.Parallel()
	c := testCredentials(t)
	p12, err := c.EncodePKCS12(p12Password)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "agent.p12"), p12, 0o600); err != nil {
		t.Fatal(err)
	}
	out := openssl(t, dir, "pkcs12", "-in", "agent.p12", "-passin", "pass:"+p12Password, "-nokeys", "-clcerts")
	if !strings.Contains(out, TestMarker) {
		t.Errorf("openssl does not show the test certificate:\n%s", out)
	}
	back, err := LoadPKCS12(p12, p12Password)
	if err != nil {
		t.Fatal(err)
	}
	if !back.Certificate.Equal(c.Certificate) || !samePublicKey(back.Key.Public(), c.Key.Public()) {
		t.Error("round trip changed the credentials")
	}
}

func TestCertInfo(t *testing.T) {
	t.Parallel()
	c := testCredentials(t)
	notAfter := c.Certificate.NotAfter
	for _, tc := range []struct {
		name    string
		now     time.Time
		days    int
		expired bool
	}{
		{"ten days and a bit left", notAfter.Add(-10*24*time.Hour - time.Hour), 10, false},
		{"last second", notAfter, 0, false},
		{"one second late", notAfter.Add(time.Second), -1, true},
		{"a year late", notAfter.AddDate(1, 0, 0), -365, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			i := CertInfo(c.Certificate, tc.now)
			if i.DaysToExpiry != tc.days || i.Expired != tc.expired || i.NotYetValid {
				t.Errorf("days %d expired %v notYetValid %v, want %d %v false", i.DaysToExpiry, i.Expired, i.NotYetValid, tc.days, tc.expired)
			}
			if i.RUC != fixtureRUC || !i.Test || !strings.Contains(i.CommonName, TestMarker) {
				t.Errorf("summary %+v", i)
			}
		})
	}
	if i := CertInfo(c.Certificate, c.Certificate.NotBefore.Add(-time.Minute)); !i.NotYetValid {
		t.Error("a certificate used before NotBefore is not reported")
	}

	// DGI's example certificate: RUC in serialNumber, expired in 2017.
	dgi := caratulaCert(t)
	i := CertInfo(dgi, testNow)
	if i.RUC != "219999830019" || i.Test || !i.Expired || i.SerialNumber != "155761856642617054135126896023459966393" ||
		!i.NotAfter.Equal(time.Date(2017, 1, 26, 19, 41, 23, 0, time.UTC)) {
		t.Errorf("DGI certificate summary %+v", i)
	}
}
