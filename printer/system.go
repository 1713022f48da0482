package printer

import (
	"context"
	"strings"
)

// SystemPrinter is a printer of the machine's spooler: a CUPS queue, or a
// Windows printer, as SystemPrinters lists it.
type SystemPrinter struct {
	Name        string
	Description string // CUPS's printer-info, Windows's comment
	Location    string
	Model       string // make and model, or the Windows driver
	State       string // PrinterIdle, PrinterPrinting or PrinterStopped
	// Reason is why the printer is stopped or needs attention, as the
	// spooler says it (CUPS's state message or reasons; Windows's status
	// flags in Spanish); "" when there is nothing to say.
	Reason    string
	Accepting bool // takes new jobs
	Default   bool // the spooler's default printer
}

// Printer states of SystemPrinter.
const (
	PrinterIdle     = "idle"
	PrinterPrinting = "printing"
	PrinterStopped  = "stopped"
)

// SystemPrinters lists the machine's printers with their state: the queues
// of the CUPS server (BackendCUPS) or, on Windows, the spooler's printers
// (BackendWindows). It returns which spooler was asked, and EUNAVAILABLE
// when it cannot be reached.
func (m *Manager) SystemPrinters(ctx context.Context) (Backend, []SystemPrinter, error) {
	if m.cfg.RawQueues == BackendWindows {
		list, err := windowsPrinters(ctx)
		return BackendWindows, list, err
	}
	queues, err := m.cups.Queues(ctx)
	if err != nil {
		return BackendCUPS, nil, err
	}
	out := make([]SystemPrinter, 0, len(queues))
	for _, q := range queues {
		out = append(out, q.system())
	}
	return BackendCUPS, out, nil
}

// system maps a CUPS queue onto a SystemPrinter: IPP's "processing" is
// printing; the reason is the state message, else the state reasons.
func (q Queue) system() SystemPrinter {
	state := q.State
	switch state {
	case "processing":
		state = PrinterPrinting
	case "":
		state = PrinterIdle
	}
	return SystemPrinter{Name: q.Name, Description: q.Info, Location: q.Location, Model: q.Model, State: state,
		Reason: firstNonEmpty(q.Reason, strings.Join(q.Reasons, ", ")), Accepting: q.Accepting, Default: q.Default}
}
