package sandbox_test

import (
	"encoding/base64"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	netmail "net/mail"
	"strconv"
	"strings"
	"testing"

	"github.com/emersion/go-smtp"

	"github.com/cfe-agent/cfe-agent/sandbox"
	cfemail "github.com/cfe-agent/cfe-agent/sandbox/mail"
)

// refusingSession is an SMTP session that refuses every recipient whose
// address starts with "rechazo".
type refusingSession struct{ mailSession }

func (s *refusingSession) Rcpt(to string, opts *smtp.RcptOptions) error {
	if strings.HasPrefix(to, "rechazo") {
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "mailbox unavailable"}
	}
	return s.mailSession.Rcpt(to, opts)
}

// startRefusingMailbox runs a real SMTP server on 127.0.0.1:0 that keeps
// what it accepts and refuses "rechazo…" recipients.
func startRefusingMailbox(t *testing.T) (*mailbox, string) {
	box := &mailbox{}
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) {
		return &refusingSession{mailSession{box: box}}, nil
	}))
	srv.Domain = "localhost"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln) //nolint:errcheck // ends when the test closes it
	t.Cleanup(func() { srv.Close() })
	return box, ln.Addr().String()
}

// closedAddr is a loopback address where nothing listens.
func closedAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// parsedMail is a received message taken apart.
type parsedMail struct {
	subject, text string
	files         map[string][]byte // filename → decoded content
	types         map[string]string // filename → media type
}

