package issuer_test

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/issuer"
	"github.com/cfe-agent/cfe-agent/signer"
	"github.com/cfe-agent/cfe-agent/store"
)

// testNow is the tests' clock: a Sunday noon in Montevideo.
var testNow = time.Date(2026, 11, 22, 12, 0, 0, 0, cfe.Montevideo)

var testEmisor = cfe.Emisor{
	RUCEmisor:    "219999830019",
	RznSoc:       "EMPRESA DE PRUEBA S.A.",
	EmiSucursal:  "Casa central",
	CdgDGISucur:  1,
	DomFiscal:    "Av. 18 de Julio 1000",
	Ciudad:       "Montevideo",
	Departamento: "Montevideo",
}

// harness is an issuer over a real bbolt file and a real signer with a test
// certificate.
type harness struct {
	iss    *issuer.Issuer
	db     *store.DB
	signer *signer.Signer
	zone   *zoneSwitch
}

// zoneSwitch lets a test change what the machine's zone looks like.
type zoneSwitch struct {
	mu sync.Mutex
	z  issuer.ZoneStatus
}

func (s *zoneSwitch) set(z issuer.ZoneStatus) { s.mu.Lock(); s.z = z; s.mu.Unlock() }
func (s *zoneSwitch) get(time.Time) issuer.ZoneStatus {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.z
}

var montevideo = issuer.ZoneStatus{Name: "America/Montevideo", Source: "test", Offset: -3 * 3600}

// newHarness opens a store in a temp dir with the given ranges (the sandbox
// ranges when none are given).
func newHarness(t testing.TB, ranges ...cfe.CAERange) *harness {
	t.Helper()
	return newHarnessWith(t, store.Options{}, ranges...)
}

