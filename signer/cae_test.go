package signer

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/beevik/etree"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

func date(t *testing.T, s string) cfe.Date {
	t.Helper()
	d, err := cfe.ParseDate(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestParseCAEFile_DGISamples(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file string
		want cfe.CAERange
	}{
		{"CAE_215071660012_90160134272_e-Factura.xml", cfe.CAERange{
			ID: "111-A-1", RUC: "215071660012", Type: cfe.EFactura, Serie: "A", DNro: 1, HNro: 1000,
			CAEID: "90160134272", Autorizado: date(t, "2016-08-10"), Vencimiento: date(t, "2018-08-10"), Source: "dgi"}},
		// 2012 layout, without TA: accepted (see ParseCAEFile).
		{"CAE_219999830019_90120000194_e-Ticket.xml", cfe.CAERange{
			ID: "101-B-1", RUC: "219999830019", Type: cfe.ETicket, Serie: "B", DNro: 1, HNro: 145778,
			CAEID: "90120000194", Autorizado: date(t, "2012-08-24"), Vencimiento: date(t, "2014-08-24"), Source: "dgi"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			b := readFile(t, filepath.Join(samplesDir(t), tc.file))
			got, err := ParseCAEFile(b, CAEOptions{RUC: tc.want.RUC})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.SignedXML, b) {
				t.Error("SignedXML is not the file")
			}
			got.SignedXML = nil
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}

			// Both are long expired.
			_, err = ParseCAEFile(b, CAEOptions{RUC: tc.want.RUC, Today: date(t, "2026-11-22")})
			assertFieldError(t, err, "FVD", "venció el "+tc.want.Vencimiento.String())
			// Valid through FVD itself.
			if _, err := ParseCAEFile(b, CAEOptions{RUC: tc.want.RUC, Today: tc.want.Vencimiento}); err != nil {
				t.Errorf("rejected on its last day: %v", err)
			}
		})
	}
}

func assertFieldError(t *testing.T, err error, campo, msg string) {
	t.Helper()
	for _, f := range cfe.ErrorFields(err) {
		if f.Campo == campo && strings.Contains(f.Mensaje, msg) {
			if cfe.ErrorCode(err) != cfe.EINVALID {
				t.Errorf("code %s, want EINVALID", cfe.ErrorCode(err))
			}
			return
		}
	}
	t.Errorf("error %v does not say %s: %q", err, campo, msg)
}

func TestParseCAEFile_OtherRUC(t *testing.T) {
	t.Parallel()
	b := readFile(t, filepath.Join(samplesDir(t), "CAE_215071660012_90160134272_e-Factura.xml"))
	_, err := ParseCAEFile(b, CAEOptions{RUC: "219999830019"})
	assertFieldError(t, err, "RucE", "la constancia es del RUC 215071660012 y esta empresa es el RUC 219999830019")
	if !strings.Contains(cfe.ErrorMessage(err), "RucE") {
		t.Errorf("message %q does not name RucE", cfe.ErrorMessage(err))
	}
}

func TestParseCAEFile_NeedsCompanyRUC(t *testing.T) {
	t.Parallel()
	b := readFile(t, filepath.Join(samplesDir(t), "CAE_215071660012_90160134272_e-Factura.xml"))
	_, err := ParseCAEFile(b, CAEOptions{})
	if cfe.ErrorCode(err) != cfe.EINVALID || !strings.Contains(cfe.ErrorMessage(err), "falta el RUC de la empresa") {
		t.Fatalf("ParseCAEFile without the company's RUC = %v", err)
	}
	// The file's RUC with its check digit altered (215071660012's is 2).
	_, err = ParseCAEFile(b, CAEOptions{RUC: "215071660013"})
	if cfe.ErrorCode(err) != cfe.EINVALID || !strings.Contains(cfe.ErrorMessage(err), "falta el RUC de la empresa") {
		t.Fatalf("ParseCAEFile with a company RUC of wrong check digit = %v", err)
	}
}

