package signer

import (
	"bytes"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// signedFixtures signs an e-Factura, its credit note and an e-Remito, all
// addressed to DGI's RUC.
func signedFixtures(t *testing.T, s *Signer) [][]byte {
	t.Helper()
	var out [][]byte
	for _, typ := range []cfe.Type{cfe.EFactura, cfe.EFacturaNC, cfe.ERemito} {
		out = append(out, sign(t, s, unsignedCFE(t, typ, 2)).XML)
	}
	return out
}

// withoutDeclaration is the CFE element of a document, as an envelope holds it.
func withoutDeclaration(b []byte) []byte {
	if i := bytes.Index(b, []byte("<CFE")); i >= 0 {
		return b[i:]
	}
	return b
}

// Both envelopes validate against DGI's XSDs; the Caratula carries the
// signer's certificate; every CFE cut out of them is the signed CFE byte for
// byte and verifies with xmlsec1 under the Caratula's certificate alone.
func TestMakeEnvelope(t *testing.T) {
	t.Parallel()
	s := newTestSigner(t, RSASHA1)
	cfes := signedFixtures(t, s)
	dir := t.TempDir()
	for _, c := range []struct {
		kind cfe.EnvelopeKind
		xsd  string
	}{{cfe.EnvelopeDGI, "EnvioCFE.xsd"}, {cfe.EnvelopeReceiver, "EnvioCFE_entreEmpresas.xsd"}} {
		t.Run(c.kind.Root(), func(t *testing.T) {
			req := EnvelopeRequest{Kind: c.kind, RutReceptor: cfe.RUCDGI, IdEmisor: 9, Fecha: testNow}
			for i, x := range cfes {
				ec := cfe.EnvelopeCFE{XML: x}
				if c.kind == cfe.EnvelopeReceiver && i == 0 {
					ec.Adenda = "Pagadero a 30 días"
				}
				req.CFEs = append(req.CFEs, ec)
			}
			b, err := MakeEnvelope(req)
			if err != nil {
				t.Fatal(err)
			}
			testtool.MustValidateXSD(t, testtool.XSD(t, c.xsd), b)
			env, err := ReadEnvelope(b)
			if err != nil {
				t.Fatal(err)
			}
			if env.Kind != c.kind || !env.Certificate.Equal(testCredentials(t).Certificate) || env.RUCEmisor != fixtureRUC ||
				env.RutReceptor != cfe.RUCDGI || env.IdEmisor != 9 || len(env.CFEs) != 3 {
				t.Fatalf("%+v", env)
			}
			if c.kind == cfe.EnvelopeReceiver && env.Adendas[0] != "Pagadero a 30 días" {
				t.Errorf("adendas %q", env.Adendas)
			}
			caratula := filepath.Join(dir, c.kind.Root()+".pem")
			if err := os.WriteFile(caratula, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: env.Certificate.Raw}), 0o600); err != nil {
				t.Fatal(err)
			}
			for i, x := range env.CFEs {
				if !bytes.Equal(x, withoutDeclaration(cfes[i])) {
					t.Errorf("CFE %d is not the signed CFE byte for byte", i+1)
				}
				if out, ok := testtool.XMLSecVerify(t, x, caratula); !ok {
					t.Errorf("xmlsec1 rejects CFE %d with the Caratula's certificate:\n%s", i+1, out)
				}
				if _, err := Verify(x, VerifyOptions{Certificate: env.Certificate}); err != nil {
					t.Errorf("CFE %d: %v", i+1, err)
				}
			}
		})
	}
}

