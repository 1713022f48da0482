package verifier

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/beevik/etree"

	"github.com/cfe-agent/cfe-agent/assets"
	"github.com/cfe-agent/cfe-agent/cfe/xsdvalid"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// sample reads one of DGI's signed samples (shared/dgi/samples/name).
func sample(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testtool.SharedDir(t), "dgi", "samples", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// noXMLLint is a LookPath that finds nothing: the built-in validator alone.
func noXMLLint(string) (string, error) { return "", exec.ErrNotFound }

// caratulaPin pins the certificate of DGI's sample envelope, which signed
// the CFEs cut out of it (they carry only its issuer and serial).
func caratulaPin(t *testing.T) Pin {
	t.Helper()
	c, err := ReadCertificate(filepath.Join(testtool.SharedDir(t), "dgi", "samples", "extracted-cfe",
		"Sob_Ej_Mod_19072016__caratula_cert.pem"))
	if err != nil {
		t.Fatal(err)
	}
	return Pin{Cert: c, By: "--cert caratula.pem"}
}

func newVerifier(t *testing.T, cfg Config) *Verifier {
	t.Helper()
	if cfg.Trust.Anchors == nil {
		trust, err := EmbeddedTrust()
		if err != nil {
			t.Fatal(err)
		}
		cfg.Trust = trust
	}
	v, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(v.Close)
	return v
}

// TestDescribeDocument: what each kind of DGI document is taken for — the
// schema it is validated against, whose RUC must have signed it and when
// it says it was signed.
func TestDescribeDocument(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, file  string
		what        string
		schema      string
		kind        int
		ruc         string
		signedAtTag string
	}{
		{"an e-Factura", "extracted-cfe/Sob_Ej_Mod_19072016__CFE_111_A1.xml", "e-Factura A-1", assets.SchemaCFE, kindCFE,
			"219999830019", "TmstFirma"},
		{"a CAE file of 2016", "CAE_215071660012_90160134272_e-Factura.xml", "archivo CAE", assets.SchemaCAE, kindCAE, "", "TmstFrma"},
		{"a CAE file of 2012", "CAE_219999830019_90120000194_e-Ticket.xml", "archivo CAE (formato 2012, sin TA)",
			assets.SchemaCAE2012, kindCAE, "", "TmstFrma"},
		{"a daily report", "Rep_219000090011_20120511_01_Ej_Mod_27032014.xml", "reporte diario del 2012-07-26 (RUC 219000090011, secuencia 1): " +
			"28 comprobantes; e-Ticket: 4 usados, 4 emitidos, 0 anulados (usados A 1-4), total $ 846316.00 en 1 sucursal(es); " +
			"Nota de Crédito de e-Ticket: 2 usados, 2 emitidos, 0 anulados (usados A 1-2), total $ 144030.00 en 1 sucursal(es); " +
			"Nota de Débito de e-Ticket: 2 usados, 2 emitidos, 0 anulados (usados A 1-2), total $ 60466.00 en 1 sucursal(es); " +
			"e-Ticket Contingencia: 1 emitidos, total $ 5540540.10 en 1 sucursal(es); " +
			"e-Factura: 4 usados, 4 emitidos, 0 anulados (usados A 1-4), total $ 3318900.00 en 1 sucursal(es); " +
			"Nota de Crédito de e-Factura: 2 usados, 2 emitidos, 0 anulados (usados A 1-2), total $ 176530.00 en 1 sucursal(es); " +
			"Nota de Débito de e-Factura: 2 usados, 2 emitidos, 0 anulados (usados A 1-2), total $ 366.00 en 1 sucursal(es); " +
			"e-Factura Contingencia: 1 emitidos, total $ 1316609.96 en 1 sucursal(es); " +
			"e-Remito: 4 usados, 4 emitidos, 0 anulados (usados A 1-4) en 1 sucursal(es); " +
			"e-Remito Contingencia: 1 emitidos en 1 sucursal(es); " +
			"e-Resguardo: 4 usados, 4 emitidos, 0 anulados (usados A 1-4), retenido $ 140050.00 en 1 sucursal(es); " +
			"e-Resguardo Contingencia: 1 emitidos, retenido $ 0.00 en 1 sucursal(es)", assets.SchemaReport,
			kindReport, "219000090011", "TmstFirmaEnv"},
		{"an envelope", "Sob_219999830019_Ej_Mod_19072016.xml", "sobre de CFE", assets.SchemaEnvelope, kindEnvelope, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := describeDocument(sample(t, tt.file))
			if d.what != tt.what || d.schema != tt.schema || d.kind != tt.kind || d.ruc != tt.ruc || d.signedAtTag != tt.signedAtTag {
				t.Errorf("describeDocument = %+v, want what %q, schema %q, kind %d, RUC %q, signed at %s", d, tt.what, tt.schema,
					tt.kind, tt.ruc, tt.signedAtTag)
			}
			if (tt.signedAtTag != "") == d.signedAt.IsZero() {
				t.Errorf("signed at %v: want a time exactly when the document has %s", d.signedAt, tt.signedAtTag)
			}
		})
	}
	for in, want := range map[string]docInfo{
		"no XML at all":             {what: "no es XML"},
		"<Factura/>":                {what: "documento Factura"},
		"<EnvioCFE_entreEmpresas/>": {what: "sobre de CFE para un receptor", schema: assets.SchemaEnvelopeReceiver, kind: kindEnvelope},
		// A time without a zone is no signing time: the certificate cannot be checked against it.
		"<CFE><eTck><TmstFirma>2016-07-19T10:00:00</TmstFirma></eTck></CFE>": {what: "CFE", schema: assets.SchemaCFE,
			kind: kindCFE, noun: "CFE", signedAtTag: "TmstFirma"},
	} {
		if got := describeDocument([]byte(in)); got != want {
			t.Errorf("describeDocument(%q) = %+v, want %+v", in, got, want)
		}
	}
}

