package dgi

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/signer"
)

// fakeEnvelope is enough of an EnvioCFE for the client to send it.
const fakeEnvelope = `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<EnvioCFE xmlns="http://cfe.dgi.gub.uy" version="1.0"><Caratula version="1.0">` +
	`<RutReceptor>214844360018</RutReceptor><RUCEmisor>219999830019</RUCEmisor><Idemisor>5</Idemisor></Caratula></EnvioCFE>`

// ackSobreXML is a valid unsigned ACKSobre answering fakeEnvelope.
func ackSobreXML(estado string) []byte {
	return []byte(`<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<ACKSobre xmlns="http://cfe.dgi.gub.uy" version="1.0"><Caratula>` +
		`<RUCReceptor>214844360018</RUCReceptor><RUCEmisor>219999830019</RUCEmisor><IDRespuesta>9</IDRespuesta><NomArch></NomArch>` +
		`<FecHRecibido>2026-05-04T10:00:00-03:00</FecHRecibido><IDEmisor>5</IDEmisor><IDReceptor>77</IDReceptor><CantidadCFE>1</CantidadCFE>` +
		`<Tmst>2026-05-04T10:00:01-03:00</Tmst></Caratula><Detalle><Estado>` + estado + `</Estado><ParamConsulta>` +
		`<Token>QUJDREVGR0g=</Token><Fechahora>2026-05-04T10:00:05-03:00</Fechahora></ParamConsulta></Detalle></ACKSobre>`)
}

