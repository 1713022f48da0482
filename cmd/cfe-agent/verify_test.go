package main_test

import (
	"bytes"
	"maps"
	"os"
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

// cfe-agent verify accepts every CFE DGI signed in its example envelope (with
// the caratula's certificate, since they carry only issuer and serial) and
// both of DGI's CAE files: the 2016 one against CAE.xsd, the 2012 one, which
// predates TA, against the 2012 layout.
func TestVerify_DGISamplesAndCAEFiles(t *testing.T) {
	testtool.Require(t, "xmllint")
	samples := filepath.Join(testtool.SharedDir(t), "dgi", "samples")
	cfes, err := filepath.Glob(filepath.Join(samples, "extracted-cfe", "*.xml"))
	if err != nil || len(cfes) < 8 {
		t.Fatalf("DGI's extracted CFEs: %v %v", cfes, err)
	}
	cae2016 := filepath.Join(samples, "CAE_215071660012_90160134272_e-Factura.xml")
	cae2012 := filepath.Join(samples, "CAE_219999830019_90120000194_e-Ticket.xml")
	files := append([]string{cae2016, cae2012}, cfes...)
	cert := filepath.Join(samples, "extracted-cfe", "Sob_Ej_Mod_19072016__caratula_cert.pem")

	code, lines := verifyLines(t, append([]string{"--cert", cert}, files...)...)
	if code != 0 || len(lines) != len(files) {
		t.Fatalf("verify of DGI's samples: exit %d, %d report lines for %d files:\n%s", code, len(lines), len(files), strings.Join(slices.Collect(maps.Values(lines)), "\n"))
	}
	for _, f := range files {
		if !strings.HasPrefix(lines[f], "OK ") || !strings.Contains(lines[f], "firma rsa-sha1 válida") {
			t.Errorf("verify %s: %q", filepath.Base(f), lines[f])
		}
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
	creds, err := signer.GenerateTestCertificate("219999830019", "DGI de prueba", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	s, err := signer.New(signer.Config{Credentials: creds})
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

	code, lines := verifyLines(t, old, undeclared, newer)
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
