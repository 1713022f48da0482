package sandbox

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net"
	"net/http"
	"net/mail"
	"net/textproto"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// bucketCFEMails is the history of e-mail sends: CFE id + send id → MailSend,
// so that one CFE's sends sit together in order. Created by the first send.
var bucketCFEMails = []byte("cfemails")

// MailRequest is the body of POST /api/v1/cfeemitido/enviarPdfPorCorreo.
type MailRequest struct {
	IdCfe         int64    `json:"idCfe"`
	Destinatarios []string `json:"destinatarios"`
	Asunto        string   `json:"asunto,omitempty"`  // default: the CFE's type, number and emitter
	Mensaje       string   `json:"mensaje,omitempty"` // default: a short Spanish text
	Variant       string   `json:"variant,omitempty"` // print template, as in POST /cfeemitido/pdf
}

// States of a send and of each recipient.
const (
	mailPending   = "pendiente" // recorded, not yet handed to the SMTP server
	mailSent      = "enviado"   // accepted by the SMTP server
	mailFailed    = "error"     // the SMTP server refused it or could not be reached
	mailPartially = "parcial"   // a send whose recipients did not all get it
)

// MailSend is one send of a CFE by e-mail, as the history keeps it.
type MailSend struct {
	ID            int64           `json:"id"`
	IdCfe         int64           `json:"idCfe"`
	Fecha         time.Time       `json:"fecha"`
	EnviadoPor    MailSender      `json:"enviadoPor"`
	Asunto        string          `json:"asunto"`
	Adjuntos      []string        `json:"adjuntos"`
	Estado        string          `json:"estado"`
	Destinatarios []MailRecipient `json:"destinatarios"`
}

// MailSender is who asked for a send: a user (JWT) or a company API key.
type MailSender struct {
	Tipo   string `json:"tipo"` // usuario or apiKey
	ID     int64  `json:"id"`
	Nombre string `json:"nombre"` // the username, or the key's name
}

// MailRecipient is one address of a send and what became of it.
type MailRecipient struct {
	Correo    string     `json:"correo"`
	Estado    string     `json:"estado"`
	Error     string     `json:"error,omitempty"` // the SMTP server's answer or the connection error
	EnviadoEn *time.Time `json:"enviadoEn,omitempty"`
}

func senderOf(p *principal) MailSender {
	if p.key != nil {
		return MailSender{Tipo: "apiKey", ID: p.key.ID, Nombre: p.key.Nombre}
	}
	return MailSender{Tipo: "usuario", ID: p.user.ID, Nombre: p.user.Username}
}

// check validates the request's fields and returns the recipients'
// addresses (the bare address of each "Nombre <correo>").
func (req *MailRequest) check() ([]string, error) {
	var fields []cfe.FieldError
	if req.IdCfe <= 0 {
		fields = append(fields, cfe.FieldError{Campo: "idCfe", Mensaje: "debe ser un número mayor que cero"})
	}
	var addrs []string
	switch n := len(req.Destinatarios); {
	case n == 0:
		fields = append(fields, cfe.FieldError{Campo: "destinatarios", Mensaje: "indique al menos una dirección de correo"})
	case n > maxMailRecipients:
		fields = append(fields, cfe.FieldError{Campo: "destinatarios", Mensaje: fmt.Sprintf("admite como máximo %d direcciones", maxMailRecipients)})
	default:
		for i, d := range req.Destinatarios {
			a, err := mail.ParseAddress(d)
			if err != nil || strings.ContainsAny(a.Address, "\r\n") {
				fields = append(fields, cfe.FieldError{Campo: "destinatarios[" + strconv.Itoa(i) + "]", Mensaje: "no es una dirección de correo válida: " + strconv.Quote(d)})
				continue
			}
			addrs = append(addrs, a.Address)
		}
	}
	if utf8.RuneCountInString(req.Asunto) > maxMailSubject || strings.IndexFunc(req.Asunto, unicode.IsControl) >= 0 {
		fields = append(fields, cfe.FieldError{Campo: "asunto", Mensaje: fmt.Sprintf("admite hasta %d caracteres, sin saltos de línea", maxMailSubject)})
	}
	if utf8.RuneCountInString(req.Mensaje) > maxMailMessage || !utf8.ValidString(req.Mensaje) {
		fields = append(fields, cfe.FieldError{Campo: "mensaje", Mensaje: fmt.Sprintf("admite hasta %d caracteres", maxMailMessage)})
	}
	return addrs, invalid(fields...)
}

