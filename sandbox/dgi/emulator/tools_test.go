package emulator

import (
	"bytes"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/beevik/etree"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/dgi"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/signer"
)

// exchange is one request and its answer as they crossed the wire.
type exchange struct{ req, res []byte }

// recorder serves h and keeps every exchange.
type recorder struct {
	h  http.Handler
	mu sync.Mutex
	ex []exchange
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	req.Body = io.NopCloser(bytes.NewReader(body))
	rec := httptest.NewRecorder()
	r.h.ServeHTTP(rec, req)
	r.mu.Lock()
	r.ex = append(r.ex, exchange{body, rec.Body.Bytes()})
	r.mu.Unlock()
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

func pemFile(t testing.TB, der []byte) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "cert.pem")
	if err := os.WriteFile(f, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// xmlsecSOAP verifies a WS-Security message with xmlsec1: the Body's wsu:Id
// declared as an ID, the key certPEM's (xmlsec1 does not follow the
// SecurityTokenReference).
func xmlsecSOAP(t testing.TB, msg []byte, certPEM string) (string, bool) {
	t.Helper()
	bin := testtool.Require(t, "xmlsec1")
	f := filepath.Join(t.TempDir(), "soap.xml")
	if err := os.WriteFile(f, msg, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "--verify", "--id-attr:Id", "http://schemas.xmlsoap.org/soap/envelope/:Body",
		"--pubkey-cert-pem", certPEM, f).CombinedOutput()
	return string(out), err == nil
}

// bodyParts returns the Body's element serialized alone and, for the
// reception service, the document in its xmlData.
func bodyParts(t testing.TB, msg []byte) (op []byte, name string, doc []byte) {
	t.Helper()
	d := etree.NewDocument()
	if err := d.ReadFromBytes(msg); err != nil {
		t.Fatal(err)
	}
	body := d.Root().SelectElement("Body")
	if body == nil {
		for _, c := range d.Root().ChildElements() {
			if c.Tag == "Body" {
				body = c
			}
		}
	}
	el := body.ChildElements()[0]
	alone := etree.NewDocument()
	alone.SetRoot(el.Copy())
	op, err := alone.WriteToBytes()
	if err != nil {
		t.Fatal(err)
	}
	for _, data := range el.ChildElements() {
		if data.Tag == "Datain" || data.Tag == "Dataout" {
			x := data.ChildElements()[0]
			doc = []byte(strings.TrimSpace(x.Text()))
		}
	}
	return op, el.Tag, doc
}

// Every SOAP request the client sends verifies with xmlsec1 (with the
// company's certificate) and its documents validate with xmllint against
// DGI's XSDs (EnvioCFE, ReporteDiarioCFE) and the services' schema
// (dgi/testdata/ws-dgi.xsd: ConsultaCFE and the query elements); every
// answer of the emulator verifies with xmlsec1 (its WS-Security with the
// emulator's certificate, each ACK's enveloped signature too) and validates
// against ACKSobre.xsd, ACKCFE_DGI.xsd, ACKRepDiario.xsd (with DGITypes.xsd),
// the services' schema, or ExcepcionesServicios.xsd for a fault's detail.
func TestEmulator_everyMessageVerifiesWithIndependentTools(t *testing.T) {
	t.Parallel()
	testtool.Require(t, "xmlsec1")
	testtool.Require(t, "xmllint")
	f := getFixture(t)
	e, err := New(Config{DataDir: t.TempDir(), Processing: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Close() })
	rec := &recorder{h: e.ServiceHandler()}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	c, err := dgi.New(dgi.Config{ReceptionURL: srv.URL + dgi.PathReception, QueryURL: srv.URL + dgi.PathQueries,
		Credentials: f.creds, DGICertificate: e.Certificate()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	ack, err := c.SendEnvelope(ctx(t), f.envelope(t, 7, f.issued[101], f.issued[111], f.sign(t, 201, 5, nil, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.EnvelopeStatus(ctx(t), ack.IDReceptor, ack.Token); err == nil {
		t.Fatal("the verdict came before Fechahora")
	}
	if err := e.Advance(6 * time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := c.EnvelopeStatus(ctx(t), ack.IDReceptor, ack.Token); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SendReport(ctx(t), report(t, f, cfe.DateOf(f.at.In(cfe.Montevideo)), 1)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CFEState(ctx(t), dgi.CFEQuery{Tipo: 101, Serie: "A", Nro: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Envelopes(ctx(t), dgi.EnvelopeQuery{Desde: f.at.Add(-time.Hour), Hasta: e.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Reports(ctx(t), dgi.ReportQuery{FechaResumen: cfe.DateOf(f.at.In(cfe.Montevideo))}); err != nil {
		t.Fatal(err)
	}

	companyPEM, dgiPEM := pemFile(t, f.creds.Certificate.Raw), pemFile(t, e.Certificate().Raw)
	wsXSD := filepath.Join(testtool.RepoRoot(t), "dgi", "testdata", "ws-dgi.xsd")
	docSchema := map[string]string{
		"EnvioCFE": testtool.XSD(t, "EnvioCFE.xsd"), "Reporte": testtool.XSD(t, "ReporteDiarioCFE.xsd"), "ConsultaCFE": wsXSD,
		"ACKSobre": testtool.XSD(t, "ACKSobre.xsd"), "ACKCFE": testtool.XSD(t, "ACKCFE_DGI.xsd"), "ACKRepDiario": testtool.XSD(t, "ACKRepDiario.xsd"),
		"Respuestas": testtool.XSD(t, "ExcepcionesServicios.xsd"),
	}
	rec.mu.Lock()
	exs := append([]exchange(nil), rec.ex...)
	rec.mu.Unlock()
	if len(exs) != 7 {
		t.Fatalf("%d exchanges recorded, want 7", len(exs))
	}
	seen := map[string]bool{}
	for i, x := range exs {
		for side, m := range map[string][]byte{"request": x.req, "answer": x.res} {
			cert := companyPEM
			if side == "answer" {
				cert = dgiPEM
			}
			if out, ok := xmlsecSOAP(t, m, cert); !ok {
				t.Errorf("exchange %d %s: xmlsec1 does not verify it:\n%s", i, side, out)
			}
			op, name, doc := bodyParts(t, m)
			if name == "Fault" {
				d := etree.NewDocument()
				_ = d.ReadFromBytes(op)
				det := d.Root().SelectElement("detail")
				if det == nil || len(det.ChildElements()) != 1 {
					t.Errorf("exchange %d: a fault without DGI's exception detail", i)
					continue
				}
				alone := etree.NewDocument()
				alone.SetRoot(det.ChildElements()[0].Copy())
				doc, _ = alone.WriteToBytes()
			} else if out, ok := testtool.ValidateXSD(t, wsXSD, op); !ok {
				t.Errorf("exchange %d %s <%s> is not valid against ws-dgi.xsd:\n%s", i, side, name, out)
			}
			if doc == nil {
				continue
			}
			root := rootName(t, doc)
			seen[root] = true
			xsd, ok := docSchema[root]
			if !ok {
				t.Errorf("exchange %d %s carries an unexpected document <%s>", i, side, root)
				continue
			}
			if out, ok := testtool.ValidateXSD(t, xsd, doc); !ok {
				t.Errorf("exchange %d %s: <%s> is not valid against %s:\n%s", i, side, root, filepath.Base(xsd), out)
			}
			if strings.HasPrefix(root, "ACK") {
				if out, ok := testtool.XMLSecVerify(t, doc, dgiPEM); !ok {
					t.Errorf("exchange %d: the %s's own signature does not verify with xmlsec1:\n%s", i, root, out)
				}
			}
		}
	}
	for _, want := range []string{"EnvioCFE", "ConsultaCFE", "Reporte", "ACKSobre", "ACKCFE", "ACKRepDiario", "Respuestas"} {
		if !seen[want] {
			t.Errorf("no %s crossed the wire", want)
		}
	}
}

func rootName(t testing.TB, doc []byte) string {
	t.Helper()
	d := etree.NewDocument()
	if err := d.ReadFromBytes(doc); err != nil {
		t.Fatalf("a document does not parse: %v\n%s", err, doc)
	}
	return d.Root().Tag
}

// report signs a daily report of no receipts of the company for fecha.
func report(t testing.TB, f *fixture, fecha cfe.Date, sec int) []byte {
	t.Helper()
	x := `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<Reporte xmlns="http://cfe.dgi.gub.uy"><Caratula version="1.0"><RUCEmisor>` +
		company.RUCEmisor + `</RUCEmisor><FechaResumen>` + fecha.String() + `</FechaResumen><SecEnvio>` + itoa(sec) +
		`</SecEnvio><TmstFirmaEnv>` + dgi.FormatFechaHora(f.at) + `</TmstFirmaEnv><CantComprobantes>0</CantComprobantes></Caratula></Reporte>`
	s, err := f.sg.Sign([]byte(x))
	if err != nil {
		t.Fatal(err)
	}
	return s.XML
}

func itoa(n int) string { return strconv.Itoa(n) }

var _ = signer.TestMarker
