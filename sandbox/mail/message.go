package mail

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"time"

	gomail "github.com/wneessen/go-mail"
)

// The messages are built with go-mail (github.com/wneessen/go-mail): the
// headers (a subject outside ASCII in RFC 2047 words), the multipart
// structure, quoted-printable text and base64 attachments in lines of 76
// characters. Sending stays with net/smtp (sender.go), so that the outcome
// recorded for each recipient is the SMTP server's own answer or the
// connection's error.

// attachment is a file attached to a message.
type attachment struct {
	name, ctype string
	body        []byte
}

// newMessage starts a message from mailFrom to one address, dated now, with
// a Message-ID of the sandbox's own domain and no User-Agent header.
func newMessage(to, subject string, now time.Time, opts ...gomail.MsgOption) (*gomail.Msg, error) {
	m := gomail.NewMsg(append([]gomail.MsgOption{gomail.WithNoDefaultUserAgent(), gomail.WithCharset(gomail.CharsetUTF8)}, opts...)...)
	if err := m.From(mailFrom); err != nil {
		return nil, err
	}
	if err := m.To(to); err != nil {
		return nil, err
	}
	m.Subject(subject)
	m.SetDateWithValue(now)
	id := make([]byte, 12)
	_, _ = rand.Read(id) // crypto/rand's Read never fails
	m.SetMessageIDWithValue(hex.EncodeToString(id) + "@sandbox.invalid")
	return m, nil
}

// cfeMessage is a multipart/mixed message: the text (quoted-printable) and
// each attachment (base64).
func cfeMessage(to, subject, text string, atts []attachment, now time.Time) ([]byte, error) {
	m, err := newMessage(to, subject, now, gomail.WithEncoding(gomail.EncodingQP))
	if err != nil {
		return nil, err
	}
	m.SetBodyString(gomail.TypeTextPlain, text)
	for _, a := range atts {
		if err := m.AttachReader(a.name, bytes.NewReader(a.body), gomail.WithFileContentType(gomail.ContentType(a.ctype)),
			gomail.WithFileEncoding(gomail.EncodingB64)); err != nil {
			return nil, err
		}
	}
	return write(m)
}

// textMessage is a plain-text message in UTF-8, sent as 8bit: the text as
// written, which a recovery mail's reader copies a password from.
func textMessage(to, subject, body string, now time.Time) ([]byte, error) {
	m, err := newMessage(to, subject, now, gomail.WithEncoding(gomail.NoEncoding))
	if err != nil {
		return nil, err
	}
	m.SetBodyString(gomail.TypeTextPlain, body)
	return write(m)
}

func write(m *gomail.Msg) ([]byte, error) {
	var buf bytes.Buffer
	if _, err := m.WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