func TestParseCAEFile_Tampered(t *testing.T) {
	t.Parallel()
	b := readFile(t, filepath.Join(samplesDir(t), "CAE_215071660012_90160134272_e-Factura.xml"))
	tampered := bytes.Replace(b, []byte("<ns0:HNro>1000<"), []byte("<ns0:HNro>9000<"), 1)
	if bytes.Equal(tampered, b) {
		t.Fatal("HNro not found")
	}
	if out, ok := testtool.XMLSecVerify(t, tampered, ""); ok {
		t.Fatalf("xmlsec1 accepts the tampered CAE:\n%s", out)
	}
	_, err := ParseCAEFile(tampered, CAEOptions{RUC: "215071660012"})
	if !errors.Is(err, ErrDigestMismatch) || !strings.Contains(cfe.ErrorMessage(err), "firma de DGI") {
		t.Fatalf("ParseCAEFile = %v, want a DGI signature error", err)
	}

	// The right file with a certificate that did not sign it.
	dgi := caratulaCert(t)
	if _, err := ParseCAEFile(b, CAEOptions{RUC: "215071660012", Certificate: dgi}); cfe.ErrorCode(err) != cfe.EINVALID {
		t.Fatalf("verified with another certificate: %v", err)
	}
}

func TestParseCAEFile_NotACAE(t *testing.T) {
	t.Parallel()
	cfeDoc := readFile(t, filepath.Join(samplesDir(t), "extracted-cfe", "Sob_Ej_Mod_19072016__CFE_101_A1.xml"))
	_, err := ParseCAEFile(cfeDoc, CAEOptions{RUC: "219999830019"})
	if cfe.ErrorCode(err) != cfe.EINVALID || !strings.Contains(cfe.ErrorMessage(err), "no es una constancia CAE") {
		t.Fatalf("ParseCAEFile(CFE) = %v", err)
	}
}

// caeFields are the DA children of a made-up CAE, in CAEType.xsd order.
type caeFields [][2]string

func validCAEFields() caeFields {
	return caeFields{
		{"RucE", fixtureRUC}, {"TCFE", "101"}, {"Serie", "A"}, {"DNro", "1"}, {"HNro", "5000"},
		{"TA", "E"}, {"NA", "90261234567"}, {"FA", "2026-11-01"}, {"FVD", "2028-11-01"},
	}
}

// with returns a copy with field name set to value ("" removes it).
func (c caeFields) with(name, value string) caeFields {
	var out caeFields
	found := false
	for _, f := range c {
		if f[0] == name {
			found = true
			if value == "" {
				continue
			}
			f[1] = value
		}
		out = append(out, f)
	}
	if !found {
		out = append(out, [2]string{name, value})
	}
	return out
}

// signedCAE builds a CAE file like DGI's and signs it with the test certificate
// (ParseCAEFile then uses the certificate embedded in the file).
func signedCAE(t *testing.T, fields caeFields) []byte {
	t.Helper()
	doc := etree.NewDocument()
	doc.CreateProcInst("xml", `version="1.0" encoding="UTF-8"`)
	root := doc.CreateElement("ns0:CAE")
	root.CreateAttr("xmlns:ns0", nsCFE)
	root.CreateAttr("version", "1.0")
	add(root, "ns0:TmstFrma", "2026-11-01T10:00:00-03:00")
	da := root.CreateElement("ns0:DA")
	for _, f := range fields {
		add(da, "ns0:"+f[0], f[1])
	}
	b, err := doc.WriteToBytes()
	if err != nil {
		t.Fatal(err)
	}
	return sign(t, newTestSigner(t, RSASHA1), b).XML
}