// TestCAELayout2012: the 2012 layout is only a CAE file without TA that
// declares a schema older than CAE 1.4.
func TestCAELayout2012(t *testing.T) {
	t.Parallel()
	const xsi = `xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"`
	tests := []struct {
		doc  string
		want bool
	}{
		{`<CAE ` + xsi + ` xsi:schemaLocation="http://cfe.dgi.gub.uy CAE_v1.1.xsd"><DA><TD>101</TD></DA></CAE>`, true},
		{`<CAE ` + xsi + ` xsi:schemaLocation="http://cfe.dgi.gub.uy CAE_v0.9.xsd"><DA/></CAE>`, true},
		{`<CAE ` + xsi + ` xsi:schemaLocation="http://cfe.dgi.gub.uy CAE_v1.4.xsd"><DA/></CAE>`, false},
		{`<CAE ` + xsi + ` xsi:schemaLocation="http://cfe.dgi.gub.uy CAE_v2.0.xsd"><DA/></CAE>`, false},
		{`<CAE ` + xsi + ` xsi:schemaLocation="http://cfe.dgi.gub.uy CAE_v1.1.xsd"><DA><TA>1</TA></DA></CAE>`, false},
		{`<CAE><DA/></CAE>`, false},
		// schemaLocation outside xsi's namespace declares nothing.
		{`<CAE schemaLocation="http://cfe.dgi.gub.uy CAE_v1.1.xsd"><DA/></CAE>`, false},
		{`<CAE ` + xsi + ` xsi:schemaLocation="http://cfe.dgi.gub.uy CAE_v1.1.xsd"/>`, false},
	}
	for _, tt := range tests {
		doc := etree.NewDocument()
		if err := doc.ReadFromString(tt.doc); err != nil {
			t.Fatal(err)
		}
		if got := caeLayout2012(doc.Root()); got != tt.want {
			t.Errorf("caeLayout2012(%s) = %v, want %v", tt.doc, got, tt.want)
		}
	}
}