func TestMakeEnvelope_Refuses(t *testing.T) {
	t.Parallel()
	s := newTestSigner(t, RSASHA1)
	cfes := signedFixtures(t, s)
	other, err := GenerateTestCertificate(fixtureRUC, "Otra caja", testNow.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	s2, err := New(Config{Credentials: other, Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	byOther := sign(t, s2, unsignedCFE(t, cfe.EResguardo, 1)).XML
	tampered := bytes.Replace(cfes[0], []byte("Fernández Crespo 1534"), []byte("Fernández Crespo 1535"), 1)
	for _, c := range []struct {
		name string
		cfes [][]byte
		msg  string
	}{
		{"two certificates", [][]byte{cfes[0], byOther}, "un solo certificado por sobre"},
		{"a CFE changed after signing", [][]byte{tampered, cfes[1]}, "firma inválida"},
	} {
		t.Run(c.name, func(t *testing.T) {
			req := EnvelopeRequest{Kind: cfe.EnvelopeDGI, RutReceptor: cfe.RUCDGI, Fecha: testNow}
			for _, x := range c.cfes {
				req.CFEs = append(req.CFEs, cfe.EnvelopeCFE{XML: x})
			}
			_, err := MakeEnvelope(req)
			if cfe.ErrorCode(err) != cfe.EINVALID || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("err %v, want EINVALID with %q", err, c.msg)
			}
		})
	}
}

// PrepareEnvelope verifies every CFE, whole: a CFE malformed after its head
// (which cfe.BuildEnvelope alone does not parse) is refused. With a
// VerifiedCFEs, a CFE verified once is found again only by its very bytes:
// a copy changed after signing is verified, and refused, although the
// original was remembered.
func TestPrepareEnvelope_VerifiedCFEs(t *testing.T) {
	t.Parallel()
	s := newTestSigner(t, RSASHA1)
	cfes := signedFixtures(t, s)
	req := func(cache *VerifiedCFEs, xs ...[]byte) EnvelopeRequest {
		r := EnvelopeRequest{Kind: cfe.EnvelopeDGI, RutReceptor: cfe.RUCDGI, IdEmisor: 3, Fecha: testNow, Verified: cache}
		for _, x := range xs {
			r.CFEs = append(r.CFEs, cfe.EnvelopeCFE{XML: x})
		}
		return r
	}
	detalle := bytes.Index(cfes[1], []byte("</Detalle>"))
	if detalle < 0 {
		t.Fatal("no Detalle in the fixture")
	}
	malformed := append(append(bytes.Clone(cfes[1][:detalle]), "</Detallex>"...), cfes[1][detalle+len("</Detalle>"):]...)
	if _, err := MakeEnvelope(req(nil, cfes[0], malformed)); cfe.ErrorCode(err) != cfe.EINVALID || !strings.Contains(err.Error(), "CFE[2]") ||
		!strings.Contains(err.Error(), "firma inválida") {
		t.Errorf("a CFE malformed after its head: %v, want EINVALID naming CFE[2] (firma inválida)", err)
	}

	cache := NewVerifiedCFEs(0)
	first, err := MakeEnvelope(req(cache, cfes...))
	if err != nil {
		t.Fatal(err)
	}
	if cache.Len() != len(cfes) {
		t.Fatalf("the cache holds %d CFEs, want %d", cache.Len(), len(cfes))
	}
	again, err := MakeEnvelope(req(cache, cfes...))
	if err != nil || !bytes.Equal(again, first) {
		t.Fatalf("from the cache: err %v, same envelope %v", err, bytes.Equal(again, first))
	}
	tampered := bytes.Replace(cfes[0], []byte("Fernández Crespo 1534"), []byte("Fernández Crespo 1535"), 1)
	if bytes.Equal(tampered, cfes[0]) {
		t.Fatal("the fixture lacks the address")
	}
	if _, err := MakeEnvelope(req(cache, tampered, cfes[1])); cfe.ErrorCode(err) != cfe.EINVALID || !strings.Contains(err.Error(), "firma inválida") {
		t.Errorf("a changed copy of a remembered CFE: %v, want EINVALID (firma inválida)", err)
	}
	if cache.Len() != len(cfes) {
		t.Errorf("the cache holds %d CFEs after a refused one, want %d", cache.Len(), len(cfes))
	}
	small := NewVerifiedCFEs(2)
	if _, err := PrepareEnvelope(req(small, cfes...)); err != nil {
		t.Fatal(err)
	}
	if small.Len() > 2 || small.Len() == 0 {
		t.Errorf("a cache of 2 holds %d CFEs", small.Len())
	}
}
