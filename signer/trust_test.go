package signer

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"errors"
	"math/big"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// embeddedCAs reads the CA certificates the binary carries (assets/roots) by
// file name, without importing package assets (see roots/SOURCE.md).
func embeddedCAs(t testing.TB) (acrn, correo2013, correo2008 *x509.Certificate) {
	dir := filepath.Join("..", "assets", "roots")
	return readPEMCert(t, filepath.Join(dir, "acrn.pem")),
		readPEMCert(t, filepath.Join(dir, "correo-uruguayo-ca-2013.pem")),
		readPEMCert(t, filepath.Join(dir, "correo-uruguayo-ca-2008.pem"))
}

// uruguayTrust is the trust cfe-agent verify uses.
func uruguayTrust(t testing.TB) Trust {
	acrn, correo2013, correo2008 := embeddedCAs(t)
	return Trust{Anchors: []*x509.Certificate{acrn, correo2008}, Intermediates: []*x509.Certificate{correo2013}}
}

// keyInfoCert returns the first X509Certificate of a signed DGI file.
func keyInfoCert(t testing.TB, file string) *x509.Certificate {
	t.Helper()
	m := regexp.MustCompile(`X509Certificate>([^<]+)<`).FindSubmatch(readFile(t, file))
	if m == nil {
		t.Fatalf("%s has no X509Certificate", file)
	}
	der, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(string(m[1])), ""))
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustTime(t testing.TB, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Every certificate DGI signed its samples with chains, at its signing time, to
// an embedded anchor: the 2012–2016 ones through Correo Uruguayo's first CA,
// DGI's current ones through Correo Uruguayo's CA under the national root.
func TestTrust_Chain_DGICertificates(t *testing.T) {
	t.Parallel()
	trust := uruguayTrust(t)
	acrn, correo2013, correo2008 := embeddedCAs(t)
	samples := samplesDir(t)
	certs := filepath.Join(testtool.SharedDir(t), "dgi", "certs")
	tests := []struct {
		name string
		cert *x509.Certificate
		at   time.Time
		want []*x509.Certificate // the chain above the certificate
	}{
		{"caratula 2016", caratulaCert(t), mustTime(t, "2016-07-19T15:56:20-03:00"), []*x509.Certificate{correo2008}},
		{"CAE 2016", keyInfoCert(t, filepath.Join(samples, "CAE_215071660012_90160134272_e-Factura.xml")), mustTime(t, "2016-08-10T21:11:29-03:00"), []*x509.Certificate{correo2008}},
		{"CAE 2012", keyInfoCert(t, filepath.Join(samples, "CAE_219999830019_90120000194_e-Ticket.xml")), mustTime(t, "2012-08-24T12:19:08-03:00"), []*x509.Certificate{correo2008}},
		{"DGI production 2022", readPEMCert(t, filepath.Join(certs, "DGI_RUC+214844360018.pem")), mustTime(t, "2023-06-01T10:00:00-03:00"), []*x509.Certificate{correo2013, acrn}},
		{"DGI test 2024", readPEMCert(t, filepath.Join(certs, "RUC219999830019.pem")), mustTime(t, "2025-06-01T10:00:00-03:00"), []*x509.Certificate{correo2013, acrn}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chain, err := trust.Chain(tt.cert, nil, tt.at)
			if err != nil {
				t.Fatal(err)
			}
			if len(chain) != len(tt.want)+1 || !chain[0].Equal(tt.cert) {
				t.Fatalf("chain of %d certificates starting %q, want %d starting with the signer", len(chain), chain[0].Subject.CommonName, len(tt.want)+1)
			}
			for i, w := range tt.want {
				if !chain[i+1].Equal(w) {
					t.Errorf("chain[%d] = %q (%s), want %q (%s)", i+1, chain[i+1].Subject.CommonName, chain[i+1].SerialNumber.Text(16), w.Subject.CommonName, w.SerialNumber.Text(16))
				}
			}
		})
	}
}

