package printer

import (
	"bytes"
	"context"
	"fmt"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// Printer prints PDF documents; RawPrinter prints ESC/POS.
type Printer interface {
	// Print sends the job to the printer and reports what became of it. It
	// returns EINVALID for a job without a PDF or with copies out of range,
	// ENOTFOUND when the printer (queue, directory, Windows printer) does
	// not exist, and EUNAVAILABLE when the printer cannot be reached or
	// refused or failed the job: the error's Message then carries the
	// printer's reason, in Spanish, and nothing was printed.
	Print(ctx context.Context, job Job) (Result, error)
}

// MaxCopies is the most copies one job may ask for.
const MaxCopies = 10

// Job is one document to print.
type Job struct {
	Name   string // shown in the print queue and used in file names, e.g. "e-Ticket A-1"
	PDF    []byte
	Copies int    // 1 to MaxCopies; 0 means 1
	Media  string // media as the backend names it (IPP keyword, lp media); "" = printer default
}

// Result is what the backend reports about a job it accepted.
type Result struct {
	Backend Backend
	Printer string   // queue, directory or Windows printer
	JobID   string   // the spooler's job id; "" where there is none
	State   string   // one of the State constants
	Copies  int      // copies the printer accepted
	Files   []string // files written, for the directory backend
}

// Job states, named after IPP's job-state keywords.
const (
	StateCompleted  = "completed"  // printed, or written to its file
	StateProcessing = "processing" // the printer is working on it
	StatePending    = "pending"    // queued; the spooler will print it
)

// Backend is a way to reach a printer.
type Backend string

// The backends.
const (
	BackendCUPS    Backend = "cups"    // CUPS over IPP
	BackendLP      Backend = "lp"      // the lp command (CUPS or LPRng)
	BackendDir     Backend = "dir"     // PDF files written to a directory
	BackendWindows Backend = "windows" // SumatraPDF's command line; the spooler's RAW datatype for ESC/POS
	BackendTCP     Backend = "tcp"     // ESC/POS to a network printer's raw port (9100)
	BackendDevice  Backend = "device"  // ESC/POS to a device file (USB, serial)
)

// normalize checks a job and returns it with its copies set.
func (j Job) normalize(op string) (Job, error) {
	var bad []cfe.FieldError
	if !bytes.HasPrefix(j.PDF, []byte("%PDF-")) {
		bad = append(bad, cfe.FieldError{Campo: "pdf", Mensaje: "no es un documento PDF"})
	}
	if j.Copies == 0 {
		j.Copies = 1
	}
	if j.Copies < 1 || j.Copies > MaxCopies {
		bad = append(bad, cfe.FieldError{Campo: "copias", Mensaje: fmt.Sprintf("deben estar entre 1 y %d", MaxCopies)})
	}
	if len(bad) > 0 {
		return j, &cfe.Error{Code: cfe.EINVALID, Op: op, Message: "trabajo de impresión inválido", Fields: bad}
	}
	return j, nil
}

// unavailable is the error of a printer that refused, failed or cannot be
// reached; msg is for the user, err for the logs.
func unavailable(op string, err error, format string, args ...any) error {
	return &cfe.Error{Code: cfe.EUNAVAILABLE, Op: op, Message: fmt.Sprintf(format, args...), Err: err}
}

// notFound is the error of a printer that does not exist.
func notFound(op string, err error, format string, args ...any) error {
	return &cfe.Error{Code: cfe.ENOTFOUND, Op: op, Message: fmt.Sprintf(format, args...), Err: err}
}
