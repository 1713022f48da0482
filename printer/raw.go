package printer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// Protocol is the language a printer is sent: PDF (through a spooler that
// rasterises it) or ESC/POS (raw bytes that the thermal printer reads).
type Protocol string

// The protocols.
const (
	ProtocolPDF    Protocol = "pdf"
	ProtocolESCPOS Protocol = "escpos"
)

// RawJob is a document in the printer's own language (ESC/POS), sent to it
// untouched.
type RawJob struct {
	Name   string // shown in the print queue, e.g. "e-Ticket A-1"
	Data   []byte // one copy, from reset to cut
	Copies int    // 1 to MaxCopies; 0 means 1
}

// RawPrinter prints raw jobs.
type RawPrinter interface {
	// PrintRaw sends the job's copies and returns once the printer or its
	// spooler has accepted them. Its errors are those of Printer.Print.
	PrintRaw(ctx context.Context, job RawJob) (Result, error)
}

// normalize checks a raw job and returns it with its copies set.
func (j RawJob) normalize(op string) (RawJob, error) {
	var bad []cfe.FieldError
	if len(j.Data) == 0 {
		bad = append(bad, cfe.FieldError{Campo: "datos", Mensaje: "el trabajo no tiene contenido"})
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

// payload is every copy of the job, one after the other: each copy of an
// ESC/POS receipt resets the printer and ends with its cut.
func (j RawJob) payload() []byte { return bytes.Repeat(j.Data, j.Copies) }

// ESC/POS real-time status (DLE EOT n), answered by the printer at once,
// even while it is offline: n = 1 printer status, 2 offline cause, 4 roll
// paper sensor. Every answer byte has bits 1 and 4 set and bits 0 and 7
// clear.
var statusQuery = []byte{0x10, 0x04, 0x01, 0x10, 0x04, 0x02, 0x10, 0x04, 0x04}

// StatusTimeout is how long a printer has to answer DLE EOT.
const StatusTimeout = 2 * time.Second

// Status is a thermal printer's real-time status.
type Status struct {
	Offline   bool
	CoverOpen bool
	PaperEnd  bool
	PaperLow  bool // near end: still printing
	Error     bool // cutter or mechanical error
}

// Problem says in Spanish why a printer in this status cannot print, or "".
func (s Status) Problem() string {
	var out []string
	if s.PaperEnd {
		out = append(out, "no tiene papel")
	}
	if s.CoverOpen {
		out = append(out, "tiene la tapa abierta")
	}
	if s.Error {
		out = append(out, "indica un error (cortador o mecanismo)")
	}
	if len(out) == 0 && s.Offline {
		out = append(out, "está fuera de línea")
	}
	return strings.Join(out, " y ")
}

// parseStatus reads the answers to statusQuery.
func parseStatus(b []byte) (Status, error) {
	if len(b) != 3 {
		return Status{}, fmt.Errorf("status: %d bytes, want 3", len(b))
	}
	for i, c := range b {
		if c&0x93 != 0x12 {
			return Status{}, fmt.Errorf("status byte %d is %#02x: not a DLE EOT answer", i+1, c)
		}
	}
	return Status{
		Offline:   b[0]&0x08 != 0,
		CoverOpen: b[1]&0x04 != 0,
		PaperEnd:  b[1]&0x20 != 0 || b[2]&0x60 != 0,
		Error:     b[1]&0x40 != 0,
		PaperLow:  b[2]&0x0c != 0,
	}, nil
}

// deadliner is a connection whose reads can be bounded in time.
type deadliner interface {
	io.ReadWriter
	SetReadDeadline(t time.Time) error
}

// queryStatus asks the printer for its real-time status and reads the
// answer within StatusTimeout.
func queryStatus(conn deadliner) (Status, error) {
	if _, err := conn.Write(statusQuery); err != nil {
		return Status{}, err
	}
	if err := conn.SetReadDeadline(time.Now().Add(StatusTimeout)); err != nil {
		return Status{}, err
	}
	defer func() { _ = conn.SetReadDeadline(time.Time{}) }()
	buf := make([]byte, 3)
	if _, err := io.ReadFull(conn, buf); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			err = fmt.Errorf("the printer closed the connection: %w", err)
		}
		return Status{}, err
	}
	return parseStatus(buf)
}

// checkStatus queries the printer and turns a problem into EUNAVAILABLE
// whose message names the printer (who) and the reason; when is "" before
// the job, or says what happened to it.
func checkStatus(op string, conn deadliner, who, when string) (Status, error) {
	st, err := queryStatus(conn)
	if err != nil {
		return st, unavailable(op, err, "la impresora %s no respondió a la consulta de estado (DLE EOT)%s; "+
			"si no la admite, desactive escpos.status en el perfil", who, when)
	}
	if p := st.Problem(); p != "" {
		return st, unavailable(op, nil, "la impresora %s %s%s", who, p, when)
	}
	return st, nil
}
