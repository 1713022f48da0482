// Package mail is the emulator's mail room: the messages it sends through
// the configured SMTP server (--smtp) and the sends of CFEs by e-mail with
// their history (enviarPdfPorCorreo, emailenvios).
//
// Sender delivers one message per recipient (the recovery mail of the auth
// room goes out through its SendText). CFEMail sends a CFE's PDF and signed
// XML, recording the send before the first message leaves and each
// recipient's outcome after. It reads CFEs and renders PDFs through two
// narrow interfaces the composition root fills with the issuing room's
// parts.
package mail
