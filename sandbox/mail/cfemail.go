package mail

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/mail"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/sandbox/auth"
	"github.com/cfe-agent/cfe-agent/sandbox/data"
	"github.com/cfe-agent/cfe-agent/sandbox/web"
)

// CFEs are the issued CFEs a caller may send (issuing.Issued).
type CFEs interface {
	// Visible reads CFE id for p: ENOTFOUND when it does not exist,
	// EFORBIDDEN when it is another company's.
	Visible(p *auth.Principal, id int64) (*data.CFERecord, error)
}

// Printer renders a CFE's printed representation (issuing.Printer).
type Printer interface {
	// Render makes the PDF of rec with template (the company's when empty):
	// EINVALID for an unknown template, EINTERNAL when rendering fails.
	Render(rec *data.CFERecord, company *data.Company, template string) ([]byte, error)
}

// CFEMail serves the sends of a CFE by e-mail and their history
// (enviarPdfPorCorreo, emailenvios).
type CFEMail struct {
	db      *data.DB
	cfes    CFEs
	printer Printer
	sender  *Sender
	now     func() time.Time
	log     *slog.Logger
}

// NewCFEMail builds the CFE mail routes over sender.
func NewCFEMail(db *data.DB, cfes CFEs, printer Printer, sender *Sender, log *slog.Logger) *CFEMail {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &CFEMail{db: db, cfes: cfes, printer: printer, sender: sender, now: sender.now, log: log}
}

// bucketCFEMails is the history of e-mail sends: CFE id + send id → Delivery,
// so that one CFE's sends sit together in order. Created by the first send.
var bucketCFEMails = []byte("cfemails")