// newHarnessWith is newHarness over a store opened with opts.
func newHarnessWith(t testing.TB, opts store.Options, ranges ...cfe.CAERange) *harness {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "agent.db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if len(ranges) == 0 {
		ranges = signer.SandboxRanges(testEmisor.RUCEmisor, cfe.DateOf(testNow))
	}
	for _, r := range ranges {
		if err := db.PutRange(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	return newHarnessOn(t, db)
}

// testCredentials is the test certificate of every harness, made once per
// test binary (its RSA key takes a quarter of a second under the race
// detector, and a signer only reads it), or read from the files
// credentialsEnv names in a child process the tests started.
var testCredentials = sync.OnceValues(func() (*signer.Credentials, error) {
	if files := os.Getenv(credentialsEnv); files != "" {
		keyFile, certFile, _ := strings.Cut(files, string(os.PathListSeparator))
		key, err := os.ReadFile(keyFile)
		if err != nil {
			return nil, err
		}
		cert, err := os.ReadFile(certFile)
		if err != nil {
			return nil, err
		}
		return signer.LoadPEM(key, cert)
	}
	return signer.GenerateTestCertificate(testEmisor.RUCEmisor, testEmisor.RznSoc, testNow.Add(-time.Hour))
})

// credentialsEnv names, in a child process's environment, the PEM files of
// the key and the certificate it signs with (separated as in PATH): the
// test certificate of its parent, so that no child makes a key of its own.
const credentialsEnv = "CFE_ISSUER_TEST_CREDENTIALS"

// childCredentials writes the test certificate to PEM files for a child
// process and returns the credentialsEnv entry of its environment.
func childCredentials(t testing.TB) string {
	t.Helper()
	creds, err := testCredentials()
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(creds.Key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	keyFile, certFile := filepath.Join(dir, "key.pem"), filepath.Join(dir, "cert.pem")
	for file, block := range map[string]*pem.Block{keyFile: {Type: "PRIVATE KEY", Bytes: der},
		certFile: {Type: "CERTIFICATE", Bytes: creds.Certificate.Raw}} {
		if err := os.WriteFile(file, pem.EncodeToMemory(block), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return credentialsEnv + "=" + keyFile + string(os.PathListSeparator) + certFile
}

func newHarnessOn(t testing.TB, db *store.DB) *harness {
	t.Helper()
	creds, err := testCredentials()
	if err != nil {
		t.Fatal(err)
	}
	sg, err := signer.New(signer.Config{Credentials: creds, Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{db: db, signer: sg, zone: &zoneSwitch{z: montevideo}}
	h.iss = issuer.New(issuer.Config{
		Store:  db,
		Signer: signerAdapter{Signer: sg},
		Emisor: func() cfe.Emisor { return testEmisor },
		Tax:    cfe.DefaultTaxConfig(),
		Now:    func() time.Time { return testNow },
		Zone:   h.zone.get,
	})
	return h
}

// signerAdapter signs as cmd/cfe-agent does: the issuer hands over canonical
// documents, so the signer digests them without parsing.
type signerAdapter = signer.Canonical

// decode parses a JSON request as the local module does.
func decode(t testing.TB, body string) *cfe.Request {
	t.Helper()
	r, err := cfe.DecodeRequest(bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatalf("DecodeRequest: %v\n%s", err, body)
	}
	return r
}

// requestJSON returns a realistic request body for type typ, as POS software
// sends it: several lines with mixed IVA rates and a discount where the type
// has prices, a receptor where the type needs one, a reference for notes.
func requestJSON(typ cfe.Type, uuid string) string {
	info, _ := typ.Info()
	cfeBody := map[string]any{}
	idDoc := map[string]any{"tipoCfe": int(typ)}
	ruc := map[string]any{"tipoDocumento": 2, "codigoPais": "UY", "documento": "214844360018",
		"razonSocial": "Dirección General Impositiva", "direccion": "Fernández Crespo 1534",
		"ciudad": "Montevideo", "departamento": "Montevideo"}
	foreign := map[string]any{"tipoDocumento": 4, "codigoPais": "AR", "documentoExt": "30-71234567-1",
		"razonSocial": "Importadora del Plata SA", "direccion": "Av. Corrientes 1234",
		"ciudad": "Buenos Aires", "departamento": "CABA", "pais": "Argentina"}
	domestic := []map[string]any{
		{"indicadorFacturacion": 3, "nombreItem": "Yerba mate 1 kg", "cantidad": 2, "precioUnitario": "152.50",
			"codigosItem": []map[string]any{{"tipo": "INT1", "codigo": "YM-1KG"}}},
		{"indicadorFacturacion": 2, "nombreItem": "Pan flauta", "cantidad": "3.5", "precioUnitario": 60,
			"descuentoPorcentaje": 10},
		{"indicadorFacturacion": 1, "nombreItem": "Libro de lectura", "cantidad": 1, "precioUnitario": "890"},
	}
	switch info.Element {
	case cfe.ElemTicket:
		idDoc["formaPago"] = 1
		cfeBody["detalles"] = domestic
		cfeBody["mediosPago"] = []map[string]any{{"codigo": 1, "glosa": "Efectivo", "valor": "1500"}}
	case cfe.ElemFactura:
		idDoc["formaPago"] = 2
		idDoc["fechaVencimiento"] = "2026-12-22"
		cfeBody["receptor"] = ruc
		cfeBody["detalles"] = domestic
	case cfe.ElemFacturaExp:
		idDoc["formaPago"] = 1
		idDoc["clausulaVenta"], idDoc["modalidadVenta"], idDoc["viaTransporte"] = "FOB", 1, 1
		cfeBody["receptor"] = foreign
		cfeBody["totales"] = map[string]any{"tipoMoneda": "USD", "tipoCambio": "40.125"}
		cfeBody["detalles"] = []map[string]any{
			{"indicadorFacturacion": 10, "nombreItem": "Lana peinada", "cantidad": 1000, "unidadMedida": "kg",
				"precioUnitario": "7.25"}}
	case cfe.ElemRemitoExp:
		idDoc["tipoTraslado"], idDoc["modalidadVenta"], idDoc["viaTransporte"] = 1, 1, 3
		cfeBody["receptor"] = foreign
		cfeBody["totales"] = map[string]any{"tipoMoneda": "USD", "tipoCambio": "40.125"}
		cfeBody["detalles"] = []map[string]any{
			{"nombreItem": "Lana peinada", "cantidad": 1000, "unidadMedida": "kg", "precioUnitario": "7.25"}}
	case cfe.ElemRemito:
		idDoc["tipoTraslado"] = 1
		cfeBody["receptor"] = ruc
		cfeBody["detalles"] = []map[string]any{
			{"nombreItem": "Cajas de yerba 1 kg", "cantidad": 40, "unidadMedida": "caja"},
			{"nombreItem": "Bolsas de pan", "cantidad": 12, "unidadMedida": "unid"}}
	case cfe.ElemResguardo:
		cfeBody["receptor"] = ruc
		cfeBody["detalles"] = []map[string]any{{"retencionesPercepciones": []map[string]any{
			{"codigo": "1146171", "tasa": 12, "montoSujeto": "10000", "valor": "1200"}}}}
	case cfe.ElemBoleta:
		idDoc["formaPago"] = 1
		cfeBody["receptor"] = map[string]any{"tipoDocumento": 3, "codigoPais": "UY", "documento": "12345672",
			"razonSocial": "Juan Pérez", "direccion": "Ruta 5 km 100", "ciudad": "Durazno", "departamento": "Durazno"}
		cfeBody["detalles"] = []map[string]any{
			{"indicadorFacturacion": 13, "nombreItem": "Lana sucia", "cantidad": 350, "unidadMedida": "kg", "precioUnitario": 3}}
	}
	if info.IsNote() {
		cfeBody["referencias"] = []map[string]any{{"tipoCfe": int(info.Base), "serie": "A", "numero": 1,
			"razon": "Devolución de mercadería", "fecha": "2026-11-20"}}
	}
	if b := info.Base; b == cfe.ETicketCtaAjena || b == cfe.EFacturaCtaAjena {
		cfeBody["complementoFiscal"] = map[string]any{"tipoDocumento": 2, "codigoPais": "UY",
			"documento": "214844360018", "nombre": "Mandante SA"}
	}
	cfeBody["idDoc"] = idDoc
	body := map[string]any{"uuid": uuid, "adenda": "Gracias por su compra", "cfe": cfeBody}
	b, err := json.Marshal(body)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func uuidFor(typ cfe.Type, n int) string {
	return fmt.Sprintf("00000000-0000-4000-8000-%04d%08d", int(typ), n)
}

func issuerZone(name string, off int) issuer.ZoneStatus {
	return issuer.ZoneStatus{Name: name, Source: "test", Offset: off}
}

// unavailable ends a test that cannot run here because the machine lacks
// what it needs (a kernel feature such as ptrace): skipped with the reason,
// or failed under CFE_STRICT_TOOLS=1, as testtool.Require does for a
// missing tool.
func unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CFE_STRICT_TOOLS") == "1" {
		t.Fatalf("%s (CFE_STRICT_TOOLS=1)", msg)
	}
	t.Skipf("%s; set CFE_STRICT_TOOLS=1 to make this a failure", msg)
}

// waitFor polls cond until it holds, and fails the test, naming what it
// waited for, when it does not within 10 s.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	const within = 10 * time.Second
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline.C:
			t.Fatalf("waited %v for %s", within, what)
		case <-tick.C:
		}
	}
}

// outcome returns what arrives on done, and fails the test, naming what it
// waited for, when nothing does within a minute: far above any answer the
// issuer owes, it only keeps a broken test from hanging.
func outcome(t testing.TB, done <-chan error, what string) error {
	t.Helper()
	const within = time.Minute
	select {
	case err := <-done:
		return err
	case <-time.After(within):
		t.Fatalf("waited %v for %s", within, what)
		return nil
	}
}
