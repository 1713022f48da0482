package main_test

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"maps"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/signer"
)

// verifyLines runs cfe-agent verify on files and returns its exit code and
// its report line for each file, by file.
func verifyLines(t *testing.T, args ...string) (int, map[string]string) {
	t.Helper()
	out, code := runCLI(t, agentEnv(), append([]string{"verify"}, args...)...)
	lines := map[string]string{}
	for line := range strings.Lines(out) {
		if status, rest, ok := strings.Cut(strings.TrimSpace(line), " "); ok && (status == "OK" || status == "FAIL") {
			file, _, _ := strings.Cut(strings.TrimSpace(rest), ": ")
			lines[file] = strings.TrimSpace(line)
		}
	}
	return code, lines
}

// cfe-agent verify accepts every file DGI signed in its samples: the CFEs cut
// out of its example envelope (with the caratula's certificate, since they
// carry only issuer and serial), the envelope itself (each CFE with the
// caratula's certificate), the daily report, and both CAE files: the 2016 one
// against CAE.xsd, the 2012 one, which predates TA, against the 2012 layout.
func TestVerify_DGISamplesAndCAEFiles(t *testing.T) {
	testtool.Require(t, "xmllint")
	samples := filepath.Join(testtool.SharedDir(t), "dgi", "samples")
	cfes, err := filepath.Glob(filepath.Join(samples, "extracted-cfe", "*.xml"))
	if err != nil || len(cfes) < 8 {
		t.Fatalf("DGI's extracted CFEs: %v %v", cfes, err)
	}
	topLevel, err := filepath.Glob(filepath.Join(samples, "*.xml"))
	if err != nil || len(topLevel) != 4 {
		t.Fatalf("DGI's signed samples (2 CAE files, a report, an envelope): %v %v", topLevel, err)
	}
	cae2016 := filepath.Join(samples, "CAE_215071660012_90160134272_e-Factura.xml")
	cae2012 := filepath.Join(samples, "CAE_219999830019_90120000194_e-Ticket.xml")
	report := filepath.Join(samples, "Rep_219000090011_20120511_01_Ej_Mod_27032014.xml")
	envelope := filepath.Join(samples, "Sob_219999830019_Ej_Mod_19072016.xml")
	signed := append([]string{cae2016, cae2012, report}, cfes...)
	cert := filepath.Join(samples, "extracted-cfe", "Sob_Ej_Mod_19072016__caratula_cert.pem")

	// The extracted CFEs are checked with the caratula's certificate pinned,
	// the other files with the certificate they carry: --cert means the
	// signature must be by that certificate, and DGI signed its CAE files
	// with its own.
	code, lines := verifyLines(t, append([]string{"--cert", cert}, cfes...)...)
	code2, own := verifyLines(t, topLevel...)
	maps.Copy(lines, own)
	if code != 0 || code2 != 0 || len(lines) != len(cfes)+len(topLevel)+8 {
		t.Fatalf("verify of DGI's samples: exit %d and %d, %d report lines for %d files and 8 CFEs in the envelope:\n%s", code, code2, len(lines), len(cfes)+len(topLevel), strings.Join(slices.Collect(maps.Values(lines)), "\n"))
	}
	// Every signed document is signed by a certificate of the right RUC,
	// valid when it signed, issued by Correo Uruguayo's CA (which the binary
	// carries); so is each CFE of the envelope.
	for i := 1; i <= 8; i++ {
		signed = append(signed, fmt.Sprintf("CFE %d/8", i))
	}
	for _, f := range signed {
		for _, want := range []string{"firma rsa-sha1 válida", "certificado vigente al firmar", "cadena confiable: Correo Uruguayo - CA"} {
			if !strings.HasPrefix(lines[f], "OK ") || !strings.Contains(lines[f], want) {
				t.Errorf("verify %s: %q lacks %q", filepath.Base(f), lines[f], want)
			}
		}
	}
	if !strings.HasPrefix(lines[envelope], "OK ") || !strings.Contains(lines[envelope], `8 CFE, certificado de la carátula "DGI-RUC PRUEBA CEDE"`) || !strings.Contains(lines[envelope], "XSD EnvioCFE.xsd válido") {
		t.Errorf("envelope: %q", lines[envelope])
	}
	if !strings.Contains(lines[report], "RUC del certificado = RUC emisor 219000090011") || !strings.Contains(lines[report], "XSD ReporteDiarioCFE.xsd válido") {
		t.Errorf("daily report: %q", lines[report])
	}
	for _, f := range cfes {
		if !strings.Contains(lines[f], "RUC del certificado = RUC emisor 219999830019") {
			t.Errorf("verify %s: %q does not report the RUC check", filepath.Base(f), lines[f])
		}
	}
	if !strings.Contains(lines[cae2016], "RUC del certificado = RUC de DGI 214844360018") || !strings.Contains(lines[cae2012], "RUC del certificado = RUC de DGI 219999830019") {
		t.Errorf("CAE files' signer not reported:\n%s\n%s", lines[cae2016], lines[cae2012])
	}
	if !strings.Contains(lines[cae2016], "XSD CAE.xsd válido") {
		t.Errorf("2016 CAE file not checked against CAE.xsd: %q", lines[cae2016])
	}
	if !strings.Contains(lines[cae2012], "formato 2012, sin TA") || !strings.Contains(lines[cae2012], "XSD CAE-2012.xsd válido") {
		t.Errorf("2012 CAE file not checked against its layout: %q", lines[cae2012])
	}

	// A changed range in the 2012 file breaks DGI's signature.
	b, err := os.ReadFile(cae2012)
	if err != nil {
		t.Fatal(err)
	}
	tampered := filepath.Join(t.TempDir(), "cae-2012-tampered.xml")
	changed := bytes.Replace(b, []byte("<ns0:HNro>145778<"), []byte("<ns0:HNro>945778<"), 1)
	if bytes.Equal(changed, b) {
		t.Fatal("the 2012 CAE file has no HNro 145778")
	}
	if err := os.WriteFile(tampered, changed, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, lines := verifyLines(t, tampered); code != 1 || !strings.HasPrefix(lines[tampered], "FAIL") || !strings.Contains(lines[tampered], "firma inválida") {
		t.Errorf("verify of a tampered 2012 CAE file: exit %d, %q", code, lines[tampered])
	}
}

// The 2012 layout is only for files that declare a CAE schema older than
// 1.4: a signed CAE file without TA that declares none, or 1.4, fails
// CAE.xsd; the same content declaring CAE_v1.1.xsd passes.
func TestVerify_CAEWithoutTANeedsTheOldLayoutDeclared(t *testing.T) {
	testtool.Require(t, "xmllint")
	// A certificate valid when the files say they were signed (TmstFrma).
	signedAt := time.Date(2012, 8, 24, 12, 19, 8, 0, time.UTC)
	creds, err := signer.GenerateTestCertificate("219999830019", "DGI de prueba", signedAt.AddDate(0, -1, 0))
	if err != nil {
		t.Fatal(err)
	}
	s, err := signer.New(signer.Config{Credentials: creds, Now: func() time.Time { return signedAt }})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, schemaLocation string) string {
		t.Helper()
		attr := ""
		if schemaLocation != "" {
			attr = ` xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="` + schemaLocation + `"`
		}
		unsigned := `<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
			`<ns0:CAE xmlns:ns0="http://cfe.dgi.gub.uy"` + attr + ` version="1.0">` +
			`<ns0:TmstFrma>2012-08-24T12:19:08-03:00</ns0:TmstFrma><ns0:DA><ns0:RucE>219999830019</ns0:RucE>` +
			`<ns0:TCFE>101</ns0:TCFE><ns0:Serie>B</ns0:Serie><ns0:DNro>1</ns0:DNro><ns0:HNro>1000</ns0:HNro>` +
			`<ns0:NA>90120000194</ns0:NA><ns0:FA>2012-08-24</ns0:FA><ns0:FVD>2014-08-24</ns0:FVD></ns0:DA></ns0:CAE>`
		signed, err := s.Sign([]byte(unsigned))
		if err != nil {
			t.Fatal(err)
		}
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, signed.XML, 0o600); err != nil {
			t.Fatal(err)
		}
		return f
	}
	old := write("v1.1.xml", "http://cfe.dgi.gub.uy CAE_v1.1.xsd")
	undeclared := write("undeclared.xml", "")
	newer := write("v1.4.xml", "http://cfe.dgi.gub.uy CAE_v1.4.xsd")

	// Signed with a self-signed test certificate: --allow-untrusted lets the
	// XSD checks decide, and the report says the chain is not trusted.
	code, lines := verifyLines(t, "--allow-untrusted", old, undeclared, newer)
	if !strings.Contains(lines[old], "ADVERTENCIA cadena no confiable") {
		t.Errorf("a self-signed CAE file without an untrusted-chain warning: %q", lines[old])
	}
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	if !strings.HasPrefix(lines[old], "OK ") || !strings.Contains(lines[old], "CAE-2012.xsd válido") {
		t.Errorf("TA-less file declaring CAE_v1.1.xsd: %q", lines[old])
	}
	for _, f := range []string{undeclared, newer} {
		if !strings.HasPrefix(lines[f], "FAIL") || !strings.Contains(lines[f], "XSD CAE.xsd inválido") || !strings.Contains(lines[f], "TA") {
			t.Errorf("TA-less file %s: %q", filepath.Base(f), lines[f])
		}
	}
}

// mallory makes a self-signed certificate and key in PEM files, with subject
// CN cn and serialNumber "RUC"+ruc, valid from notBefore for 15 years.
func mallory(t *testing.T, dir, cn, ruc string, notBefore time.Time) (certFile string, creds *signer.Credentials) {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(notBefore.UnixNano()),
		Subject:      pkix.Name{CommonName: cn, Organization: []string{cn}, Country: []string{"UY"}, SerialNumber: "RUC" + ruc},
		NotBefore:    notBefore, NotAfter: notBefore.AddDate(15, 0, 0),
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageContentCommitment, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	if creds, err = signer.LoadPEM(keyPEM, certPEM); err != nil {
		t.Fatal(err)
	}
	certFile = filepath.Join(dir, cn+".pem")
	if err := os.WriteFile(certFile, certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, creds
}

// resign removes the signature of a signed document, applies change (nil for
// none; else it must change something), signs the result with creds and
// writes it to file.
func resign(t *testing.T, signed []byte, change func([]byte) []byte, creds *signer.Credentials, file string) string {
	t.Helper()
	start, end := bytes.Index(signed, []byte("<Signature ")), bytes.LastIndex(signed, []byte("</Signature>"))
	if start < 0 || end < start {
		t.Fatal("no Signature element")
	}
	unsigned := append(append([]byte{}, signed[:start]...), signed[end+len("</Signature>"):]...)
	changed := unsigned
	if change != nil {
		if changed = change(unsigned); bytes.Equal(changed, unsigned) {
			t.Fatal("the change changed nothing")
		}
	}
	s, err := signer.New(signer.Config{Credentials: creds})
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Sign(changed)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, out.XML, 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// A CFE of DGI's sample whose total was raised and that was signed again
// by Mallory, with a self-signed certificate that claims the issuer's RUC in
// its serialNumber, is internally consistent (digest and signature match) but
// fails verify: the chain reaches no accredited CA; pinning DGI's certificate
// with --cert fails it on the signature. The RUC and signing-time checks
// hold even for a certificate the user pins.
func TestVerify_TrustOfTheSigner(t *testing.T) {
	testtool.Require(t, "xmllint")
	samples := filepath.Join(testtool.SharedDir(t), "dgi", "samples", "extracted-cfe")
	genuine := filepath.Join(samples, "Sob_Ej_Mod_19072016__CFE_101_A1.xml")
	caratula := filepath.Join(samples, "Sob_Ej_Mod_19072016__caratula_cert.pem")
	original, err := os.ReadFile(genuine)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	raiseTotal := func(b []byte) []byte {
		b = bytes.Replace(b, []byte("<ns0:MntTotal>168816<"), []byte("<ns0:MntTotal>1168816<"), 1)
		return bytes.Replace(b, []byte("<ns0:MntPagar>168816<"), []byte("<ns0:MntPagar>1168816<"), 1)
	}
	// Mallory's certificate covers the CFE's TmstFirma (2016-07-19), so only
	// the chain can tell.
	malloryCert, malloryCreds := mallory(t, dir, "Mallory", "219999830019", time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC))
	tampered := resign(t, original, raiseTotal, malloryCreds, filepath.Join(dir, "tampered.xml"))
	// Another company's certificate, pinned, on a CFE of RUC 219999830019.
	otherCert, otherCreds := mallory(t, dir, "Otra empresa", "215071660012", time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC))
	otherRUC := resign(t, original, nil, otherCreds, filepath.Join(dir, "other-ruc.xml"))
	// A certificate issued after the CFE says it was signed.
	lateCert, lateCreds := mallory(t, dir, "Tardio", "219999830019", time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
	late := resign(t, original, nil, lateCreds, filepath.Join(dir, "late.xml"))

	// The tampered CFE is well formed and its signature is consistent: what
	// makes it fail is who signed it.
	if out, ok := testtool.XMLSecVerify(t, mustRead(t, tampered), ""); !ok {
		t.Fatalf("xmlsec1 rejects the re-signed CFE, so the test proves nothing:\n%s", out)
	}
	// xmlsec1, trusting only the CAs the binary carries (no --insecure), also
	// refuses Mallory's certificate.
	roots := filepath.Join(testtool.RepoRoot(t), "assets", "roots")
	out, err := exec.Command(testtool.Require(t, "xmlsec1"), "--verify", "--enabled-key-data", "x509",
		"--trusted-pem", filepath.Join(roots, "acrn.pem"), "--trusted-pem", filepath.Join(roots, "correo-uruguayo-ca-2008.pem"),
		"--untrusted-pem", filepath.Join(roots, "correo-uruguayo-ca-2013.pem"), tampered).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "self-signed certificate") {
		t.Errorf("xmlsec1 with the embedded CAs as its trust: %v\n%s", err, out)
	}

	tests := []struct {
		name  string
		args  []string
		file  string
		code  int
		wants []string
	}{
		{"tampered, re-signed by Mallory", nil, tampered, 1,
			[]string{"FAIL ", "firma rsa-sha1 válida", "RUC del certificado = RUC emisor 219999830019", "certificado vigente al firmar",
				"cadena no confiable: el certificado «Mallory» es autofirmado", "indique el certificado del emisor con --cert"}},
		{"tampered, DGI's certificate pinned", []string{"--cert", caratula}, tampered, 1,
			[]string{"FAIL ", "firma inválida: no la hizo el certificado indicado (--cert " + caratula + ")"}},
		{"tampered, untrusted allowed", []string{"--allow-untrusted"}, tampered, 0,
			[]string{"OK ", "ADVERTENCIA cadena no confiable: el certificado «Mallory» es autofirmado", "(aceptado por --allow-untrusted)"}},
		{"tampered, Mallory's certificate pinned", []string{"--cert", malloryCert}, tampered, 0,
			[]string{"OK ", "certificado aceptado por --cert " + malloryCert}},
		{"another RUC's certificate, pinned", []string{"--cert", otherCert}, otherRUC, 1,
			[]string{"FAIL ", "el certificado es del RUC 215071660012 y el CFE es del RUC emisor 219999830019"}},
		{"certificate not valid at TmstFirma, pinned", []string{"--cert", lateCert}, late, 1,
			[]string{"FAIL ", "el certificado no estaba vigente al firmar (TmstFirma 2016-07-19T15:56:20-03:00; vigente del 2020-01-01 al 2035-01-01)"}},
		{"the genuine CFE, DGI's certificate pinned", []string{"--cert", caratula}, genuine, 0,
			[]string{"OK ", "cadena confiable: Correo Uruguayo - CA"}},
		{"the genuine CFE, two certificates pinned", []string{"--cert", malloryCert, "--cert", caratula}, genuine, 0,
			[]string{"OK ", "cadena confiable: Correo Uruguayo - CA"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, lines := verifyLines(t, append(tt.args, tt.file)...)
			if code != tt.code {
				t.Errorf("exit %d, want %d: %q", code, tt.code, lines[tt.file])
			}
			for _, w := range tt.wants {
				if !strings.Contains(lines[tt.file], w) {
					t.Errorf("report %q lacks %q", lines[tt.file], w)
				}
			}
		})
	}
}

// A CAE file is trusted only if DGI signed it: a certificate of another RUC
// fails even when its chain is let pass.
func TestVerify_CAEFileSignedByOtherThanDGI(t *testing.T) {
	testtool.Require(t, "xmllint")
	cae := filepath.Join(testtool.SharedDir(t), "dgi", "samples", "CAE_215071660012_90160134272_e-Factura.xml")
	b, err := os.ReadFile(cae)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	_, creds := mallory(t, dir, "Empresa", "215071660012", time.Date(2015, 1, 1, 0, 0, 0, 0, time.UTC))
	f := resign(t, b, nil, creds, filepath.Join(dir, "cae.xml"))
	code, lines := verifyLines(t, "--allow-untrusted", f)
	if code != 1 || !strings.Contains(lines[f], "el archivo CAE no lo firmó DGI: el certificado es del RUC 215071660012") {
		t.Errorf("exit %d: %q", code, lines[f])
	}
}

// The agent's own test CFEs (self-signed sandbox certificate) fail without
// flags, and pass with that certificate pinned.
func TestVerify_SandboxCertificatePinned(t *testing.T) {
	testtool.Require(t, "xmllint")
	genuine := filepath.Join(testtool.SharedDir(t), "dgi", "samples", "extracted-cfe", "Sob_Ej_Mod_19072016__CFE_111_A1.xml")
	b, err := os.ReadFile(genuine)
	if err != nil {
		t.Fatal(err)
	}
	signedAt := time.Date(2016, 7, 19, 18, 56, 20, 0, time.UTC)
	creds, err := signer.GenerateTestCertificate("219999830019", "Empresa de prueba", signedAt.AddDate(0, -1, 0))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	start, end := bytes.Index(b, []byte("<Signature ")), bytes.LastIndex(b, []byte("</Signature>"))
	s, err := signer.New(signer.Config{Credentials: creds, Now: func() time.Time { return signedAt }})
	if err != nil {
		t.Fatal(err)
	}
	signed, err := s.Sign(append(append([]byte{}, b[:start]...), b[end+len("</Signature>"):]...))
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(dir, "sandbox.xml")
	certFile := filepath.Join(dir, "sandbox-cert.pem")
	if err := os.WriteFile(f, signed.XML, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: creds.Certificate.Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, lines := verifyLines(t, f); code != 1 || !strings.Contains(lines[f], "es autofirmado") {
		t.Errorf("without --cert: exit %d, %q", code, lines[f])
	}
	if code, lines := verifyLines(t, "--cert", certFile, f); code != 0 || !strings.Contains(lines[f], "certificado aceptado por --cert") {
		t.Errorf("with the sandbox certificate pinned: exit %d, %q", code, lines[f])
	}
}

func mustRead(t *testing.T, f string) []byte {
	t.Helper()
	b, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A total changed inside DGI's example envelope breaks that CFE's signature:
// its line and the envelope fail, the other CFEs still pass.
func TestVerify_TamperedEnvelope(t *testing.T) {
	testtool.Require(t, "xmllint")
	b := mustRead(t, filepath.Join(testtool.SharedDir(t), "dgi", "samples", "Sob_219999830019_Ej_Mod_19072016.xml"))
	changed := bytes.Replace(b, []byte("<ns0:MntPagar>168816<"), []byte("<ns0:MntPagar>1168816<"), 1)
	if bytes.Equal(changed, b) {
		t.Fatal("the envelope has no MntPagar 168816")
	}
	f := filepath.Join(t.TempDir(), "sobre.xml")
	if err := os.WriteFile(f, changed, 0o600); err != nil {
		t.Fatal(err)
	}
	code, lines := verifyLines(t, f)
	if code != 1 || !strings.HasPrefix(lines[f], "FAIL") || !strings.Contains(lines[f], "1 de 8 CFE del sobre no pasan la verificación") {
		t.Errorf("exit %d: %q", code, lines[f])
	}
	if l := lines["CFE 1/8"]; !strings.HasPrefix(l, "FAIL") || !strings.Contains(l, "firma inválida") || !strings.Contains(l, "DigestValue no coincide") {
		t.Errorf("the changed CFE: %q", l)
	}
	for i := 2; i <= 8; i++ {
		if l := lines[fmt.Sprintf("CFE %d/8", i)]; !strings.HasPrefix(l, "OK ") {
			t.Errorf("CFE %d: %q", i, l)
		}
	}
}
