package mail

import (
	"errors"
	"fmt"
	"net"
	"net/smtp"
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
	msg, err := textMessage(to, subject, body, s.now())
	if err != nil {
		return err
	}
	return s.send(to, msg)
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
	msg, err := cfeMessage(to, subject, text, atts, s.now())
	if err != nil {
		return err
	}
	return s.send(to, msg)
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
