package sandbox_test

import (
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-smtp"

	"github.com/cfe-agent/cfe-agent/sandbox"
	"github.com/cfe-agent/cfe-agent/sandbox/auth"
)

// mailbox is a real SMTP server on loopback that keeps what it receives.
type mailbox struct {
	mu   sync.Mutex
	msgs []mail
}

type mail struct {
	from, to string
	data     string
}

type mailSession struct {
	box      *mailbox
	from, to string
}

func (s *mailSession) Reset()        {}
func (s *mailSession) Logout() error { return nil }
func (s *mailSession) Mail(from string, _ *smtp.MailOptions) error {
	s.from = from
	return nil
}
func (s *mailSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	s.to = to
	return nil
}
func (s *mailSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	s.box.mu.Lock()
	defer s.box.mu.Unlock()
	s.box.msgs = append(s.box.msgs, mail{from: s.from, to: s.to, data: string(b)})
	return nil
}

// startMailbox runs an SMTP server on 127.0.0.1:0 and returns its address.
func startMailbox(t *testing.T) (*mailbox, string) {
	box := &mailbox{}
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &mailSession{box: box}, nil }))
	srv.Domain = "localhost"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return box, ln.Addr().String()
}

func (b *mailbox) all() []mail {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]mail(nil), b.msgs...)
}

var tempPasswordRe = regexp.MustCompile(`clave temporal es: (\S+)`)

func TestRecoverPassword(t *testing.T) {
	t.Parallel()
	box, addr := startMailbox(t)
	e := start(t, func(c *sandbox.Config) { c.SMTPAddr = addr })

	var answer auth.RecoverResponse
	e.do("POST", "/api/auth/recuperarClave", auth.RecoverRequest{Username: "ana"}).expect(t, http.StatusOK).decode(t, &answer)
	msgs := box.all()
	if len(msgs) != 1 || msgs[0].to != "ana@alfa.test" || msgs[0].from != "no-responder@sandbox.invalid" {
		t.Fatalf("mails %+v", msgs)
	}
	m := tempPasswordRe.FindStringSubmatch(msgs[0].data)
	if m == nil {
		t.Fatalf("no temporary password in %q", msgs[0].data)
	}
	temp := m[1]
	if !strings.Contains(msgs[0].data, "Subject: Clave temporal") {
		t.Errorf("mail without its subject: %q", msgs[0].data)
	}

	t.Run("an unknown user gets the same answer and no mail", func(t *testing.T) {
		var other auth.RecoverResponse
		e.do("POST", "/api/auth/recuperarClave", auth.RecoverRequest{Username: "nadie"}).expect(t, http.StatusOK).decode(t, &other)
		if other != answer || len(box.all()) != 1 {
			t.Errorf("answer %+v vs %+v; %d mails", other, answer, len(box.all()))
		}
	})
	t.Run("a second request within a minute sends nothing", func(t *testing.T) {
		e.do("POST", "/api/auth/recuperarClave", auth.RecoverRequest{Username: "ana"}).expect(t, http.StatusOK)
		if n := len(box.all()); n != 1 {
			t.Errorf("%d mails, want 1", n)
		}
	})
	t.Run("the temporary password logs in once", func(t *testing.T) {
		e.login("ana", temp)
		e.do("POST", "/api/auth/login", auth.LoginRequest{Username: "ana", Secret: temp}).expect(t, http.StatusUnauthorized)
	})
	t.Run("the usual password keeps working", func(t *testing.T) {
		e.login("ana", anaPassword)
	})
	t.Run("a temporary password expires after 30 minutes", func(t *testing.T) {
		e.clock.Advance(2 * time.Minute)
		e.do("POST", "/api/auth/recuperarClave", auth.RecoverRequest{Username: "ana"}).expect(t, http.StatusOK)
		msgs := box.all()
		if len(msgs) != 2 {
			t.Fatalf("%d mails, want 2", len(msgs))
		}
		temp := tempPasswordRe.FindStringSubmatch(msgs[1].data)[1]
		e.clock.Advance(30 * time.Minute)
		e.do("POST", "/api/auth/login", auth.LoginRequest{Username: "ana", Secret: temp}).expect(t, http.StatusUnauthorized)
	})
	t.Run("username is required", func(t *testing.T) {
		e.do("POST", "/api/auth/recuperarClave", map[string]string{}).expect(t, http.StatusBadRequest)
	})
}
