package main_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// writeChanged writes DGI's sample file with old replaced by new (once) into
// dir, and returns its path.
func writeChanged(t *testing.T, dir, sample, old, new string) string {
	t.Helper()
	b := mustRead(t, sample)
	changed := bytes.Replace(b, []byte(old), []byte(new), 1)
	if bytes.Equal(changed, b) {
		t.Fatalf("%s has no %q", filepath.Base(sample), old)
	}
	f := filepath.Join(dir, strings.TrimSuffix(filepath.Base(sample), ".xml")+"-changed.xml")
	if err := os.WriteFile(f, changed, 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// cfe-agent verify checks DGI's schema without xmllint (as on Windows): with
// a PATH where there is no program at all, DGI's samples pass the XSD check,
// and a CFE whose signature still verifies but whose KeyInfo breaks the
// schema fails it, saying where and why; --skip-xsd still skips the check.
func TestVerify_XSDWithoutXmllint(t *testing.T) {
	samples := filepath.Join(testtool.SharedDir(t), "dgi", "samples")
	cert := filepath.Join(samples, "extracted-cfe", "Sob_Ej_Mod_19072016__caratula_cert.pem")
	cfe101 := filepath.Join(samples, "extracted-cfe", "Sob_Ej_Mod_19072016__CFE_101_A1.xml")
	envelope := filepath.Join(samples, "Sob_219999830019_Ej_Mod_19072016.xml")
	report := filepath.Join(samples, "Rep_219000090011_20120511_01_Ej_Mod_27032014.xml")
	cae2016 := filepath.Join(samples, "CAE_215071660012_90160134272_e-Factura.xml")
	cae2012 := filepath.Join(samples, "CAE_219999830019_90120000194_e-Ticket.xml")
	// KeyInfo is outside what the signature covers: the signature verifies
	// with the pinned certificate, the schema (xs:ID) does not.
	badSerial := writeChanged(t, t.TempDir(), cfe101, "<KeyInfo>", `<KeyInfo Id="1-no-es-un-nombre">`)
	env := agentEnv("PATH=" + t.TempDir())

	verify := func(args ...string) (int, map[string]string) {
		t.Helper()
		out, code := runCLI(t, env, append([]string{"verify"}, args...)...)
		lines := map[string]string{}
		for line := range strings.Lines(out) {
			if status, rest, ok := strings.Cut(strings.TrimSpace(line), " "); ok && (status == "OK" || status == "FAIL") {
				file, _, _ := strings.Cut(strings.TrimSpace(rest), ": ")
				lines[file] = strings.TrimSpace(line)
			}
		}
		return code, lines
	}

	code, lines := verify("--cert", cert, cfe101)
	if code != 0 || !strings.HasPrefix(lines[cfe101], "OK ") || !strings.Contains(lines[cfe101], "XSD CFEDGI.xsd válido") ||
		strings.Contains(lines[cfe101], "xmllint") {
		t.Errorf("DGI's e-Ticket without xmllint: exit %d, %q", code, lines[cfe101])
	}
	code, lines = verify(envelope, report, cae2016, cae2012)
	if code != 0 {
		t.Errorf("DGI's envelope, report and CAE files without xmllint: exit %d\n%v", code, lines)
	}
	for f, want := range map[string]string{envelope: "XSD EnvioCFE.xsd válido", report: "XSD ReporteDiarioCFE.xsd válido",
		cae2016: "XSD CAE.xsd válido", cae2012: "XSD CAE-2012.xsd válido"} {
		if !strings.HasPrefix(lines[f], "OK ") || !strings.Contains(lines[f], want) || strings.Contains(lines[f], "xmllint") {
			t.Errorf("%s: %q lacks %q", filepath.Base(f), lines[f], want)
		}
	}

	code, lines = verify("--cert", cert, badSerial)
	line := lines[badSerial]
	if code != 1 || !strings.HasPrefix(line, "FAIL") || !strings.Contains(line, "firma rsa-sha1 válida") {
		t.Fatalf("a CFE whose KeyInfo breaks the schema: exit %d, %q", code, line)
	}
	for _, want := range []string{"XSD CFEDGI.xsd inválido", "línea ", "/CFE/Signature/KeyInfo:",
		`atributo Id: valor "1-no-es-un-nombre" inválido`, "no es un identificador XML"} {
		if !strings.Contains(line, want) {
			t.Errorf("the XSD failure %q does not say %q", line, want)
		}
	}

	// Many errors: the line shows the first three and counts the others.
	many := writeChanged(t, t.TempDir(), cfe101, "<KeyInfo><X509Data><X509IssuerSerial><X509IssuerName>",
		`<KeyInfo Id="1a" a="1"><X509Data b="1"><X509IssuerSerial c="1"><X509IssuerName d="1">`)
	code, lines = verify("--cert", cert, many)
	if line := lines[many]; code != 1 || !strings.Contains(line, "el atributo a no está permitido en KeyInfo") ||
		strings.Contains(line, "el atributo c no está permitido") || !strings.HasSuffix(line, "; y 2 errores más") {
		t.Errorf("a CFE with five schema errors: exit %d, %q", code, line)
	}

	code, lines = verify("--skip-xsd", "--cert", cert, badSerial)
	if code != 0 || !strings.Contains(lines[badSerial], "XSD omitido") {
		t.Errorf("--skip-xsd: exit %d, %q", code, lines[badSerial])
	}
}

// With xmllint installed, verify asks it too: an agreement says so, and a
// disagreement fails the file and names both verdicts. libxml2 accepts a
// base64 value of characters outside the alphabet (X509SKI "@@@"), which
// XML Schema and the built-in validator refuse.
func TestVerify_XSDSecondOpinionFromXmllint(t *testing.T) {
	testtool.Require(t, "xmllint")
	samples := filepath.Join(testtool.SharedDir(t), "dgi", "samples")
	cert := filepath.Join(samples, "extracted-cfe", "Sob_Ej_Mod_19072016__caratula_cert.pem")
	cfe101 := filepath.Join(samples, "extracted-cfe", "Sob_Ej_Mod_19072016__CFE_101_A1.xml")
	lenient := writeChanged(t, t.TempDir(), cfe101, "<X509Data>", "<X509Data><X509SKI>@@@</X509SKI>")

	code, lines := verifyLines(t, "--cert", cert, cfe101)
	if code != 0 || !strings.Contains(lines[cfe101], "XSD CFEDGI.xsd válido (también según xmllint)") {
		t.Errorf("DGI's e-Ticket with xmllint: exit %d, %q", code, lines[cfe101])
	}
	code, lines = verifyLines(t, "--cert", cert, lenient)
	line := lines[lenient]
	if code != 1 || !strings.HasPrefix(line, "FAIL") || !strings.Contains(line, "firma rsa-sha1 válida") ||
		!strings.Contains(line, "xmllint lo acepta: los validadores no coinciden") || !strings.Contains(line, "X509SKI") {
		t.Errorf("a document only libxml2 accepts: exit %d, %q", code, line)
	}
}
