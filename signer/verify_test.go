package signer

import (
	"bytes"
	"crypto"
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

func TestVerify_DGISampleCFEs(t *testing.T) {
	t.Parallel()
	cert := caratulaCert(t)
	files, err := filepath.Glob(filepath.Join(samplesDir(t), "extracted-cfe", "*.xml"))
	if err != nil || len(files) != 8 {
		t.Fatalf("want DGI's 8 sample CFEs, found %d (%v)", len(files), err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			v, err := Verify(readFile(t, f), VerifyOptions{Certificate: cert})
			if err != nil {
				t.Fatal(err)
			}
			if v.Algorithm != RSASHA1 || v.DigestAlgorithm != crypto.SHA1 || !v.Certificate.Equal(cert) {
				t.Errorf("got %s/%v by %q, want rsa-sha1/SHA-1 by the caratula certificate", v.Algorithm, v.DigestAlgorithm, v.Certificate.Subject.CommonName)
			}
		})
	}
}

func TestVerify_DGISample101Digest(t *testing.T) {
	t.Parallel()
	cert := caratulaCert(t)
	v, err := Verify(readFile(t, filepath.Join(samplesDir(t), "extracted-cfe", "Sob_Ej_Mod_19072016__CFE_101_A1.xml")), VerifyOptions{Certificate: cert})
	if err != nil {
		t.Fatal(err)
	}
	// dgi-cfe-format.md §4: DigestValue of DGI's example e-Ticket A-1.
	if v.DigestValue != "xpXiLtg0nWejadP44Gm7ArFMk7Y=" {
		t.Errorf("DigestValue = %s", v.DigestValue)
	}
}

func TestVerify_DGICAEFilesAndReport(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ file, ruc, digest string }{
		// DGI signed the 2016 CAE; the 2012 one and the report are signed by
		// the test company of DGI's testing environment.
		{"CAE_215071660012_90160134272_e-Factura.xml", "214844360018", "lj9eggfpftN46+y29NBMPuxZZnY="},
		{"CAE_219999830019_90120000194_e-Ticket.xml", "219999830019", "SBNVeGpb5nVz2ACMfaTcShzKNyE="},
		{"Rep_219000090011_20120511_01_Ej_Mod_27032014.xml", "", ""},
	} {
		t.Run(tc.file, func(t *testing.T) {
			doc := readFile(t, filepath.Join(samplesDir(t), tc.file))
			mustXMLSecVerify(t, doc)
			v, err := Verify(doc, VerifyOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if tc.ruc != "" && rucOf(v.Certificate.Subject) != tc.ruc {
				t.Errorf("signed by %s, want RUC %s", v.Certificate.Subject, tc.ruc)
			}
			if tc.digest != "" && v.DigestValue != tc.digest {
				t.Errorf("DigestValue %s, the file says %s", v.DigestValue, tc.digest)
			}
		})
	}
}

