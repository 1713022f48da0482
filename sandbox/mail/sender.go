package mail

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/smtp"
	"net/textproto"
	"strings"
	"time"
)

// Sender delivers messages through the configured SMTP server, one
// recipient per message.
type Sender struct {
	addr string // host:port; "" when none is configured
	now  func() time.Time
}

// NewSender returns the sender through the SMTP server at addr (host:port;
// none when empty: every send then fails, saying so).
func NewSender(addr string, now func() time.Time) *Sender {
	if now == nil {
		now = time.Now
	}
	return &Sender{addr: addr, now: now}
}

// SendText delivers a plain-text message (UTF-8, 8bit) to one address: the
// recovery mail (auth.Mailer).
func (s *Sender) SendText(to, subject, body string) error {
	if s.addr == "" {
		return fmt.Errorf("no SMTP server configured (--smtp); the recovery mail to user was not sent")
	}
	if strings.ContainsAny(to, "\r\n") {
		return fmt.Errorf("invalid recipient address")
	}
	msg := "From: " + mailFrom + "\r\nTo: " + to + "\r\nSubject: " + subject +
		"\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=UTF-8\r\nContent-Transfer-Encoding: 8bit\r\nDate: " +
		s.now().Format(time.RFC1123Z) + "\r\n\r\n" + body
	return s.send(to, []byte(msg))
}

// attachment is a file attached to a message.
type attachment struct {
	name, ctype string
	body        []byte
}

var errNoSMTP = errors.New("no hay un servidor SMTP configurado (--smtp)")

// serverUnreachable reports whether err means that no message can reach the
// SMTP server (none configured, or no connection), rather than a refusal of
// one message.
func serverUnreachable(err error) bool {
	var op *net.OpError
	return errors.Is(err, errNoSMTP) || (errors.As(err, &op) && op.Op == "dial")
}

// sendCFE builds and sends one message to one address.
func (s *Sender) sendCFE(to, subject, text string, atts []attachment) error {
	if s.addr == "" {
		return errNoSMTP
	}
	msg, err := buildMessage(to, subject, text, atts, s.now())
	if err != nil {
		return err
	}
	return s.send(to, msg)
}

// buildMessage writes a multipart/mixed message: the text (quoted-printable)
// and each attachment (base64 in lines of 76 characters).
func buildMessage(to, subject, text string, atts []attachment, now time.Time) ([]byte, error) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	id := make([]byte, 12)
	_, _ = rand.Read(id) // crypto/rand's Read never fails
	fmt.Fprintf(&buf, "From: %s\r\nTo: %s\r\nSubject: %s\r\nDate: %s\r\nMessage-ID: <%s@sandbox.invalid>\r\nMIME-Version: 1.0\r\n"+
		"Content-Type: multipart/mixed; boundary=%q\r\n\r\n",
		mailFrom, (&mail.Address{Address: to}).String(), mime.QEncoding.Encode("utf-8", subject), now.Format(time.RFC1123Z),
		hex.EncodeToString(id), mw.Boundary())
	part, err := mw.CreatePart(textproto.MIMEHeader{
		"Content-Type":              {"text/plain; charset=UTF-8"},
		"Content-Transfer-Encoding": {"quoted-printable"},
	})
	if err != nil {
		return nil, err
	}
	qp := quotedprintable.NewWriter(part)
	if _, err := qp.Write([]byte(text)); err != nil {
		return nil, err
	}
	if err := qp.Close(); err != nil {
		return nil, err
	}
	for _, a := range atts {
		part, err := mw.CreatePart(textproto.MIMEHeader{
			"Content-Type":              {mime.FormatMediaType(a.ctype, map[string]string{"name": a.name})},
			"Content-Disposition":       {mime.FormatMediaType("attachment", map[string]string{"filename": a.name})},
			"Content-Transfer-Encoding": {"base64"},
		})
		if err != nil {
			return nil, err
		}
		enc := base64.StdEncoding.EncodeToString(a.body)
		for len(enc) > 76 {
			if _, err := io.WriteString(part, enc[:76]+"\r\n"); err != nil {
				return nil, err
			}
			enc = enc[76:]
		}
		if _, err := io.WriteString(part, enc+"\r\n"); err != nil {
			return nil, err
		}
	}
	if err := mw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// send delivers the complete message msg to one recipient through the
// configured SMTP server, within mailTimeout.
func (s *Sender) send(to string, msg []byte) error {
	conn, err := net.DialTimeout("tcp", s.addr, mailTimeout)
	if err != nil {
		return err
	}
	host, _, _ := net.SplitHostPort(s.addr)
	if err := conn.SetDeadline(time.Now().Add(mailTimeout)); err != nil {
		return errors.Join(err, conn.Close())
	}
	c, err := smtp.NewClient(conn, host)
	if err != nil {
		return errors.Join(err, conn.Close())
	}
	defer c.Close() //nolint:errcheck // Quit below reports the outcome; Close only frees the connection
	if err := c.Mail(mailFrom); err != nil {
		return err
	}
	if err := c.Rcpt(to); err != nil {
		return err
	}
	wc, err := c.Data()
	if err != nil {
		return err
	}
	if _, err := wc.Write(msg); err != nil {
		return err
	}
	if err := wc.Close(); err != nil {
		return err
	}
	return c.Quit()
}
