package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/issuer"
	"github.com/cfe-agent/cfe-agent/profiles"
	"github.com/cfe-agent/cfe-agent/signer"
	"github.com/cfe-agent/cfe-agent/store"
)

// testRUC is the company of the tests' stores.
const testRUC = "219999830019"

// issuing is a real store in a test's folder with the sandbox's test
// ranges, and an issuer that signs into it with a generated test
// certificate, in Montevideo's zone: the signed CFEs the technician's use
// cases read.
type issuing struct {
	db    *store.DB
	iss   *issuer.Issuer
	creds *signer.Credentials // the certificate that signs
}

func newIssuing(t *testing.T) *issuing {
	t.Helper()
	now := time.Now()
	creds, err := signer.GenerateTestCertificate(testRUC, "Empresa de prueba S.A.", now)
	if err != nil {
		t.Fatal(err)
	}
	s, err := signer.New(signer.Config{Credentials: creds})
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(filepath.Join(t.TempDir(), "store.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	for _, r := range signer.SandboxRanges(testRUC, cfe.DateOf(now.In(cfe.Montevideo))) {
		if err := db.PutRange(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	emisor := cfe.Emisor{RUCEmisor: testRUC, RznSoc: "Empresa de prueba S.A.", CdgDGISucur: 1, DomFiscal: "Av. 18 de Julio 1000",
		Ciudad: "Montevideo", Departamento: "Montevideo"}
	montevideo := func(time.Time) issuer.ZoneStatus {
		return issuer.ZoneStatus{Name: "America/Montevideo", Source: "test", Offset: cfe.MontevideoOffset}
	}
	iss := issuer.New(issuer.Config{Store: db, Signer: issuingSigner(s, nil), Emisor: func() cfe.Emisor { return emisor },
		Tax: cfe.DefaultTaxConfig(), Zone: montevideo})
	return &issuing{db: db, iss: iss, creds: creds}
}

// certificateFile writes the signing certificate as a PKCS#12 file with
// password "clave", as a profile names it.
func (s *issuing) certificateFile(t *testing.T) profiles.Certificate {
	t.Helper()
	p12, err := s.creds.EncodePKCS12("clave")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "firma.p12")
	if err := os.WriteFile(path, p12, 0o600); err != nil {
		t.Fatal(err)
	}
	return profiles.Certificate{Path: path, Password: "clave"}
}

// sign issues a CFE of typ with the uuid; an e-Factura goes to the company
// of RUC receptor.
func (s *issuing) sign(t *testing.T, uuid string, typ cfe.Type, receptor string) *cfe.Issued {
	t.Helper()
	rec := ""
	if receptor != "" {
		rec = `,"receptor":{"tipoDocumento":2,"codigoPais":"UY","documento":"` + receptor + `","razonSocial":"Cliente S.A.",` +
			`"direccion":"Rincón 1","ciudad":"Montevideo","departamento":"Montevideo"}`
	}
	req, err := cfe.DecodeRequest(strings.NewReader(`{"uuid":"` + uuid + `","cfe":{"idDoc":{"tipoCfe":` + typ.String() +
		`,"formaPago":1}` + rec + `,"detalles":[{"indicadorFacturacion":3,"nombreItem":"Yerba","cantidad":1,"precioUnitario":100}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.iss.Issue(context.Background(), req)
	if err != nil {
		t.Fatalf("signing %s: %v", uuid, err)
	}
	is, err := s.db.FindByUUID(context.Background(), res.Issued.UUID)
	if err != nil {
		t.Fatal(err)
	}
	return is
}