func TestVerify_Rejects(t *testing.T) {
	t.Parallel()
	s := newTestSigner(t, RSASHA1)
	signed := sign(t, s, unsignedCFE(t, cfe.EFactura, 3))
	dgiCert := caratulaCert(t)
	replace := func(old, new string) []byte {
		t.Helper()
		if !bytes.Contains(signed.XML, []byte(old)) {
			t.Fatalf("%q not in the signed document", old)
		}
		return bytes.Replace(signed.XML, []byte(old), []byte(new), 1)
	}
	// A DigestValue of the right length that is not the document's.
	otherDigest := sha1Base64([]byte("otro documento"))

	for _, tc := range []struct {
		name  string
		doc   []byte
		opts  VerifyOptions
		cause error  // nil: check msg only
		msg   string // part of the Spanish message
	}{
		{"amount changed", replace("<MntPagar>446.52<", "<MntPagar>446.53<"), VerifyOptions{}, ErrDigestMismatch, "modificado"},
		{"item name changed", replace("lote 002", "lote 003"), VerifyOptions{}, ErrDigestMismatch, "modificado"},
		{"DigestValue changed", replace(signed.DigestValue, otherDigest), VerifyOptions{}, ErrBadSignature, "no es válida"},
		{"another certificate", signed.XML, VerifyOptions{Certificate: dgiCert}, nil, "X509IssuerSerial"},
		{"not signed", unsignedCFE(t, cfe.EFactura, 3), VerifyOptions{}, ErrNotSigned, "no está firmado"},
		{"reference to an ID", replace(`<Reference URI="">`, `<Reference URI="#x">`), VerifyOptions{}, nil, `URI=""`},
		{"exclusive C14N", replace(`<CanonicalizationMethod Algorithm="http://www.w3.org/TR/2001/REC-xml-c14n-20010315"`,
			`<CanonicalizationMethod Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"`), VerifyOptions{}, nil, "CanonicalizationMethod"},
		{"no enveloped transform", replace(`<Transform Algorithm="http://www.w3.org/2000/09/xmldsig#enveloped-signature"/>`, ""), VerifyOptions{}, nil, "Transforms"},
		{"unknown digest", replace("xmldsig#sha1", "xmldsig#md5"), VerifyOptions{}, nil, "DigestMethod"},
		{"two SignedInfo", replace("<SignedInfo>", "<SignedInfo></SignedInfo><SignedInfo>"), VerifyOptions{}, nil, "SignedInfo aparece 2 veces"},
		{"no certificate", regexp.MustCompile(`<X509Certificate>[^<]*</X509Certificate>`).ReplaceAll(signed.XML, nil), VerifyOptions{}, nil, "no incluye el certificado"},
		{"malformed", signed.XML[:len(signed.XML)-2], VerifyOptions{}, nil, "XML mal formado"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := Verify(tc.doc, tc.opts)
			if err == nil {
				t.Fatalf("Verify accepted it: %+v", v)
			}
			if cfe.ErrorCode(err) != cfe.EINVALID || !strings.Contains(cfe.ErrorMessage(err), tc.msg) {
				t.Errorf("Verify = %v, want EINVALID saying %q", err, tc.msg)
			}
			if tc.cause != nil && !errors.Is(err, tc.cause) {
				t.Errorf("Verify = %v, want cause %v", err, tc.cause)
			}
		})
	}
}

// TestVerify_TamperedRejectedByXMLSec checks the tampered document the same way
// with the independent verifier.
func TestVerify_TamperedRejectedByXMLSec(t *testing.T) {
	t.Parallel()
	s := newTestSigner(t, RSASHA1)
	signed := sign(t, s, unsignedCFE(t, cfe.ETicket, 3))
	tampered := bytes.Replace(signed.XML, []byte("<MontoItem>122.00<"), []byte("<MontoItem>12.20<"), 1)
	if bytes.Equal(tampered, signed.XML) {
		t.Fatal("amount not found")
	}
	if out, ok := testtool.XMLSecVerify(t, tampered, ""); ok {
		t.Fatalf("xmlsec1 accepts a tampered CFE:\n%s", out)
	}
	if _, err := Verify(tampered, VerifyOptions{}); !errors.Is(err, ErrDigestMismatch) {
		t.Fatalf("Verify = %v, want ErrDigestMismatch", err)
	}
}

func FuzzVerify(f *testing.F) {
	s := newTestSigner(f, RSASHA1)
	f.Add(sign(f, s, unsignedCFE(f, cfe.ETicket, 2)).XML)
	files, _ := filepath.Glob(filepath.Join(samplesDir(f), "*.xml"))
	more, _ := filepath.Glob(filepath.Join(samplesDir(f), "extracted-cfe", "*.xml"))
	for _, file := range append(files, more...) {
		f.Add(readFile(f, file))
	}
	f.Add([]byte(`<a><Signature xmlns="http://www.w3.org/2000/09/xmldsig#"><SignedInfo/></Signature></a>`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		v, err := Verify(doc, VerifyOptions{})
		if err == nil && (v == nil || v.Certificate == nil || v.DigestValue == "") {
			t.Fatalf("Verify succeeded without a result: %+v", v)
		}
		if err != nil && cfe.ErrorCode(err) != cfe.EINVALID {
			t.Fatalf("Verify failed with code %s: %v", cfe.ErrorCode(err), err)
		}
	})
}