// testCA makes a CA certificate signed by parent (self-signed when parent is
// nil), with subject raw when given, else CN name. maxPathLen < 0 leaves the
// path length unlimited; isCA false makes a certificate that is no CA.
func testCA(t testing.TB, name string, raw []byte, parent *x509.Certificate, parentKey *rsa.PrivateKey, maxPathLen int, isCA ...bool) (*x509.Certificate, *rsa.PrivateKey) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name, Country: []string{"UY"}}, RawSubject: raw,
		NotBefore: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), NotAfter: time.Date(2040, 1, 1, 0, 0, 0, 0, time.UTC),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		MaxPathLen: maxPathLen, MaxPathLenZero: maxPathLen == 0,
	}
	if len(isCA) > 0 && !isCA[0] {
		tmpl.IsCA, tmpl.KeyUsage, tmpl.MaxPathLen, tmpl.MaxPathLenZero = false, x509.KeyUsageDigitalSignature, 0, false
	}
	if parent == nil {
		parent, parentKey = tmpl, key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c, key
}

// testLeaf makes a company certificate for RUC 219999830019 signed by ca.
func testLeaf(t testing.TB, ca *x509.Certificate, caKey *rsa.PrivateKey) *x509.Certificate {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: "Mallory S.A.", SerialNumber: "RUC219999830019", Country: []string{"UY"}},
		NotBefore:    time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC), NotAfter: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageContentCommitment,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// What does not chain to an anchor at signing time is refused with
// ErrUntrusted and a reason that names the problem.
func TestTrust_Chain_Refusals(t *testing.T) {
	t.Parallel()
	trust := uruguayTrust(t)
	_, correo2013, correo2008 := embeddedCAs(t)
	signedAt := mustTime(t, "2026-11-24T10:00:00-03:00")

	selfSigned, err := GenerateTestCertificate("219999830019", "Mallory S.A.", signedAt.AddDate(0, 0, -1))
	if err != nil {
		t.Fatal(err)
	}
	// A CA that copies the name of Correo Uruguayo's CA byte for byte, with
	// its own key.
	fakeCorreo, fakeKey := testCA(t, "", correo2008.RawSubject, nil, nil, -1)
	forged := testLeaf(t, fakeCorreo, fakeKey)
	unknownCA, unknownKey := testCA(t, "Otra CA", nil, nil, nil, -1)
	byUnknown := testLeaf(t, unknownCA, unknownKey)
	dgi2022 := readPEMCert(t, filepath.Join(testtool.SharedDir(t), "dgi", "certs", "DGI_RUC+214844360018.pem"))

	tests := []struct {
		name  string
		trust Trust
		cert  *x509.Certificate
		extra []*x509.Certificate
		at    time.Time
		want  string
	}{
		{"self-signed test certificate", trust, selfSigned.Certificate, nil, signedAt, "es autofirmado"},
		{"self-signed certificate offered as its own chain", trust, selfSigned.Certificate, []*x509.Certificate{selfSigned.Certificate}, signedAt, "es autofirmado"},
		{"forged issuer name", trust, forged, nil, signedAt, "dice ser de «Correo Uruguayo - CA», pero la firma del certificado no es de esa autoridad"},
		{"forged issuer carried in KeyInfo", trust, forged, []*x509.Certificate{fakeCorreo}, signedAt, "el certificado «Correo Uruguayo - CA» dice ser de «Correo Uruguayo - CA», pero la firma del certificado no es de esa autoridad"},
		{"unknown CA", trust, byUnknown, nil, signedAt, "«Otra CA», emisor de «Mallory S.A.», no es una autoridad certificadora acreditada conocida"},
		{"certificate expired at signing", trust, caratulaCert(t), nil, mustTime(t, "2018-01-01T00:00:00-03:00"), "«DGI-RUC PRUEBA CEDE» no estaba vigente al firmar"},
		{"certificate not yet valid at signing", trust, dgi2022, nil, mustTime(t, "2021-01-01T00:00:00-03:00"), "no estaba vigente al firmar"},
		{"an intermediate alone is no anchor", Trust{Intermediates: []*x509.Certificate{correo2013}}, dgi2022, nil, mustTime(t, "2023-06-01T10:00:00-03:00"), "«Autoridad Certificadora Raíz Nacional de Uruguay», emisor de «Correo Uruguayo - CA», no es una autoridad certificadora acreditada conocida"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chain, err := tt.trust.Chain(tt.cert, tt.extra, tt.at)
			if err == nil {
				t.Fatalf("trusted: chain of %d", len(chain))
			}
			if !errors.Is(err, ErrUntrusted) || cfe.ErrorCode(err) != cfe.EINVALID {
				t.Errorf("error %v is not EINVALID/ErrUntrusted", err)
			}
			if msg := cfe.ErrorMessage(err); !strings.HasPrefix(msg, "cadena no confiable: ") || !strings.Contains(msg, tt.want) {
				t.Errorf("message %q, want it to contain %q", msg, tt.want)
			}
		})
	}
}

