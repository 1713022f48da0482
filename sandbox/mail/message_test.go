package mail

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	netmail "net/mail"
	"strings"
	"testing"
	"time"
)

var msgTime = time.Date(2026, time.March, 2, 13, 0, 30, 0, time.UTC)

// readMessage parses raw as a mail reader would.
func readMessage(t *testing.T, raw []byte) *netmail.Message {
	t.Helper()
	if bytes.Contains(bytes.ReplaceAll(raw, []byte("\r\n"), nil), []byte("\n")) {
		t.Error("a line ends without CR LF")
	}
	msg, err := netmail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("not a message: %v\n%s", err, raw)
	}
	return msg
}

// checkHeaders checks what every message carries.
func checkHeaders(t *testing.T, h netmail.Header, to, subject string) {
	t.Helper()
	if got := h.Get("From"); got != "<no-responder@sandbox.invalid>" && got != "no-responder@sandbox.invalid" {
		t.Errorf("From %q", got)
	}
	if addrs, err := h.AddressList("To"); err != nil || len(addrs) != 1 || addrs[0].Address != to {
		t.Errorf("To %q (%v), want %s alone", h.Get("To"), err, to)
	}
	if got, err := new(mime.WordDecoder).DecodeHeader(h.Get("Subject")); err != nil || got != subject {
		t.Errorf("Subject %q decodes to %q (%v), want %q", h.Get("Subject"), got, err, subject)
	}
	if d, err := h.Date(); err != nil || !d.Equal(msgTime) {
		t.Errorf("Date %q (%v), want the injected clock's %s", h.Get("Date"), err, msgTime)
	}
	if id := h.Get("Message-ID"); !strings.HasPrefix(id, "<") || !strings.HasSuffix(id, "@sandbox.invalid>") {
		t.Errorf("Message-ID %q", id)
	}
	if h.Get("MIME-Version") != "1.0" || h.Get("User-Agent") != "" || h.Get("X-Mailer") != "" {
		t.Errorf("MIME-Version %q, User-Agent %q, X-Mailer %q", h.Get("MIME-Version"), h.Get("User-Agent"), h.Get("X-Mailer"))
	}
}

// A CFE's message: multipart/mixed, the text quoted-printable, each
// attachment base64 in lines of at most 76 characters, byte for byte.
func TestCFEMessage(t *testing.T) {
	t.Parallel()
	pdf := bytes.Repeat([]byte("%PDF-1.7 \x00\xff binary "), 300)
	xml := []byte(`<?xml version="1.0" encoding="UTF-8"?><CFE xmlns="http://cfe.dgi.gub.uy">ñandú</CFE>`)
	text := "Adjuntamos el comprobante — su representación impresa y el XML firmado.\r\n" + strings.Repeat("línea larga ", 20)
	raw, err := cfeMessage("uno@cliente.test", "e-Factura H-1 de Alfa S.A. — marzo", text,
		[]attachment{{"211111110015_111_H_1.pdf", "application/pdf", pdf}, {"211111110015_111_H_1.xml", "application/xml", xml}}, msgTime)
	if err != nil {
		t.Fatal(err)
	}
	msg := readMessage(t, raw)
	checkHeaders(t, msg.Header, "uno@cliente.test", "e-Factura H-1 de Alfa S.A. — marzo")
	media, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || media != "multipart/mixed" || params["boundary"] == "" {
		t.Fatalf("Content-Type %q (%v)", msg.Header.Get("Content-Type"), err)
	}
	mr := multipart.NewReader(msg.Body, params["boundary"])
	var texts []string
	files := map[string][]byte{}
	types := map[string]string{}
	for {
		p, err := mr.NextRawPart() // raw: the transfer encoding as written
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(p)
		if err != nil {
			t.Fatal(err)
		}
		enc := p.Header.Get("Content-Transfer-Encoding")
		ct, ctParams, _ := mime.ParseMediaType(p.Header.Get("Content-Type"))
		if p.FileName() == "" {
			if ct != "text/plain" || !strings.EqualFold(ctParams["charset"], "utf-8") || enc != "quoted-printable" {
				t.Errorf("text part %q, %q", p.Header.Get("Content-Type"), enc)
			}
			dec, err := io.ReadAll(newQP(body))
			if err != nil {
				t.Fatal(err)
			}
			texts = append(texts, string(dec))
			continue
		}
		if disp, _, _ := mime.ParseMediaType(p.Header.Get("Content-Disposition")); disp != "attachment" || enc != "base64" {
			t.Errorf("%s: Content-Disposition %q, encoding %q", p.FileName(), p.Header.Get("Content-Disposition"), enc)
		}
		for _, line := range strings.Split(strings.TrimRight(string(body), "\r\n"), "\r\n") {
			if len(line) > 76 {
				t.Errorf("%s: a base64 line of %d characters", p.FileName(), len(line))
				break
			}
		}
		dec, err := base64.StdEncoding.DecodeString(strings.NewReplacer("\r", "", "\n", "").Replace(string(body)))
		if err != nil {
			t.Fatal(err)
		}
		files[p.FileName()], types[p.FileName()] = dec, ct
	}
	if len(texts) != 1 || texts[0] != text {
		t.Errorf("texts %q, want the one text as written", texts)
	}
	if !bytes.Equal(files["211111110015_111_H_1.pdf"], pdf) || types["211111110015_111_H_1.pdf"] != "application/pdf" ||
		!bytes.Equal(files["211111110015_111_H_1.xml"], xml) || types["211111110015_111_H_1.xml"] != "application/xml" || len(files) != 2 {
		t.Errorf("attachments %v", types)
	}
}

// The recovery message: text/plain in UTF-8 sent as 8bit, so its text (the
// temporary password) reads as written in the raw message.
func TestTextMessage(t *testing.T) {
	t.Parallel()
	body := "Hola ana:\r\n\r\nSu clave temporal es: Ab-_0123456789xy\r\n\r\nVale una sola vez y vence a las 10:30 (hora de Montevideo).\r\n"
	raw, err := textMessage("ana@alfa.test", "Clave temporal del sandbox CFE", body, msgTime)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(raw, []byte("Subject: Clave temporal del sandbox CFE\r\n")) || !bytes.Contains(raw, []byte("Su clave temporal es: Ab-_0123456789xy\r\n")) {
		t.Errorf("the subject or the password is not in the raw message as written:\n%s", raw)
	}
	msg := readMessage(t, raw)
	checkHeaders(t, msg.Header, "ana@alfa.test", "Clave temporal del sandbox CFE")
	ct, params, err := mime.ParseMediaType(msg.Header.Get("Content-Type"))
	if err != nil || ct != "text/plain" || !strings.EqualFold(params["charset"], "utf-8") || msg.Header.Get("Content-Transfer-Encoding") != "8bit" {
		t.Errorf("Content-Type %q, Content-Transfer-Encoding %q", msg.Header.Get("Content-Type"), msg.Header.Get("Content-Transfer-Encoding"))
	}
	if got, _ := io.ReadAll(msg.Body); string(got) != body {
		t.Errorf("body %q, want %q", got, body)
	}
}

// A recipient that is not one address is refused before anything is built.
func TestMessage_badRecipient(t *testing.T) {
	t.Parallel()
	for _, to := range []string{"", "no es correo", "a@b.test\r\nBcc: c@d.test"} {
		if _, err := textMessage(to, "x", "y", msgTime); err == nil {
			t.Errorf("recipient %q was accepted", to)
		}
	}
}

func newQP(b []byte) io.Reader { return quotedprintable.NewReader(bytes.NewReader(b)) }
