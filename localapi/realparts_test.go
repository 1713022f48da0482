package localapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/machinezone"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/issuer"
	"github.com/cfe-agent/cfe-agent/localapi"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
	"github.com/cfe-agent/cfe-agent/signer"
	"github.com/cfe-agent/cfe-agent/store"
)

// The company of these tests: DGI's test RUC.
const testRUC = "219999830019"

var testEmisor = cfe.Emisor{
	RUCEmisor:    testRUC,
	RznSoc:       "DGI-RUC PRUEBA CEDE",
	CdgDGISucur:  1,
	DomFiscal:    "Av. Daniel Fernández Crespo 1534",
	Ciudad:       "Montevideo",
	Departamento: "Montevideo",
}

// dgiSigner adapts *signer.Signer to issuer.Signer, as cmd/cfe-agent does.
type dgiSigner struct{ s *signer.Signer }

func (d dgiSigner) Sign(unsigned []byte) ([]byte, string, error) {
	signed, err := d.s.Sign(unsigned)
	if err != nil {
		return nil, "", err
	}
	return signed.XML, signed.DigestValue, nil
}

// agent is the real signing path: a bbolt store in t.TempDir() holding one
// e-Ticket range, a signer with a generated certificate, and the issuer over
// both, behind a local module on 127.0.0.1:0.
type agent struct {
	*testServer
	db *store.DB
}

// startAgent wires the real parts at the test clock. certFrom is when the
// certificate's two years of validity start.
func startAgent(t *testing.T, certFrom time.Time) *agent {
	t.Helper()
	db, iss := signingParts(t, certFrom)
	ts := startServer(t, func(c *localapi.ServerConfig) { c.Issuer = iss })
	return &agent{testServer: ts, db: db}
}

// signingParts opens a bbolt store in t.TempDir() holding one e-Ticket
// range (101-A-1..1000), and the issuer over it and a signer whose
// generated certificate is valid for two years from certFrom.
func signingParts(t testing.TB, certFrom time.Time) (*store.DB, *issuer.Issuer) {
	t.Helper()
	return signingPartsAt(t, t.TempDir()+"/agent.db", certFrom)
}