// TestVerifier_Document: DGI's sample CFE verifies with the built-in
// validator alone; a pinned certificate that did not sign it, a changed
// amount and an unknown document fail, each saying why.
func TestVerifier_Document(t *testing.T) {
	t.Parallel()
	signed := sample(t, "extracted-cfe/Sob_Ej_Mod_19072016__CFE_101_A1.xml")
	pin := caratulaPin(t)
	v := newVerifier(t, Config{Pinned: []Pin{pin}, LookPath: noXMLLint})
	if v.SecondOpinion() {
		t.Fatal("a LookPath that finds nothing still gave a second opinion")
	}
	res := v.Document(signed)
	line := strings.Join(res.Notes, "; ")
	if !res.OK {
		t.Fatalf("DGI's e-Ticket: %s", line)
	}
	testtool.MustContain(t, "the e-Ticket's notes", line, "e-Ticket A-1", "firma rsa-sha1 válida",
		"RUC del certificado = RUC emisor 219999830019", "certificado vigente al firmar (TmstFirma 2016-07-19",
		"cadena confiable: Correo Uruguayo - CA", "XSD CFEDGI.xsd válido")
	if strings.Contains(line, "xmllint") {
		t.Errorf("xmllint named without it: %s", line)
	}

	// Another certificate pinned: the signature is not by it.
	other, err := ReadCertificate(filepath.Join(testtool.SharedDir(t), "dgi", "certs", "DGI_RUC+214844360018.pem"))
	if err != nil {
		t.Fatal(err)
	}
	res = newVerifier(t, Config{Pinned: []Pin{{Cert: other, By: "--cert dgi.pem"}}, SkipXSD: true}).Document(signed)
	if line := strings.Join(res.Notes, "; "); res.OK || !strings.Contains(line, "firma inválida: no la hizo el certificado indicado (--cert dgi.pem)") ||
		!strings.HasSuffix(line, "XSD omitido") {
		t.Errorf("pinned to another certificate: ok %v, %s", res.OK, line)
	}
	res = newVerifier(t, Config{Pinned: []Pin{{Cert: other, By: "a"}, {Cert: other, By: "b"}}, SkipXSD: true}).Document(signed)
	if line := strings.Join(res.Notes, "; "); res.OK || !strings.Contains(line, "no la hizo ninguno de los 2 certificados indicados") {
		t.Errorf("pinned to two other certificates: ok %v, %s", res.OK, line)
	}

	// A signed number changed: the digest no longer matches.
	changed := bytes.Replace(signed, []byte("<ns0:Nro>1<"), []byte("<ns0:Nro>2<"), 1)
	if bytes.Equal(changed, signed) {
		t.Fatal("the sample has no Nro 1")
	}
	if res := v.Document(changed); res.OK || !strings.Contains(strings.Join(res.Notes, "; "), "firma inválida") {
		t.Errorf("a changed number: ok %v, %q", res.OK, res.Notes)
	}

	// A document that is none of DGI's: nothing to check it against.
	res = v.Document([]byte("<Factura/>"))
	if line := strings.Join(res.Notes, "; "); res.OK || !strings.Contains(line, "documento Factura") ||
		!strings.Contains(line, "XSD: no es un CFE, un archivo CAE, un reporte diario ni un sobre de CFE") {
		t.Errorf("an unknown document: ok %v, %s", res.OK, line)
	}
}

// TestVerifier_Envelope: each CFE of DGI's sample envelope is checked with
// the carátula's certificate, one Part per CFE, and the report writes one
// indented line per CFE after the envelope's.
func TestVerifier_Envelope(t *testing.T) {
	t.Parallel()
	v := newVerifier(t, Config{LookPath: noXMLLint})
	res := v.Document(sample(t, "Sob_219999830019_Ej_Mod_19072016.xml"))
	res.File = "sobre.xml"
	if !res.OK || len(res.CFEs) != 8 {
		t.Fatalf("DGI's envelope: ok %v, %d CFEs, %q", res.OK, len(res.CFEs), res.Notes)
	}
	var out bytes.Buffer
	res.Write(&out)
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 9 || !strings.HasPrefix(lines[0], "OK   sobre.xml: sobre de CFE; 8 CFE, certificado de la carátula \"DGI-RUC PRUEBA CEDE\"") {
		t.Fatalf("the envelope's report:\n%s", out.String())
	}
	for i, l := range lines[1:] {
		if want := "  OK   CFE " + string(rune('1'+i)) + "/8: "; !strings.HasPrefix(l, want) || !strings.Contains(l, "cadena confiable") {
			t.Errorf("line %d = %q, want it to start with %q and name the chain", i+2, l, want)
		}
	}
}