func parseMail(t *testing.T, raw string) parsedMail {
	t.Helper()
	msg, err := netmail.ReadMessage(strings.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	subject, err := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
	if err != nil {
		t.Fatal(err)
	}
	media, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || media != "multipart/mixed" {
		t.Fatalf("Content-Type %q: %v", msg.Header.Get("Content-Type"), err)
	}
	out := parsedMail{subject: subject, files: map[string][]byte{}, types: map[string]string{}}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	for {
		p, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(p) // quoted-printable parts come decoded
		if err != nil {
			t.Fatal(err)
		}
		if p.FileName() == "" {
			out.text = string(body)
			continue
		}
		if enc := p.Header.Get("Content-Transfer-Encoding"); enc != "base64" {
			t.Fatalf("attachment %s in %q", p.FileName(), enc)
		}
		dec, err := base64.StdEncoding.DecodeString(strings.NewReplacer("\r", "", "\n", "").Replace(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		ct, _, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		out.files[p.FileName()], out.types[p.FileName()] = dec, ct
	}
}

func (e *env) mailHistory(t *testing.T, id int64, auth []string) []cfemail.Delivery {
	t.Helper()
	var h []cfemail.Delivery
	e.do("GET", "/api/v1/cfeemitido/emailenvios?idCfe="+strconv.FormatInt(id, 10), nil, auth...).expect(t, http.StatusOK).decode(t, &h)
	return h
}

func TestMailCFE(t *testing.T) {
	t.Parallel()
	box, addr := startRefusingMailbox(t)
	d := startExportData(t, func(c *sandbox.Config) { c.SMTPAddr = addr })
	e := d.env
	const path = "/api/v1/cfeemitido/enviarPdfPorCorreo"
	key := []string{"X-API-Key", keyAlfa}
	det := e.issued(d.factura.ID)

	t.Run("PDF and signed XML to each address, with an API key", func(t *testing.T) {
		var send cfemail.Delivery
		e.do("POST", path, cfemail.SendRequest{IdCfe: d.factura.ID, Destinatarios: []string{"Cliente Uno <uno@cliente.test>", "dos@cliente.test"},
			Asunto: "Su e-Factura de marzo — gracias"}, key...).expect(t, http.StatusOK).decode(t, &send)
		if send.ID == 0 || send.Estado != "enviado" || send.IdCfe != d.factura.ID || send.EnviadoPor.Tipo != "apiKey" ||
			send.EnviadoPor.Nombre != "caja 1" || len(send.Destinatarios) != 2 || !send.Fecha.Equal(t0) {
			t.Fatalf("send %+v", send)
		}
		for _, r := range send.Destinatarios {
			if r.Estado != "enviado" || r.Error != "" || r.EnviadoEn == nil {
				t.Errorf("recipient %+v", r)
			}
		}
		msgs := box.all()
		if len(msgs) != 2 || msgs[0].to != "uno@cliente.test" || msgs[1].to != "dos@cliente.test" {
			t.Fatalf("mails %+v", msgs)
		}
		for _, m := range msgs {
			p := parseMail(t, m.data)
			if p.subject != "Su e-Factura de marzo — gracias" || !strings.Contains(p.text, "XML firmado") {
				t.Errorf("subject %q, text %q", p.subject, p.text)
			}
			if len(p.files) != 2 {
				t.Fatalf("attachments %v", p.types)
			}
			for name, body := range p.files {
				switch {
				case strings.HasSuffix(name, ".xml"):
					if p.types[name] != "application/xml" || string(body) != det.XmlFirmado {
						t.Errorf("XML attachment %s (%s) differs from the stored CFE", name, p.types[name])
					}
				case strings.HasSuffix(name, ".pdf"):
					text := pdfTool(t, "pdftotext", body)
					if p.types[name] != "application/pdf" || !strings.Contains(text, "e-Factura") || !strings.Contains(text, "214844360018") {
						t.Errorf("PDF attachment %s (%s) text:\n%s", name, p.types[name], text)
					}
				default:
					t.Errorf("unexpected attachment %s", name)
				}
			}
		}
	})
	t.Run("with a JWT and the default subject", func(t *testing.T) {
		var send cfemail.Delivery
		e.do("POST", path, cfemail.SendRequest{IdCfe: d.factura.ID, Destinatarios: []string{"tres@cliente.test"}}, d.ana...).
			expect(t, http.StatusOK).decode(t, &send)
		if send.EnviadoPor.Tipo != "usuario" || send.EnviadoPor.Nombre != "ana" || send.EnviadoPor.ID != d.anaID {
			t.Errorf("sender %+v", send.EnviadoPor)
		}
		msgs := box.all()
		p := parseMail(t, msgs[len(msgs)-1].data)
		if p.subject != "e-Factura H-1 de Alfa S.A." {
			t.Errorf("default subject %q", p.subject)
		}
	})
	t.Run("a recipient the server refuses is recorded as failed", func(t *testing.T) {
		before := len(box.all())
		b := e.do("POST", path, cfemail.SendRequest{IdCfe: d.factura.ID, Destinatarios: []string{"cuatro@cliente.test", "rechazo@cliente.test"}}, key...).
			expectError(t, http.StatusServiceUnavailable, "destinatarios[1]")
		if b.Code != "unavailable" {
			t.Errorf("code %q", b.Code)
		}
		if n := len(box.all()); n != before+1 {
			t.Errorf("%d mails delivered, want 1 more than %d", n, before)
		}
		h := e.mailHistory(t, d.factura.ID, key)
		last := h[len(h)-1]
		if last.Estado != "parcial" || last.Destinatarios[0].Estado != "enviado" || last.Destinatarios[1].Estado != "error" ||
			!strings.Contains(last.Destinatarios[1].Error, "550") || last.Destinatarios[1].EnviadoEn != nil {
			t.Errorf("history entry %+v", last)
		}
	})
	t.Run("the history lists every send in order, with either credential", func(t *testing.T) {
		viaKey, viaJWT := e.mailHistory(t, d.factura.ID, key), e.mailHistory(t, d.factura.ID, d.ana)
		if len(viaKey) != 3 || len(viaJWT) != 3 {
			t.Fatalf("history %+v", viaKey)
		}
		for i, want := range []string{"enviado", "enviado", "parcial"} {
			if viaKey[i].Estado != want || viaJWT[i].ID != viaKey[i].ID || (i > 0 && viaKey[i].ID <= viaKey[i-1].ID) {
				t.Errorf("send %d: %+v", i, viaKey[i])
			}
		}
		if h := e.mailHistory(t, d.ticket.ID, key); len(h) != 0 {
			t.Errorf("another CFE's history %+v", h)
		}
	})
	t.Run("another company's CFE is 403 and sends nothing", func(t *testing.T) {
		before := len(box.all())
		e.do("POST", path, cfemail.SendRequest{IdCfe: d.beta.ID, Destinatarios: []string{"x@cliente.test"}}, key...).expectError(t, http.StatusForbidden, "")
		e.do("POST", path, cfemail.SendRequest{IdCfe: d.factura.ID, Destinatarios: []string{"x@cliente.test"}}, d.carla...).expectError(t, http.StatusForbidden, "")
		e.do("GET", "/api/v1/cfeemitido/emailenvios?idCfe="+strconv.FormatInt(d.factura.ID, 10), nil, "X-API-Key", keyBeta).expectError(t, http.StatusForbidden, "")
		e.do("GET", "/api/v1/cfeemitido/emailenvios?idCfe="+strconv.FormatInt(d.beta.ID, 10), nil, d.ana...).expectError(t, http.StatusForbidden, "")
		if len(box.all()) != before {
			t.Error("a refused request sent mail")
		}
	})
	t.Run("bad input is 400 and records nothing", func(t *testing.T) {
		before, hist := len(box.all()), len(e.mailHistory(t, d.factura.ID, key))
		many := make([]string, 11)
		for i := range many {
			many[i] = "c" + strconv.Itoa(i) + "@cliente.test"
		}
		for name, c := range map[string]struct {
			body  any
			field string
		}{
			"no CFE":            {cfemail.SendRequest{Destinatarios: []string{"a@cliente.test"}}, "idCfe"},
			"no address":        {cfemail.SendRequest{IdCfe: d.factura.ID}, "destinatarios"},
			"a bad address":     {cfemail.SendRequest{IdCfe: d.factura.ID, Destinatarios: []string{"a@cliente.test", "no es correo"}}, "destinatarios[1]"},
			"header injection":  {cfemail.SendRequest{IdCfe: d.factura.ID, Destinatarios: []string{"a@cliente.test\r\nBcc: b@x.test"}}, "destinatarios[0]"},
			"too many":          {cfemail.SendRequest{IdCfe: d.factura.ID, Destinatarios: many}, "destinatarios"},
			"a broken subject":  {cfemail.SendRequest{IdCfe: d.factura.ID, Destinatarios: []string{"a@cliente.test"}, Asunto: "hola\r\nBcc: b@x.test"}, "asunto"},
			"an unknown layout": {cfemail.SendRequest{IdCfe: d.factura.ID, Destinatarios: []string{"a@cliente.test"}, Variant: "NoExiste"}, "variant"},
			"not JSON":          {"{", ""},
		} {
			t.Run(name, func(t *testing.T) {
				e.do("POST", path, c.body, key...).expectError(t, http.StatusBadRequest, c.field)
			})
		}
		e.do("GET", "/api/v1/cfeemitido/emailenvios?idCfe=x", nil, key...).expectError(t, http.StatusBadRequest, "idCfe")
		e.do("GET", "/api/v1/cfeemitido/emailenvios", nil, d.ana...).expectError(t, http.StatusBadRequest, "idCfe")
		if len(box.all()) != before || len(e.mailHistory(t, d.factura.ID, key)) != hist {
			t.Error("a refused request sent mail or wrote history")
		}
	})
	t.Run("a missing CFE is 404, no credentials 401", func(t *testing.T) {
		e.do("POST", path, cfemail.SendRequest{IdCfe: 999, Destinatarios: []string{"a@cliente.test"}}, key...).expectError(t, http.StatusNotFound, "")
		e.do("GET", "/api/v1/cfeemitido/emailenvios?idCfe=999", nil, key...).expectError(t, http.StatusNotFound, "")
		e.do("GET", "/api/v1/cfeemitido/emailenvios?idCfe=1", nil).expectError(t, http.StatusUnauthorized, "")
	})
}

func TestMailCFE_ServerDown(t *testing.T) {
	t.Parallel()
	d := startExportData(t, func(c *sandbox.Config) { c.SMTPAddr = closedAddr(t) })
	e := d.env
	e.do("POST", "/api/v1/cfeemitido/enviarPdfPorCorreo", cfemail.SendRequest{IdCfe: d.ticket.ID, Destinatarios: []string{"uno@cliente.test", "dos@cliente.test"}}, d.ana...).
		expectError(t, http.StatusServiceUnavailable, "destinatarios[1]")
	h := e.mailHistory(t, d.ticket.ID, d.ana)
	if len(h) != 1 || h[0].Estado != "error" || h[0].EnviadoPor.Nombre != "ana" || len(h[0].Destinatarios) != 2 {
		t.Fatalf("history %+v", h)
	}
	for i, r := range h[0].Destinatarios {
		if r.Estado != "error" || !strings.Contains(r.Error, "connect") || r.EnviadoEn != nil || r.Correo != []string{"uno@cliente.test", "dos@cliente.test"}[i] {
			t.Errorf("recipient %+v", r)
		}
	}
}

func TestMailCFE_NoServerConfigured(t *testing.T) {
	t.Parallel()
	d := startExportData(t)
	d.do("POST", "/api/v1/cfeemitido/enviarPdfPorCorreo", cfemail.SendRequest{IdCfe: d.ticket.ID, Destinatarios: []string{"uno@cliente.test"}}, "X-API-Key", keyAlfa).
		expectError(t, http.StatusServiceUnavailable, "destinatarios[0]")
	h := d.mailHistory(t, d.ticket.ID, d.ana)
	if len(h) != 1 || h[0].Estado != "error" || !strings.Contains(h[0].Destinatarios[0].Error, "SMTP") || h[0].EnviadoPor.Tipo != "apiKey" {
		t.Fatalf("history %+v", h)
	}
}