// handleMailCFE is POST /api/v1/cfeemitido/enviarPdfPorCorreo: it sends the
// CFE's PDF and its signed XML to each address, one message per address.
// The send is in the history before the first message leaves; each
// recipient's outcome is stored after. 200 with the send when every
// address was accepted, else 503 naming the failures (the history has
// them too).
func (s *Server) handleMailCFE(w http.ResponseWriter, r *http.Request) {
	p := principalOf(r)
	var req MailRequest
	if err := decodeJSON(r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	addrs, err := req.check()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	rec, err := s.visibleCFE(p, req.IdCfe)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var company *Company
	if err := s.db.view(func(tx *bolt.Tx) error {
		var err error
		company, err = getCompany(tx, rec.Company)
		return err
	}); err != nil {
		s.writeError(w, r, err)
		return
	}
	pdfBody, err := s.render(rec, company, req.Variant)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	base := fmt.Sprintf("%s_%d_%s_%d", company.RUC, int(rec.Type), rec.Serie, rec.Nro)
	subject := req.Asunto
	if subject == "" {
		subject = fmt.Sprintf("%s %s-%d de %s", rec.Type.Name(), rec.Serie, rec.Nro, company.RazonSocial)
	}
	text := req.Mensaje
	if text == "" {
		text = fmt.Sprintf("Adjuntamos el comprobante fiscal electrónico %s %s-%d emitido por %s (RUC %s): "+
			"su representación impresa en PDF y el XML firmado.\r\n", rec.Type.Name(), rec.Serie, rec.Nro, company.RazonSocial, company.RUC)
	}
	send := &MailSend{IdCfe: rec.ID, Fecha: s.now().UTC(), EnviadoPor: senderOf(p), Asunto: subject,
		Adjuntos: []string{base + ".pdf", base + ".xml"}, Estado: mailPending}
	for _, a := range addrs {
		send.Destinatarios = append(send.Destinatarios, MailRecipient{Correo: a, Estado: mailPending})
	}
	if err := s.putMailSend(send); err != nil {
		s.writeError(w, r, err)
		return
	}
	atts := []attachment{{name: base + ".pdf", ctype: "application/pdf", body: pdfBody}, {name: base + ".xml", ctype: "application/xml", body: rec.XML}}
	var failed []cfe.FieldError
	var unreachable error // once the server cannot be reached, the other addresses are not tried
	for i := range send.Destinatarios {
		d := &send.Destinatarios[i]
		err := unreachable
		if err == nil {
			err = s.mailCFE(d.Correo, subject, text, atts)
			if serverUnreachable(err) {
				unreachable = err
			}
		}
		if err != nil {
			d.Estado, d.Error = mailFailed, err.Error()
			failed = append(failed, cfe.FieldError{Campo: "destinatarios[" + strconv.Itoa(i) + "]", Mensaje: d.Correo + ": " + d.Error})
			s.log.Warn("CFE mail not delivered", "request_id", requestID(r), "cfe", rec.ID, "send", send.ID, "err", err)
			continue
		}
		at := s.now().UTC()
		d.Estado, d.EnviadoEn = mailSent, &at
	}
	switch len(failed) {
	case 0:
		send.Estado = mailSent
	case len(send.Destinatarios):
		send.Estado = mailFailed
	default:
		send.Estado = mailPartially
	}
	if err := s.putMailSend(send); err != nil {
		s.writeError(w, r, err)
		return
	}
	if len(failed) > 0 {
		s.writeError(w, r, &cfe.Error{Code: cfe.EUNAVAILABLE, Fields: failed, Message: fmt.Sprintf(
			"no se pudo enviar el correo a %d de %d destinatarios (envío %d; ver emailenvios)", len(failed), len(send.Destinatarios), send.ID)})
		return
	}
	writeJSON(w, http.StatusOK, send)
}

// putMailSend stores send, giving it an id when it has none.
func (s *Server) putMailSend(send *MailSend) error {
	return s.db.update(func(tx *bolt.Tx) error {
		b, err := writeBucket(tx, bucketCFEMails)
		if err != nil {
			return err
		}
		if send.ID == 0 {
			n, err := b.NextSequence()
			if err != nil {
				return err
			}
			send.ID = int64(n)
		}
		return putJSON(tx, bucketCFEMails, append(idKey(send.IdCfe), idKey(send.ID)...), send)
	})
}

// handleMailHistory is GET /api/v1/cfeemitido/emailenvios?idCfe: the sends
// of a CFE, oldest first.
func (s *Server) handleMailHistory(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.URL.Query().Get("idCfe"), 10, 64)
	if err != nil || id <= 0 {
		s.writeError(w, r, invalid(cfe.FieldError{Campo: "idCfe", Mensaje: "debe ser un número mayor que cero"}))
		return
	}
	if _, err := s.visibleCFE(principalOf(r), id); err != nil {
		s.writeError(w, r, err)
		return
	}
	out := []MailSend{}
	err = s.db.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketCFEMails)
		if b == nil {
			return nil
		}
		prefix := idKey(id)
		c := b.Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			var m MailSend
			if err := json.Unmarshal(v, &m); err != nil {
				return err
			}
			out = append(out, m)
		}
		return nil
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
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

// mailCFE builds and sends one message to one address.
func (s *Server) mailCFE(to, subject, text string, atts []attachment) error {
	if s.cfg.SMTPAddr == "" {
		return errNoSMTP
	}
	msg, err := buildMessage(to, subject, text, atts, s.now())
	if err != nil {
		return err
	}
	return s.smtpSend(to, msg)
}

// buildMessage writes a multipart/mixed message: the text (quoted-printable)
// and each attachment (base64 in lines of 76 characters).
func buildMessage(to, subject, text string, atts []attachment, now time.Time) ([]byte, error) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fmt.Fprintf(&buf, "From: %s\r\nTo: %s\r\nSubject: %s\r\nDate: %s\r\nMessage-ID: <%s@sandbox.invalid>\r\nMIME-Version: 1.0\r\n"+
		"Content-Type: multipart/mixed; boundary=%q\r\n\r\n",
		mailFrom, (&mail.Address{Address: to}).String(), mime.QEncoding.Encode("utf-8", subject), now.Format(time.RFC1123Z),
		hex.EncodeToString(randomBytes(12)), mw.Boundary())
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
