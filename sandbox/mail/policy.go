package mail

import "time"

// Choices the interface leaves open ("not shown") about mail. Each is
// described in docs/sandbox.md; change them here and only here.
const (
	mailFrom          = "no-responder@sandbox.invalid" // the sender of every message
	mailTimeout       = 10 * time.Second               // one message's whole SMTP exchange
	maxMailRecipients = 10                             // addresses one enviarPdfPorCorreo may name
	maxMailSubject    = 200                            // characters of a subject
	maxMailMessage    = 4000                           // characters of a message's text
)
