package emulator

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/dgi"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/issuer"
	"github.com/cfe-agent/cfe-agent/signer"
	"github.com/cfe-agent/cfe-agent/store"
)

// The company of the tests: DGI's test RUC, as the sandbox profile's.
var company = cfe.Emisor{RUCEmisor: "219999830019", RznSoc: "Empresa de Prueba S.A.", CdgDGISucur: 1,
	DomFiscal: "Av. 18 de Julio 1234", Ciudad: "Montevideo", Departamento: "Montevideo"}

// fixture holds what every test shares: the company's credentials (and a
// second certificate of the same company, and another company's), and CFEs
// signed by the real issuer from the sandbox's generated CAE ranges, kept as
// models to re-sign with other numbers.
type fixture struct {
	at        time.Time
	creds     *signer.Credentials // the company's
	creds2    *signer.Credentials // another certificate of the same company
	other     *signer.Credentials // another company's
	sg        *signer.Signer
	templates map[cfe.Type]*cfe.CFE
	issued    map[cfe.Type][]byte // the issuer's own signed CFE of each type
}

var (
	fixOnce sync.Once
	fix     *fixture
	fixErr  error
)

func getFixture(t testing.TB) *fixture {
	t.Helper()
	fixOnce.Do(func() { fix, fixErr = makeFixture() })
	if fixErr != nil {
		t.Fatal(fixErr)
	}
	return fix
}

