package printing

import (
	"fmt"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// CFERef names one signed CFE: by UUID, or by type, serie and number.
type CFERef struct {
	UUID   string
	Type   cfe.Type
	Serie  string
	Numero int64
}

// Document is the printed representation of one CFE.
type Document struct {
	PDF      []byte // nil from Service.Load until Print renders it for a PDF printer
	Type     cfe.Type
	Serie    string
	Numero   int64
	Template string // the template it was rendered with
	// Signed and Adenda are the CFE as stored, for a printer that is sent
	// another rendering of it (ESC/POS).
	Signed []byte
	Adenda string
}

// Name is how the document is called in print queues and file names, such
// as "e-Ticket A-12".
func (d *Document) Name() string { return fmt.Sprintf("%s %s-%d", d.Type.Name(), d.Serie, d.Numero) }

// PrintResult is what the printer reported about the job it accepted.
type PrintResult struct {
	Printer string // the printer's queue, folder or Windows name
	Copies  int    // copies the printer accepted
	JobID   string // the spooler's job id; "" where there is none
	State   string // "completed", "processing" or "pending"
	Format  string // what the printer was sent: FormatPDF or FormatESCPOS
}

// The formats a printer is sent, as the local module's X-CFE-Formato header
// says them.
const (
	FormatPDF    = "pdf"
	FormatESCPOS = "escpos"
)