func TestParseCAEFile_Fields(t *testing.T) {
	t.Parallel()
	valid := signedCAE(t, validCAEFields())
	mustXMLSecVerify(t, valid)
	testtool.MustValidateXSD(t, testtool.XSD(t, "CAE.xsd"), valid)
	r, err := ParseCAEFile(valid, CAEOptions{RUC: fixtureRUC, Today: date(t, "2026-11-22")})
	if err != nil {
		t.Fatal(err)
	}
	if r.ID != "101-A-1" || r.Size() != 5000 || r.CAEID != "90261234567" || r.CAEEspecial != 0 {
		t.Errorf("range %+v", r)
	}
	special, err := ParseCAEFile(signedCAE(t, validCAEFields().with("CAEEspecial", "1").with("CausalCAEEsp", "123")), CAEOptions{RUC: fixtureRUC})
	if err != nil || special.CAEEspecial != 1 || special.CausalCAEEsp != 123 {
		t.Errorf("exonerated CAE: %+v, %v", special, err)
	}
	// A contingency range (the paper forms of issue 32): every check of
	// an electronic one, its type kept.
	paper, err := ParseCAEFile(signedCAE(t, validCAEFields().with("TCFE", "281").with("Serie", "XA")), CAEOptions{RUC: fixtureRUC, Today: date(t, "2026-11-22")})
	if err != nil || paper.Type != 281 || paper.ID != "281-XA-1" || paper.Source != SourceDGI {
		t.Errorf("contingency CAE: %+v, %v", paper, err)
	}
	if _, err := ParseCAEFile(signedCAE(t, validCAEFields().with("TCFE", "281").with("RucE", "214844360018")), CAEOptions{RUC: fixtureRUC}); cfe.ErrorCode(err) != cfe.EINVALID {
		t.Errorf("contingency CAE of another RUC: %v", err)
	}

	for _, tc := range []struct {
		name        string
		fields      caeFields
		campo, rule string
	}{
		{"unknown type", validCAEFields().with("TCFE", "104"), "TCFE", "104 no es un tipo"},
		{"paper authorization", validCAEFields().with("TA", "F"), "TA", "solo se admiten constancias E"},
		{"lower-case serie", validCAEFields().with("Serie", "a"), "Serie", `"a" no es una serie válida`},
		{"serie starting with 0", validCAEFields().with("Serie", "0A"), "Serie", "no es una serie válida"},
		{"range backwards", validCAEFields().with("DNro", "5001"), "HNro", "termina (5000) antes de empezar (5001)"},
		{"number over 7 digits", validCAEFields().with("HNro", "10000000"), "HNro", "hasta 7 dígitos"},
		{"number zero", validCAEFields().with("DNro", "0"), "DNro", "fuera de 1 a 9999999"},
		{"short CAE number", validCAEFields().with("NA", "9026123456"), "NA", "11 dígitos"},
		{"expires before issue", validCAEFields().with("FVD", "2026-10-31"), "FVD", "vence (2026-10-31) antes de su autorización (2026-11-01)"},
		{"bad date", validCAEFields().with("FA", "01/11/2026"), "FA", "AAAA-MM-DD"},
		{"missing serie", validCAEFields().with("Serie", ""), "Serie", "falta"},
		{"exonerated without reason", validCAEFields().with("CAEEspecial", "1"), "CausalCAEEsp", "obligatoria"},
		{"reason without exoneration", validCAEFields().with("CAEEspecial", "2").with("CausalCAEEsp", "5"), "CausalCAEEsp", "solo corresponde"},
		{"unknown special", validCAEFields().with("CAEEspecial", "7"), "CAEEspecial", "7 no es 1"},
		{"bad RUC", validCAEFields().with("RucE", "ABC"), "RucE", "no es un RUC"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseCAEFile(signedCAE(t, tc.fields), CAEOptions{RUC: fixtureRUC})
			assertFieldError(t, err, tc.campo, tc.rule)
		})
	}
}

// A field that cannot be read is reported once, without the rules that
// would judge its zero value (DNro 0, an ordinary CAE with a reason).
func TestParseCAEFile_UnreadableFields(t *testing.T) {
	t.Parallel()
	fields := validCAEFields().with("DNro", "uno").with("CAEEspecial", "x").with("CausalCAEEsp", "5")
	_, err := ParseCAEFile(signedCAE(t, fields), CAEOptions{RUC: fixtureRUC})
	var campos []string
	for _, f := range cfe.ErrorFields(err) {
		campos = append(campos, f.Campo)
	}
	if want := []string{"DNro", "CAEEspecial"}; !slices.Equal(campos, want) {
		t.Errorf("fields %v, want %v: %v", campos, want, err)
	}
}