// signingPartsAt is signingParts on the store file at path, which may
// already hold the range.
func signingPartsAt(t testing.TB, path string, certFrom time.Time) (*store.DB, *issuer.Issuer) {
	t.Helper()
	clock := func() time.Time { return now }
	db, err := store.Open(path, store.Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	err = db.PutRange(context.Background(), cfe.CAERange{RUC: testRUC, Type: cfe.ETicket, Serie: "A", DNro: 1, HNro: 1000,
		CAEID: "90260000123", Autorizado: date(2026, 1, 5), Vencimiento: date(2027, 3, 31), Source: "manual"})
	if err != nil && cfe.ErrorCode(err) != cfe.ECONFLICT {
		t.Fatal(err)
	}
	creds, err := signer.GenerateTestCertificate(testRUC, testEmisor.RznSoc, certFrom)
	if err != nil {
		t.Fatal(err)
	}
	sg, err := signer.New(signer.Config{Credentials: creds, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	iss := issuer.New(issuer.Config{Store: db, Signer: dgiSigner{sg},
		Emisor: func() cfe.Emisor { return testEmisor }, Tax: cfe.DefaultTaxConfig(), Now: clock, Zone: machinezone.Read})
	return db, iss
}

// ticket is an e-Ticket of two items at 150 pesos, IVA included (montoBruto 1)
// at the basic rate (indicadorFacturacion 3), with uuid.
func ticket(uuid string) string {
	return `{"uuid":"` + uuid + `","adenda":"Mesa 4","codComercio":"C1","codTerminal":"T1",
		"cfe":{"idDoc":{"tipoCfe":101,"formaPago":1,"montoBruto":1},
		"detalles":[{"indicadorFacturacion":3,"nombreItem":"Yerba mate 1 kg","cantidad":2,"precioUnitario":150}]}}`
}

func (a *agent) sign(t testing.TB, body string) (int, []byte) {
	t.Helper()
	resp, b := a.send(t, request{method: http.MethodPost, path: "/sign-cfe",
		headers: map[string]string{"Content-Type": "application/json"}, body: jsonBody(body)})
	return resp.StatusCode, b
}

func signResponse(t testing.TB, b []byte) apitype.SignResponse {
	t.Helper()
	var r apitype.SignResponse
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("answer is not a SignResponse: %v\n%s", err, b)
	}
	return r
}

// element returns the text of the first <name> element of a document.
func element(t *testing.T, xml, name string) string {
	t.Helper()
	m := regexp.MustCompile(`<(?:\w+:)?` + name + `>([^<]*)</`).FindStringSubmatch(xml)
	if m == nil {
		t.Fatalf("no <%s> in the signed CFE", name)
	}
	return m[1]
}

func TestSignCFE_RealParts(t *testing.T) {
	a := startAgent(t, now.AddDate(0, -1, 0))

	status, body := a.sign(t, ticket("venta-0001"))
	r := signResponse(t, body)
	if status != http.StatusOK || r.CodigoRespuesta != cfe.RespOK {
		t.Fatalf("status %d answer %s, want 200 with 00", status, body)
	}

	t.Run("the signed CFE is valid for DGI's schema and signature", func(t *testing.T) {
		xml := []byte(r.XMLFirmado)
		testtool.MustValidateXSD(t, testtool.XSD(t, "CFEDGI.xsd"), xml)
		if out, ok := testtool.XMLSecVerify(t, xml, ""); !ok {
			t.Fatalf("xmlsec1 rejects the signature:\n%s", out)
		}
	})

	t.Run("the answer describes the signed CFE", func(t *testing.T) {
		x := r.XMLFirmado
		digest := element(t, x, "DigestValue")
		// The first e-Ticket of range 101-A-1..1000, signed at the test clock.
		want := apitype.SignResponse{
			CodigoRespuesta: "00", MensajeRespuesta: "e-Ticket A-1 firmado", UUID: "venta-0001",
			TipoCFE: 101, Serie: "A", Numero: 1,
			IDCAE: "90260000123", NroInicialCAE: 1, NroFinalCAE: 1000, VencimientoCAE: "2027-03-31",
			TmstFirma:    "2026-05-14T15:04:05-03:00",
			CodSeguridad: digest[:6],
			// RUC,TipoCFE,Serie,Nro,Monto,Fecha,Hash; 2 x 150 with IVA included is 300.00.
			DatosQR: "https://www.efactura.dgi.gub.uy/consultaQR/cfe?" + testRUC + ",101,A,1,300.00,14/05/2026," +
				strings.NewReplacer("+", "%2B", "/", "%2F", "=", "%3D").Replace(digest),
			XMLFirmado: x,
		}
		if !reflect.DeepEqual(r, want) {
			t.Fatalf("answer\n got %+v\nwant %+v", r, want)
		}
		for name, v := range map[string]string{"Serie": "A", "Nro": "1", "TmstFirma": "2026-05-14T15:04:05-03:00",
			"CAE_ID": "90260000123", "DNro": "1", "HNro": "1000", "FecVenc": "2027-03-31"} {
			if got := element(t, x, name); got != v {
				t.Errorf("<%s> = %q, want %q", name, got, v)
			}
		}
		if got := decimal.RequireFromString(element(t, x, "MntPagar")); !got.Equal(decimal.NewFromInt(300)) {
			t.Errorf("<MntPagar> = %s, want 300", got)
		}
		stored, err := a.db.FindByUUID(context.Background(), "venta-0001")
		if err != nil || stored.Nro != 1 || string(stored.XML) != x || stored.Adenda != "Mesa 4" {
			t.Fatalf("store has %+v, %v: want number 1 with the same XML and the adenda", stored, err)
		}
	})

	t.Run("a replayed uuid gets the identical answer and consumes nothing", func(t *testing.T) {
		status, again := a.sign(t, ticket("venta-0001"))
		if status != http.StatusOK || string(again) != string(body) {
			t.Fatalf("replay: status %d\n got %s\nwant %s", status, again, body)
		}
		_, next := a.sign(t, ticket("venta-0002"))
		if n := signResponse(t, next); n.CodigoRespuesta != "00" || n.Numero != 2 {
			t.Fatalf("the next uuid got %+v, want number 2", n)
		}
	})

	t.Run("a uuid reused for other content is 02", func(t *testing.T) {
		other := strings.Replace(ticket("venta-0001"), `"cantidad":2`, `"cantidad":3`, 1)
		status, b := a.sign(t, other)
		if n := signResponse(t, b); status != http.StatusOK || n.CodigoRespuesta != cfe.RespConflictoUUID ||
			n.UUID != "venta-0001" || n.Numero != 0 || n.XMLFirmado != "" {
			t.Fatalf("status %d answer %s, want 200 with 02 and nothing signed", status, b)
		}
	})

	t.Run("a type without a CAE range is 05", func(t *testing.T) {
		factura := `{"uuid":"venta-0003","cfe":{"idDoc":{"tipoCfe":111,"formaPago":2},
			"receptor":{"tipoDocumento":2,"codigoPais":"UY","documento":"214844360018",
				"razonSocial":"Dirección General Impositiva","direccion":"Fernández Crespo 1534",
				"ciudad":"Montevideo","departamento":"Montevideo"},
			"detalles":[{"indicadorFacturacion":3,"nombreItem":"Yerba mate 1 kg","cantidad":2,"precioUnitario":150}]}}`
		status, b := a.sign(t, factura)
		if n := signResponse(t, b); status != http.StatusOK || n.CodigoRespuesta != cfe.RespSinRangoCAE {
			t.Fatalf("status %d answer %s, want 200 with 05", status, b)
		}
	})

	t.Run("a rule broken is 01 naming the field", func(t *testing.T) {
		// DGI: PrecioUnitario > 0 except for IndFact 5 and 8 (V24 B-C13).
		bad := strings.Replace(ticket("venta-0004"), `"precioUnitario":150`, `"precioUnitario":0`, 1)
		status, b := a.sign(t, bad)
		n := signResponse(t, b)
		named := false
		for _, f := range n.Errores {
			named = named || strings.Contains(f.Campo, "precioUnitario")
		}
		if status != http.StatusOK || n.CodigoRespuesta != cfe.RespRechazoValidacion || !named {
			t.Fatalf("status %d answer %s, want 200 with 01 naming precioUnitario", status, b)
		}
	})

	t.Run("a machine off Montevideo's zone is 96", func(t *testing.T) {
		t.Setenv("TZ", "UTC")
		status, b := a.sign(t, ticket("venta-0005"))
		n := signResponse(t, b)
		if status != http.StatusOK || n.CodigoRespuesta != cfe.RespZonaHoraria ||
			!strings.Contains(n.MensajeRespuesta, "America/Montevideo") {
			t.Fatalf("status %d answer %s, want 200 with 96 explaining the zone", status, b)
		}
	})

	t.Run("a closed store is an internal error, 99", func(t *testing.T) {
		b := startAgent(t, now.AddDate(0, -1, 0))
		b.db.Close()
		status, body := b.sign(t, ticket("venta-0006"))
		n := signResponse(t, body)
		if status != http.StatusOK || n.CodigoRespuesta != cfe.RespErrorInterno || strings.Contains(n.MensajeRespuesta, "store") {
			t.Fatalf("status %d answer %s, want 200 with 99 and no internal detail", status, body)
		}
	})

	t.Run("an expired certificate is 06", func(t *testing.T) {
		c := startAgent(t, now.AddDate(-3, 0, 0)) // valid for two years, three years ago
		status, b := c.sign(t, ticket("venta-0007"))
		if n := signResponse(t, b); status != http.StatusOK || n.CodigoRespuesta != cfe.RespCertificado {
			t.Fatalf("status %d answer %s, want 200 with 06", status, b)
		}
		if _, err := c.db.FindByUUID(context.Background(), "venta-0007"); cfe.ErrorCode(err) != cfe.ENOTFOUND {
			t.Fatalf("a rejected request was stored: %v", err)
		}
	})
}
