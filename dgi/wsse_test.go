package dgi

import (
	"bytes"
	"errors"
	"testing"
)

// A request's signature verifies with this package's reader and with
// xmlsec1 whatever the document holds: line ends CR LF and lone CR (which
// a parser turns into LF), markup characters, "]]>" (no CDATA then), text
// outside ASCII; a change to the Body after signing fails both.
func TestSignRequest_verifiesIndependently(t *testing.T) {
	t.Parallel()
	creds := testCreds(t, 0)
	pem := certFile(t, creds)
	for name, doc := range map[string]string{
		"plain":      fakeEnvelope,
		"CR LF":      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\r\n<a>x &amp; y\r\nz\rw</a>",
		"CDATA end":  "<a>]]&gt; &lt;b&gt; ñandú</a>",
		"attributes": `<a b="1 &amp; 2" c='&lt;'>ü</a>`,
	} {
		for _, op := range []Operation{OpSendEnvelope, OpEnvelopeStatus, OpSendReport} {
			msg, err := SignRequest(op, creds, []byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			m, err := ReadMessage(msg, ReadOptions{Certificate: creds.Certificate})
			if err != nil || !m.Signed || m.Name != op.Element() {
				t.Errorf("%s %s: %v", name, op, err)
				continue
			}
			if got, err := XMLData(m.Element, "Datain"); err != nil || !bytes.Equal(got, bytes.TrimSpace(normalizeEOL([]byte(doc)))) {
				t.Errorf("%s %s: xmlData %q %v", name, op, got, err)
			}
			if out, ok := xmlsecVerifySOAP(t, msg, pem); !ok {
				t.Errorf("%s %s: xmlsec1:\n%s", name, op, out)
			}
			bad := bytes.Replace(msg, []byte("<a"), []byte("<b"), 1)
			if bytes.Equal(bad, msg) {
				bad = bytes.Replace(msg, []byte("Idemisor>5<"), []byte("Idemisor>6<"), 1)
			}
			if _, err := ReadMessage(bad, ReadOptions{Signed: true}); !errors.Is(err, ErrBadSignature) && !errors.Is(err, ErrNotSOAP) {
				t.Errorf("%s %s: a changed Body read as %v", name, op, err)
			}
			if _, ok := xmlsecVerifySOAP(t, bad, pem); ok {
				t.Errorf("%s %s: xmlsec1 verifies a changed Body", name, op)
			}
		}
	}
	// Queries: typed bodies.
	for _, q := range []queryContent{CFEQuery{Tipo: 111, Serie: "AB", Nro: 12}, ReportQuery{FechaResumen: mustDate(t, "2026-05-04"), Secuencia: 2}} {
		msg, err := signQuery(OpCFEStatus, creds, q)
		if err != nil {
			t.Fatal(err)
		}
		if out, ok := xmlsecVerifySOAP(t, msg, pem); !ok {
			t.Errorf("query %T: xmlsec1:\n%s", q, out)
		}
	}
}

func normalizeEOL(b []byte) []byte {
	b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n"))
	return bytes.ReplaceAll(b, []byte("\r"), []byte("\n"))
}