func makeFixture() (*fixture, error) {
	at := time.Now().Truncate(time.Second)
	f := &fixture{at: at, templates: map[cfe.Type]*cfe.CFE{}, issued: map[cfe.Type][]byte{}}
	var err error
	if f.creds, err = signer.GenerateTestCertificate(company.RUCEmisor, company.RznSoc, at.Add(-time.Hour)); err != nil {
		return nil, err
	}
	if f.creds2, err = signer.GenerateTestCertificate(company.RUCEmisor, company.RznSoc, at.Add(-time.Hour)); err != nil {
		return nil, err
	}
	if f.other, err = signer.GenerateTestCertificate("211111110015", "Alfa S.A.", at.Add(-time.Hour)); err != nil {
		return nil, err
	}
	if f.sg, err = signer.New(signer.Config{Credentials: f.creds}); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "dgi-emulator-fixture")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	db, err := store.Open(filepath.Join(dir, "templates.db"), store.Options{Now: func() time.Time { return at }})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	ctx := context.Background()
	for _, r := range signer.SandboxRanges(company.RUCEmisor, cfe.DateOf(at.In(cfe.Montevideo))) {
		if err := db.PutRange(ctx, r); err != nil {
			return nil, err
		}
	}
	iss := issuer.New(issuer.Config{Store: db, Signer: signer.Canonical{Signer: f.sg}, Emisor: func() cfe.Emisor { return company },
		Tax: cfe.DefaultTaxConfig(), Now: func() time.Time { return at },
		Zone: func(time.Time) issuer.ZoneStatus {
			return issuer.ZoneStatus{Name: "America/Montevideo", Source: "test", Offset: -3 * 60 * 60}
		}})
	wd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	for tipo, file := range map[cfe.Type]string{101: "e-ticket.json", 111: "e-factura.json", 181: "e-remito.json"} {
		b, err := os.ReadFile(filepath.Join(wd, "..", "..", "..", "examples", file))
		if err != nil {
			return nil, err
		}
		var req cfe.Request
		if err := json.Unmarshal(b, &req); err != nil {
			return nil, err
		}
		res, err := iss.Issue(ctx, &req)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		f.issued[tipo] = res.Issued.XML
		if f.templates[tipo], err = cfe.ParseXML(res.Issued.XML); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// sign signs a copy of the template of tipo numbered nro, changed by
// mutate, with creds (the company's when nil).
func (f *fixture) sign(t testing.TB, tipo cfe.Type, nro int64, creds *signer.Credentials, mutate func(*cfe.CFE)) []byte {
	t.Helper()
	base := tipo
	if info, _ := tipo.Info(); info.Contingency {
		base = tipo - 100 // a contingency receipt has the shape of the type it replaces
	}
	c := f.templates[base].Clone()
	c.IdDoc.TipoCFE, c.IdDoc.Nro = tipo, nro
	c.CAEData.CAEID = fmt.Sprintf("90%02d999%03d0", f.at.In(cfe.Montevideo).Year()%100, int(tipo))
	if base != tipo {
		c.CAEData.HNro = signer.SandboxContingencySize // the paper forms' range (signer.SandboxContingencyRanges)
	}
	if mutate != nil {
		mutate(c)
	}
	x, err := cfe.MarshalXML(c)
	if err != nil {
		t.Fatalf("MarshalXML: %v", err)
	}
	sg := f.sg
	if creds != nil {
		if sg, err = signer.New(signer.Config{Credentials: creds}); err != nil {
			t.Fatal(err)
		}
	}
	s, err := sg.SignCanonical(x)
	if err != nil {
		t.Fatalf("SignCanonical: %v", err)
	}
	return s.XML
}

// envelope builds the envelope of cfes as the agent will (signer.MakeEnvelope).
func (f *fixture) envelope(t testing.TB, idEmisor int64, cfes ...[]byte) []byte {
	t.Helper()
	r := signer.EnvelopeRequest{Kind: cfe.EnvelopeDGI, RutReceptor: cfe.RUCDGI, IdEmisor: idEmisor, Fecha: f.at}
	for _, c := range cfes {
		r.CFEs = append(r.CFEs, cfe.EnvelopeCFE{XML: c})
	}
	b, err := signer.MakeEnvelope(r)
	if err != nil {
		t.Fatalf("MakeEnvelope: %v", err)
	}
	return b
}

// rawEnvelope writes an envelope byte by byte, whatever its content, for
// the envelopes DGI refuses (the project's builder refuses to make them).
func rawEnvelope(ruc, rut string, idEmisor int64, cantCFE int, cert []byte, fecha time.Time, cfes ...[]byte) []byte {
	var b bytes.Buffer
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	fmt.Fprintf(&b, `<EnvioCFE xmlns="%s" version="1.0"><Caratula version="1.0"><RutReceptor>%s</RutReceptor><RUCEmisor>%s</RUCEmisor>`+
		`<Idemisor>%d</Idemisor><CantCFE>%d</CantCFE><Fecha>%s</Fecha><X509Certificate>%s</X509Certificate></Caratula>`,
		cfe.NamespaceCFE, rut, ruc, idEmisor, cantCFE, dgi.FormatFechaHora(fecha), base64.StdEncoding.EncodeToString(cert))
	for _, c := range cfes {
		if i := bytes.Index(c, []byte("?>")); bytes.HasPrefix(c, []byte("<?xml")) && i > 0 {
			c = bytes.TrimLeft(c[i+2:], "\r\n")
		}
		b.Write(c)
	}
	b.WriteString("</EnvioCFE>\n")
	return b.Bytes()
}

// emulator starts an emulator on loopback in a temporary directory, with
// the clock now (nil: the real one).
func startEmulator(t testing.TB, dir string, cfg Config) *Emulator {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	cfg.DataDir, cfg.Listen, cfg.AdminListen = dir, "127.0.0.1:0", "127.0.0.1:0"
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	return e
}

// client returns the DGI client of creds (the company's when nil) pinned to
// the emulator's certificate.
func client(t testing.TB, e *Emulator, creds *signer.Credentials, timeout time.Duration) *dgi.Client {
	t.Helper()
	if creds == nil {
		creds = getFixture(t).creds
	}
	c, err := dgi.New(dgi.Config{ReceptionURL: e.URL() + dgi.PathReception, QueryURL: e.URL() + dgi.PathQueries,
		Credentials: creds, DGICertificate: e.Certificate(), Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

// ctx returns a context with a deadline for one test step.
func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

var _ = testtool.Require