func signDoc(t testing.TB, creds *signer.Credentials, doc []byte) []byte {
	t.Helper()
	s, err := signer.New(signer.Config{Credentials: creds, Now: func() time.Time { return creds.Certificate.NotBefore.Add(time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Sign(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out.XML
}

// fakeDGI answers every request with answer.
func fakeDGI(t testing.TB, answer []byte) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
		_, _ = w.Write(answer)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func newTestClient(t testing.TB, url string, timeout time.Duration) *Client {
	t.Helper()
	c, err := New(Config{ReceptionURL: url + PathReception, QueryURL: url + PathQueries, Credentials: testCreds(t, 0),
		DGICertificate: testCreds(t, 2).Certificate, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}

func testCtx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return c
}

// The client reads only DGI's answers: it refuses an answer without
// WS-Security, one changed after signing, one signed by another
// certificate (the message, or only the ACK inside), and one whose ACK is
// not valid against DGI's XSD; for an envelope each refusal is an unknown
// outcome (DGI may hold it). The same answer signed by DGI is read.
func TestClient_refusesAnswersThatAreNotDGIs(t *testing.T) {
	t.Parallel()
	dgiCreds, other := testCreds(t, 2), testCreds(t, 1)
	good := signDoc(t, dgiCreds, ackSobreXML("AS"))
	signed := func(creds *signer.Credentials, doc []byte) []byte {
		b, err := SignAnswer(OpSendEnvelope, creds, doc)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	valid := signed(dgiCreds, good)
	unsigned := []byte(`<SOAP-ENV:Envelope xmlns:SOAP-ENV="` + nsSOAP + `"><SOAP-ENV:Body><WS_eFactura.EFACRECEPCIONSOBREResponse xmlns="http://dgi.gub.uy">` +
		`<Dataout><xmlData><![CDATA[` + string(good) + `]]></xmlData></Dataout></WS_eFactura.EFACRECEPCIONSOBREResponse></SOAP-ENV:Body></SOAP-ENV:Envelope>`)
	tampered := bytes.Replace(valid, []byte("<IDReceptor>77</IDReceptor>"), []byte("<IDReceptor>78</IDReceptor>"), 1)
	if bytes.Equal(tampered, valid) {
		t.Fatal("the test did not change the answer")
	}
	for _, c := range []struct {
		name   string
		answer []byte
	}{
		{"unsigned", unsigned},
		{"tampered", tampered},
		{"signed by another certificate", signed(other, signDoc(t, other, ackSobreXML("AS")))},
		{"ACK signed by another certificate", signed(dgiCreds, signDoc(t, other, ackSobreXML("AS")))},
		{"ACK not valid against the XSD", signed(dgiCreds, signDoc(t, dgiCreds, ackSobreXML("ZZ")))},
	} {
		cl := newTestClient(t, fakeDGI(t, c.answer).URL, 0)
		ack, err := cl.SendEnvelope(testCtx(t), []byte(fakeEnvelope))
		if ack != nil || !errors.Is(err, ErrBadAnswer) || !OutcomeUnknown(err) || cfe.ErrorCode(err) != cfe.EUNAVAILABLE {
			t.Errorf("%s: %+v %v, want a refused answer and an unknown outcome", c.name, ack, err)
		}
	}
	cl := newTestClient(t, fakeDGI(t, valid).URL, 0)
	ack, err := cl.SendEnvelope(testCtx(t), []byte(fakeEnvelope))
	if err != nil || ack.Estado != EnvelopeReceived || ack.IDReceptor != 77 || ack.Token != "QUJDREVGR0g=" || !bytes.Equal(ack.XML, good) {
		t.Fatalf("DGI's own answer: %+v %v", ack, err)
	}
}

// URLs: https, or http to this machine only; DGI's certificate: the shipped
// one of the environment while valid, a clear refusal once expired.
func TestNew_URLsAndDGICertificate(t *testing.T) {
	t.Parallel()
	creds := testCreds(t, 0)
	pinned := testCreds(t, 2).Certificate
	for url, ok := range map[string]bool{
		"http://127.0.0.1:8080/ePrueba/ws_eprueba": true, "http://localhost:1/x": true, "http://[::1]:2/x": true,
		"https://efactura.dgi.gub.uy:6443/ePrueba/ws_eprueba": true,
		"http://efactura.dgi.gub.uy/ePrueba/ws_eprueba":       false, "http://192.168.1.10:8080/x": false, "ftp://127.0.0.1/x": false, "127.0.0.1": false,
	} {
		_, err := New(Config{ReceptionURL: url, QueryURL: "https://q.example/x", Credentials: creds, DGICertificate: pinned})
		if (err == nil) != ok || (!ok && cfe.ErrorCode(err) != cfe.EINVALID) {
			t.Errorf("%s: %v, want accepted %v", url, err, ok)
		}
	}
	shipped, err := ShippedCertificate(Test)
	if err != nil {
		t.Fatal(err)
	}
	during := shipped.NotAfter.Add(-24 * time.Hour)
	c, err := New(Config{Credentials: creds, Now: func() time.Time { return during }})
	if err != nil || !c.DGICertificate().Equal(shipped) {
		t.Errorf("the shipped test certificate while valid: %v", err)
	}
	after := shipped.NotAfter.Add(time.Hour)
	_, err = New(Config{Credentials: creds, Now: func() time.Time { return after }})
	if !errors.Is(err, ErrDGICertificate) || cfe.ErrorCode(err) != cfe.EINVALID || !strings.Contains(cfe.ErrorMessage(err), "venció") {
		t.Errorf("the shipped certificate expired: %v, want a clear refusal", err)
	}
	prod, err := ShippedCertificate(Production)
	if err != nil || prod.Subject.SerialNumber != "RUC"+cfe.RUCDGI {
		t.Errorf("shipped production certificate: %v %v", prod, err)
	}
	if _, err := New(Config{Credentials: creds, Environment: "otro"}); cfe.ErrorCode(err) != cfe.EINVALID {
		t.Errorf("an unknown environment: %v", err)
	}
}

// Nothing listening: nothing was sent (safe to send again), not an
// unknown outcome. A server that reads the request and never answers: an
// unknown outcome once the timeout passes.
func TestClient_notSentAndTimeout(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cl := newTestClient(t, "http://"+addr, 0)
	_, err = cl.SendEnvelope(testCtx(t), []byte(fakeEnvelope))
	if !errors.Is(err, ErrNotSent) || OutcomeUnknown(err) {
		t.Errorf("nothing listening: %v, want ErrNotSent", err)
	}
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(block) })
	cl = newTestClient(t, srv.URL, 300*time.Millisecond)
	_, err = cl.SendEnvelope(testCtx(t), []byte(fakeEnvelope))
	if !OutcomeUnknown(err) || cfe.ErrorCode(err) != cfe.EUNAVAILABLE {
		t.Errorf("no answer within the timeout: %v, want an unknown outcome", err)
	}
	// A query has no outcome to lose: the same failure is just unavailable.
	_, err = cl.CFEState(testCtx(t), CFEQuery{Tipo: 101, Serie: "A", Nro: 1})
	if OutcomeUnknown(err) || cfe.ErrorCode(err) != cfe.EUNAVAILABLE {
		t.Errorf("a query without an answer: %v", err)
	}
}

// Before anything is sent: an envelope over 2 MB, one that is not an
// EnvioCFE, a query DGI would refuse.
func TestClient_refusesBeforeSending(t *testing.T) {
	t.Parallel()
	cl := newTestClient(t, "http://127.0.0.1:1", 0)
	big := []byte(fakeEnvelope + strings.Repeat(" ", cfe.MaxEnvelopeBytes))
	for name, doc := range map[string][]byte{"over 2 MB": big, "not an envelope": []byte("<a/>")} {
		if _, err := cl.SendEnvelope(testCtx(t), doc); cfe.ErrorCode(err) != cfe.EINVALID || errors.Is(err, ErrNotSent) {
			t.Errorf("%s: %v, want EINVALID", name, err)
		}
	}
	now := time.Now()
	if _, err := cl.Envelopes(testCtx(t), EnvelopeQuery{Desde: now.AddDate(0, 0, -40), Hasta: now}); cfe.ErrorCode(err) != cfe.EINVALID {
		t.Errorf("a 40-day period: %v, want EINVALID", err)
	}
	if _, err := cl.CFEState(testCtx(t), CFEQuery{Tipo: 999, Serie: "A", Nro: 1}); cfe.ErrorCode(err) != cfe.EINVALID {
		t.Errorf("an unknown type: %v, want EINVALID", err)
	}
}