// SendRequest is the body of POST /api/v1/cfeemitido/enviarPdfPorCorreo.
type SendRequest struct {
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

// Delivery is one send of a CFE by e-mail, as the history keeps it.
type Delivery struct {
	ID            int64       `json:"id"`
	IdCfe         int64       `json:"idCfe"`
	Fecha         time.Time   `json:"fecha"`
	EnviadoPor    Requester   `json:"enviadoPor"`
	Asunto        string      `json:"asunto"`
	Adjuntos      []string    `json:"adjuntos"`
	Estado        string      `json:"estado"`
	Destinatarios []Recipient `json:"destinatarios"`
}

// Requester is who asked for a send: a user (JWT) or a company API key.
type Requester struct {
	Tipo   string `json:"tipo"` // usuario or apiKey
	ID     int64  `json:"id"`
	Nombre string `json:"nombre"` // the username, or the key's name
}

// Recipient is one address of a send and what became of it.
type Recipient struct {
	Correo    string     `json:"correo"`
	Estado    string     `json:"estado"`
	Error     string     `json:"error,omitempty"` // the SMTP server's answer or the connection error
	EnviadoEn *time.Time `json:"enviadoEn,omitempty"`
}

func requesterOf(p *auth.Principal) Requester {
	if p.Key != nil {
		return Requester{Tipo: "apiKey", ID: p.Key.ID, Nombre: p.Key.Nombre}
	}
	return Requester{Tipo: "usuario", ID: p.User.ID, Nombre: p.User.Username}
}

// check validates the request's fields and returns the recipients'
// addresses (the bare address of each "Nombre <correo>").
func (req *SendRequest) check() ([]string, error) {
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
	return addrs, web.Invalid(fields...)
}

// HandleSend is POST /api/v1/cfeemitido/enviarPdfPorCorreo: it sends the
// CFE's PDF and its signed XML to each address, one message per address.
// The send is in the history before the first message leaves; each
// recipient's outcome is stored after. 200 with the send when every
// address was accepted, else 503 naming the failures (the history has
// them too).
func (m *CFEMail) HandleSend(w http.ResponseWriter, r *http.Request) {
	p := auth.PrincipalOf(r)
	var req SendRequest
	if err := web.DecodeJSON(r, &req); err != nil {
		web.WriteError(m.log, w, r, err)
		return
	}
	addrs, err := req.check()
	if err != nil {
		web.WriteError(m.log, w, r, err)
		return
	}
	rec, err := m.cfes.Visible(p, req.IdCfe)
	if err != nil {
		web.WriteError(m.log, w, r, err)
		return
	}
	if info, _ := rec.Type.Info(); info.Contingency {
		// DGI, Formato del Mensaje de Respuesta v19, note 1: a CFC goes to
		// DGI and never to the receiver; the paper form was the document.
		web.WriteError(m.log, w, r, cfe.Invalid("mail.HandleSend", cfe.FieldError{Campo: "idCfe",
			Mensaje: fmt.Sprintf("%s %s-%d es un comprobante de contingencia: se envía a DGI y no al receptor (el documento del cliente es el formulario en papel)", rec.Type.Name(), rec.Serie, rec.Nro)}))
		return
	}
	var company *data.Company
	if err := m.db.View(func(tx *bolt.Tx) error {
		var err error
		company, err = data.GetCompany(tx, rec.Company)
		return err
	}); err != nil {
		web.WriteError(m.log, w, r, err)
		return
	}
	pdfBody, err := m.printer.Render(rec, company, req.Variant)
	if err != nil {
		web.WriteError(m.log, w, r, err)
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
	send := &Delivery{IdCfe: rec.ID, Fecha: m.now().UTC(), EnviadoPor: requesterOf(p), Asunto: subject,
		Adjuntos: []string{base + ".pdf", base + ".xml"}, Estado: mailPending}
	for _, a := range addrs {
		send.Destinatarios = append(send.Destinatarios, Recipient{Correo: a, Estado: mailPending})
	}
	if err := m.put(send); err != nil {
		web.WriteError(m.log, w, r, err)
		return
	}
	atts := []attachment{{name: base + ".pdf", ctype: "application/pdf", body: pdfBody}, {name: base + ".xml", ctype: "application/xml", body: rec.XML}}
	var failed []cfe.FieldError
	var unreachable error // once the server cannot be reached, the other addresses are not tried
	for i := range send.Destinatarios {
		d := &send.Destinatarios[i]
		err := unreachable
		if err == nil {
			err = m.sender.sendCFE(d.Correo, subject, text, atts)
			if serverUnreachable(err) {
				unreachable = err
			}
		}
		if err != nil {
			d.Estado, d.Error = mailFailed, err.Error()
			failed = append(failed, cfe.FieldError{Campo: "destinatarios[" + strconv.Itoa(i) + "]", Mensaje: d.Correo + ": " + d.Error})
			m.log.Warn("CFE mail not delivered", "request_id", web.RequestID(r), "cfe", rec.ID, "send", send.ID, "err", err)
			continue
		}
		at := m.now().UTC()
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
	if err := m.put(send); err != nil {
		web.WriteError(m.log, w, r, err)
		return
	}
	if len(failed) > 0 {
		web.WriteError(m.log, w, r, &cfe.Error{Code: cfe.EUNAVAILABLE, Fields: failed, Message: fmt.Sprintf(
			"no se pudo enviar el correo a %d de %d destinatarios (envío %d; ver emailenvios)", len(failed), len(send.Destinatarios), send.ID)})
		return
	}
	web.WriteJSON(w, http.StatusOK, send)
}

// put stores send, giving it an id when it has none.
func (m *CFEMail) put(send *Delivery) error {
	return m.db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketCFEMails)
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
		return data.PutJSON(tx, bucketCFEMails, append(data.IDKey(send.IdCfe), data.IDKey(send.ID)...), send)
	})
}

// HandleHistory is GET /api/v1/cfeemitido/emailenvios?idCfe: the sends
// of a CFE, oldest first.
func (m *CFEMail) HandleHistory(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.URL.Query().Get("idCfe"), 10, 64)
	if err != nil || id <= 0 {
		web.WriteError(m.log, w, r, web.Invalid(cfe.FieldError{Campo: "idCfe", Mensaje: "debe ser un número mayor que cero"}))
		return
	}
	if _, err := m.cfes.Visible(auth.PrincipalOf(r), id); err != nil {
		web.WriteError(m.log, w, r, err)
		return
	}
	out := []Delivery{}
	err = m.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketCFEMails)
		if b == nil {
			return nil
		}
		prefix := data.IDKey(id)
		c := b.Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			var d Delivery
			if err := json.Unmarshal(v, &d); err != nil {
				return err
			}
			out = append(out, d)
		}
		return nil
	})
	if err != nil {
		web.WriteError(m.log, w, r, err)
		return
	}
	web.WriteJSON(w, http.StatusOK, out)
}