// Intermediates the document carries link a signer to an anchor; path length
// limits and the intermediates' validity at signing time are enforced.
func TestTrust_Chain_Intermediates(t *testing.T) {
	t.Parallel()
	root, rootKey := testCA(t, "Raíz de prueba", nil, nil, nil, 1)
	mid, midKey := testCA(t, "Intermedia de prueba", nil, root, rootKey, 0)
	leaf := testLeaf(t, mid, midKey)
	at := mustTime(t, "2025-03-01T12:00:00-03:00")
	trust := Trust{Anchors: []*x509.Certificate{root}}

	chain, err := trust.Chain(leaf, []*x509.Certificate{mid}, at)
	if err != nil || len(chain) != 3 || !chain[1].Equal(mid) || !chain[2].Equal(root) {
		t.Fatalf("with the intermediate from KeyInfo: %d certificates, %v", len(chain), err)
	}
	if _, err := (Trust{Anchors: []*x509.Certificate{root}, Intermediates: []*x509.Certificate{mid}}).Chain(leaf, nil, at); err != nil {
		t.Errorf("with the intermediate shipped: %v", err)
	}
	if _, err := trust.Chain(leaf, nil, at); !errors.Is(err, ErrUntrusted) {
		t.Errorf("without the intermediate: %v, want ErrUntrusted", err)
	}

	// A CA below a pathlen:0 intermediate may not issue.
	sub, subKey := testCA(t, "Sub de prueba", nil, mid, midKey, -1)
	deep := testLeaf(t, sub, subKey)
	if _, err := trust.Chain(deep, []*x509.Certificate{mid, sub}, at); !errors.Is(err, ErrUntrusted) || !strings.Contains(cfe.ErrorMessage(err), "excede el largo") {
		t.Errorf("a path beyond pathlen 0: %v", err)
	}

	// A certificate that is no CA cannot issue: one it signed does not chain.
	notCA, notCAKey := testCA(t, "No soy CA", nil, mid, midKey, -1, false)
	byNotCA := testLeaf(t, notCA, notCAKey)
	if _, err := trust.Chain(byNotCA, []*x509.Certificate{mid, notCA}, at); !errors.Is(err, ErrUntrusted) || !strings.Contains(cfe.ErrorMessage(err), "no es de una autoridad certificadora") {
		t.Errorf("issued by a non-CA certificate: %v", err)
	}

	// Signed after the intermediate expired.
	if _, err := trust.Chain(leaf, []*x509.Certificate{mid}, time.Date(2029, 6, 1, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Errorf("inside every validity: %v", err)
	}
	if _, err := trust.Chain(leaf, []*x509.Certificate{mid}, time.Date(2019, 6, 1, 0, 0, 0, 0, time.UTC)); !errors.Is(err, ErrUntrusted) {
		t.Errorf("before the CAs existed: %v", err)
	}
}

func TestCertRUC(t *testing.T) {
	t.Parallel()
	if got := CertRUC(caratulaCert(t)); got != "219999830019" {
		t.Errorf("caratula certificate RUC = %q", got)
	}
	ca, _ := testCA(t, "Sin RUC", nil, nil, nil, -1)
	if got := CertRUC(ca); got != "" {
		t.Errorf("a certificate without serialNumber: RUC %q", got)
	}
}

// Verify returns the other certificates KeyInfo carries (a CA chain), which
// Chain can use; KeyInfo is outside what is signed, so adding them keeps the
// signature valid.
func TestVerify_EmbeddedCertificates(t *testing.T) {
	t.Parallel()
	s := newTestSigner(t, RSASHA1)
	signed := sign(t, s, unsignedCFE(t, cfe.ETicket, 1))
	root, rootKey := testCA(t, "Raíz de prueba", nil, nil, nil, -1)
	mid, _ := testCA(t, "Intermedia de prueba", nil, root, rootKey, 0)
	extra := "<X509Certificate>" + base64.StdEncoding.EncodeToString(mid.Raw) + "</X509Certificate>"
	doc := strings.Replace(string(signed.XML), "</X509Data>", extra+"</X509Data>", 1)
	if doc == string(signed.XML) {
		t.Fatal("the signed CFE has no X509Data")
	}
	v, err := Verify([]byte(doc), VerifyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !v.Certificate.Equal(s.Certificate()) || len(v.Embedded) != 1 || !v.Embedded[0].Equal(mid) {
		t.Errorf("signer %q, embedded %d certificates", v.Certificate.Subject.CommonName, len(v.Embedded))
	}
	if v, err := Verify(signed.XML, VerifyOptions{}); err != nil || len(v.Embedded) != 0 {
		t.Errorf("a KeyInfo with only the signer's certificate: %v, %d embedded", err, len(v.Embedded))
	}
}

// DGI's example envelope splits into its 8 CFEs, each verifying with the
// Caratula's certificate as the standalone CFE DGI signed; their digests are
// those of the CFEs cut out of the envelope byte for byte (extracted-cfe).
func TestReadEnvelope_DGISample(t *testing.T) {
	t.Parallel()
	env, err := ReadEnvelope(readFile(t, filepath.Join(samplesDir(t), "Sob_219999830019_Ej_Mod_19072016.xml")))
	if err != nil {
		t.Fatal(err)
	}
	if !env.Certificate.Equal(caratulaCert(t)) || env.RUCEmisor != "219999830019" || len(env.CFEs) != 8 {
		t.Fatalf("certificate %q, RUC %q, %d CFEs", env.Certificate.Subject.CommonName, env.RUCEmisor, len(env.CFEs))
	}
	extracted, err := filepath.Glob(filepath.Join(samplesDir(t), "extracted-cfe", "*.xml"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, f := range extracted {
		v, err := Verify(readFile(t, f), VerifyOptions{Certificate: env.Certificate})
		if err != nil {
			t.Fatal(err)
		}
		want[v.DigestValue] = true
	}
	for i, c := range env.CFEs {
		v, err := Verify(c, VerifyOptions{Certificate: env.Certificate})
		if err != nil {
			t.Fatalf("CFE %d: %v", i+1, err)
		}
		if !want[v.DigestValue] {
			t.Errorf("CFE %d: digest %s is none of the extracted CFEs'", i+1, v.DigestValue)
		}
		delete(want, v.DigestValue)
	}
	for _, bad := range [][]byte{
		readFile(t, filepath.Join(samplesDir(t), "CAE_215071660012_90160134272_e-Factura.xml")),
		[]byte(`<EnvioCFE xmlns="http://cfe.dgi.gub.uy"><Caratula><RUCEmisor>219999830019</RUCEmisor></Caratula></EnvioCFE>`),
	} {
		if _, err := ReadEnvelope(bad); cfe.ErrorCode(err) != cfe.EINVALID {
			t.Errorf("not an envelope with a certificate: %v", err)
		}
	}
}