// TestResult_Write: a failed file and a failed CFE of an envelope are FAIL
// lines; an unreadable file says why without its path twice.
func TestResult_Write(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	Result{File: "s.xml", Notes: []string{"sobre de CFE", "1 de 2 CFE del sobre no pasan la verificación"},
		CFEs: []Part{{OK: true, Notes: []string{"e-Ticket A-1", "firma válida"}}, {Notes: []string{"e-Ticket A-2", "firma inválida"}}}}.Write(&out)
	want := "FAIL s.xml: sobre de CFE; 1 de 2 CFE del sobre no pasan la verificación\n" +
		"  OK   CFE 1/2: e-Ticket A-1; firma válida\n" +
		"  FAIL CFE 2/2: e-Ticket A-2; firma inválida\n"
	if out.String() != want {
		t.Errorf("Write =\n%s\nwant\n%s", out.String(), want)
	}
	missing := filepath.Join(t.TempDir(), "no.xml")
	res := newVerifier(t, Config{SkipXSD: true}).File(missing)
	out.Reset()
	res.Write(&out)
	if res.OK || strings.Count(out.String(), missing) != 1 || !strings.Contains(out.String(), "no such file or directory") {
		t.Errorf("a missing file: %q", out.String())
	}
}

// TestVerifier_SecondOpinion: when the second validator refuses what the
// built-in one accepts, the file fails and the line names both verdicts;
// a second validator that cannot run leaves the built-in verdict alone and
// says so. The stand-ins are shell scripts in xmllint's place.
func TestVerifier_SecondOpinion(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("the stand-ins are shell scripts")
	}
	signed := sample(t, "extracted-cfe/Sob_Ej_Mod_19072016__CFE_101_A1.xml")
	dir := t.TempDir()
	refuses := filepath.Join(dir, "refuses")
	if err := os.WriteFile(refuses, []byte("#!/bin/sh\necho \"$5:1: element Foo: no válido\"\nexit 3\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	agrees := filepath.Join(dir, "agrees")
	if err := os.WriteFile(agrees, []byte("#!/bin/sh\nexit 0\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	notAProgram := filepath.Join(dir, "absent")
	tests := []struct {
		name, path string
		ok         bool
		want       string
	}{
		{"disagreement", refuses, false, "XSD CFEDGI.xsd inválido según xmllint: documento:1: element Foo: no válido; " +
			"el validador del programa lo acepta: los validadores no coinciden"},
		{"agreement", agrees, true, "XSD CFEDGI.xsd válido (también según xmllint)"},
		{"xmllint does not run", notAProgram, true, "xmllint no se pudo ejecutar"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v := newVerifier(t, Config{Pinned: []Pin{caratulaPin(t)},
				LookPath: func(string) (string, error) { return tt.path, nil }})
			res := v.Document(signed)
			if line := strings.Join(res.Notes, "; "); res.OK != tt.ok || !strings.Contains(line, tt.want) {
				t.Errorf("ok %v, %s; want ok %v and %q", res.OK, line, tt.ok, tt.want)
			}
			if tt.name == "xmllint does not run" && !strings.HasSuffix(strings.Join(res.Notes, "; "), "XSD CFEDGI.xsd válido") {
				t.Errorf("the built-in verdict is not given alone: %q", res.Notes)
			}
		})
	}
}

// TestXSDSummary: a validation with many errors shows the first three and
// how many more; with three or fewer, all of them.
func TestXSDSummary(t *testing.T) {
	t.Parallel()
	s, err := xsdvalid.DGI(assets.SchemaCFE)
	if err != nil {
		t.Fatal(err)
	}
	many := s.Validate([]byte(`<CFE xmlns="http://cfe.dgi.gub.uy" version="1.0" a="1" b="2" c="3" d="4"><eTck/></CFE>`))
	var es xsdvalid.Errors
	if !errors.As(many, &es) || len(es) != 5 {
		t.Fatalf("Validate = %v, want 5 xsdvalid.Errors", many)
	}
	if got, want := (xsdSummary{many}).Error(), es[:3].Error()+"; y 2 errores más"; got != want {
		t.Errorf("summary of 5 errors = %q, want %q", got, want)
	}
	one := s.Validate([]byte(`<CFE xmlns="http://cfe.dgi.gub.uy" version="1.0"><eTck/></CFE>`))
	if one == nil {
		t.Fatal("an empty e-Ticket is valid")
	}
	if got := (xsdSummary{one}).Error(); got != one.Error() || strings.Contains(got, "más") {
		t.Errorf("summary of one error = %q, want %q", got, one.Error())
	}
}
