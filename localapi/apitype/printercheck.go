package apitype

import "time"

// Sources of a PrinterCheck.
const (
	PrinterCheckIdle = "consulta"  // the agent's check between jobs
	PrinterCheckJob  = "impresion" // a print job (POST /pdf, a reprint)
)

// PrinterCheck is what the agent last learned of a printer: from asking it
// between jobs (the default printer, every 20 s: ESC/POS real-time status
// over TCP or serial, the CUPS queue's state, the Windows spooler's), or
// from a job sent to it.
type PrinterCheck struct {
	// Alias is the printer, as the profile names it (in /state; the
	// listing of /printers names it already).
	Alias  string    `json:"alias,omitempty"`
	OK     bool      `json:"ok"`               // it could take a job
	Reason string    `json:"reason,omitempty"` // why not, in Spanish
	At     time.Time `json:"at"`               // when it was learned (Montevideo)
	Source string    `json:"source"`           // PrinterCheckIdle or PrinterCheckJob
}
