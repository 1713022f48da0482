package sandbox

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/smtp"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/crypto/bcrypt"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// RecoverRequest is the body of POST /api/auth/recuperarClave.
type RecoverRequest struct {
	Username string `json:"username"`
}

// RecoverResponse answers every well-formed recovery request alike, so the
// endpoint does not tell whether a user exists.
type RecoverResponse struct {
	Mensaje string `json:"mensaje"`
}

const recoverMessage = "si el usuario existe, se envió una clave temporal a su correo"

// handleRecover issues a single-use temporary password, valid for
// tempPasswordTTL, and e-mails it to the user. The user's password keeps
// working. At most one mail per user per recoveryCooldown.
func (s *Server) handleRecover(w http.ResponseWriter, r *http.Request) {
	var req RecoverRequest
	if err := decodeJSON(r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := invalid(required("username", req.Username)...); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := s.recoverPassword(req.Username); err != nil {
		s.log.Error("password recovery failed", "request_id", requestID(r), "err", err)
	}
	writeJSON(w, http.StatusOK, RecoverResponse{Mensaje: recoverMessage})
}

func (s *Server) recoverPassword(username string) error {
	now := s.now()
	temp := newSecret("")[:16]
	hash, err := bcrypt.GenerateFromPassword([]byte(temp), s.cfg.PasswordCost)
	if err != nil {
		return err
	}
	var user *User
	err = s.db.update(func(tx *bolt.Tx) error {
		u, err := userByName(tx, username)
		if err != nil {
			return err
		}
		if u.Temp != nil && now.Sub(u.Temp.Sent) < recoveryCooldown {
			return nil
		}
		u.Temp = &TempPassword{Hash: hash, Expires: now.Add(tempPasswordTTL), Sent: now}
		user = u
		return putUser(tx, u)
	})
	if err != nil || user == nil {
		if cfe.ErrorCode(err) == cfe.ENOTFOUND {
			return nil
		}
		return err
	}
	if err := s.sendMail(user.Email, "Clave temporal del sandbox CFE", fmt.Sprintf(
		"Hola %s:\r\n\r\nSu clave temporal es: %s\r\n\r\nVale una sola vez y vence a las %s (hora de Montevideo).\r\nSu clave habitual sigue funcionando.\r\n",
		user.Username, temp, now.Add(tempPasswordTTL).In(cfe.Montevideo).Format("15:04"))); err != nil {
		return err
	}
	s.metrics.recoveryEmails.Add(1)
	return nil
}

// sendMail delivers a plain-text message through the configured SMTP server.
func (s *Server) sendMail(to, subject, body string) error {
	if s.cfg.SMTPAddr == "" {
		return fmt.Errorf("no SMTP server configured (--smtp); the recovery mail to user was not sent")
	}
	if strings.ContainsAny(to, "\r\n") {
		return fmt.Errorf("invalid recipient address")
	}
	msg := "From: " + mailFrom + "\r\nTo: " + to + "\r\nSubject: " + subject +
		"\r\nMIME-Version: 1.0\r\nContent-Type: text/plain; charset=UTF-8\r\nContent-Transfer-Encoding: 8bit\r\nDate: " +
		s.now().Format(time.RFC1123Z) + "\r\n\r\n" + body
	return s.smtpSend(to, []byte(msg))
}

// smtpSend delivers the complete message msg to one recipient through the
// configured SMTP server, within mailTimeout.
func (s *Server) smtpSend(to string, msg []byte) error {
	conn, err := net.DialTimeout("tcp", s.cfg.SMTPAddr, mailTimeout)
	if err != nil {
		return err
	}
	host, _, _ := net.SplitHostPort(s.cfg.SMTPAddr)
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