func TestSandboxRanges(t *testing.T) {
	t.Parallel()
	today := date(t, "2028-02-29")
	ranges := SandboxRanges(fixtureRUC, today)
	types := cfe.ElectronicTypes()
	if len(ranges) != len(types) {
		t.Fatalf("%d ranges for %d electronic types", len(ranges), len(types))
	}
	seen := map[string]bool{}
	for i, r := range ranges {
		if r.Type != types[i] || r.RUC != fixtureRUC || r.Serie != "A" || r.DNro != 1 || r.HNro != 1_000_000 ||
			r.Source != "sandbox" || r.ID != cfe.RangeID(r.Type, "A", 1) || r.SignedXML != nil {
			t.Errorf("range %+v", r)
		}
		if len(r.CAEID) != 11 || !strings.HasPrefix(r.CAEID, "9028") || seen[r.CAEID] {
			t.Errorf("CAE number %q: want 11 digits, 90 + year 28, unique", r.CAEID)
		}
		seen[r.CAEID] = true
		// Two years from a 29 February: the first day after 28 February 2030.
		if r.Autorizado != today || r.Vencimiento != date(t, "2030-03-01") {
			t.Errorf("authorized %s, expires %s", r.Autorizado, r.Vencimiento)
		}
		if r.Expired(date(t, "2030-03-01")) || !r.Expired(date(t, "2030-03-02")) {
			t.Error("expiry day is wrong")
		}
	}
	if ranges[0].CAEID != "90289991010" {
		t.Errorf("e-Ticket CAE number %s, want 90 28 999 101 0", ranges[0].CAEID)
	}
}

func TestSandboxContingencyRanges(t *testing.T) {
	t.Parallel()
	today := date(t, "2026-11-28")
	ranges := SandboxContingencyRanges(fixtureRUC, today)
	if len(ranges) != 21 {
		t.Fatalf("%d contingency ranges, want one for each of the 21 types 201–282", len(ranges))
	}
	electronic := SandboxRanges(fixtureRUC, today)
	for i, r := range ranges {
		if info, _ := r.Type.Info(); !info.Contingency || r.Type != electronic[i].Type+100 {
			t.Errorf("range %d is of type %d, want %d", i, r.Type, electronic[i].Type+100)
		}
		if err := r.Validate(); err != nil {
			t.Errorf("range %s: %v", r.ID, err)
		}
		// Authorized a year ago: a form filled in before today falls within it.
		want := fmt.Sprintf("9025999%03d0", int(r.Type))
		if r.DNro != 1 || r.HNro != SandboxContingencySize || r.Serie != "A" || r.CAEID != want ||
			r.Autorizado != date(t, "2025-11-28") || r.Vencimiento != date(t, "2027-11-28") {
			t.Errorf("range %+v, want serie A 1–%d, CAE %s, authorized 2025-11-28, expiring 2027-11-28", r, SandboxContingencySize, want)
		}
	}
}

func FuzzParseCAEFile(f *testing.F) {
	for _, name := range []string{"CAE_215071660012_90160134272_e-Factura.xml", "CAE_219999830019_90120000194_e-Ticket.xml"} {
		f.Add(readFile(f, filepath.Join(samplesDir(f), name)), name[4:16])
	}
	f.Add([]byte(`<CAE xmlns="http://cfe.dgi.gub.uy"><DA/></CAE>`), fixtureRUC)
	f.Fuzz(func(t *testing.T, b []byte, ruc string) {
		r, err := ParseCAEFile(b, CAEOptions{RUC: ruc})
		if err != nil {
			if cfe.ErrorCode(err) != cfe.EINVALID {
				t.Fatalf("code %s: %v", cfe.ErrorCode(err), err)
			}
			return
		}
		if r.RUC != ruc || r.DNro < 1 || r.DNro > r.HNro || !r.Type.Valid() || r.ID == "" || !bytes.Equal(r.SignedXML, b) {
			t.Fatalf("accepted an inconsistent range: %+v", r)
		}
	})
}
