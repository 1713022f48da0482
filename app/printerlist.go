package app

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/printer"
	"github.com/cfe-agent/cfe-agent/profiles"
)

// PrinterListing is what "cfe-agent printers" shows: the active profile's
// printers and the machine's (the CUPS server's queues, or the Windows
// spooler's printers) with their state.
type PrinterListing struct {
	ProfileName string
	Profile     profiles.Profile // resolved
	Source      printer.Backend  // the spooler asked
	System      []printer.SystemPrinter
	SystemErr   error // why the spooler could not be asked
}

// ListPrinters lists the active profile's printers and asks the machine's
// spooler for its own (at most SystemPrintersTimeout).
func ListPrinters(ctx context.Context, opts Options) (*PrinterListing, error) {
	_, cfg, p, err := ActiveProfile(opts)
	if err != nil {
		return nil, err
	}
	m, err := PrinterManager(p)
	if err != nil {
		return nil, err
	}
	l := &PrinterListing{ProfileName: cfg.Active, Profile: p}
	ctx, cancel := context.WithTimeout(ctx, SystemPrintersTimeout)
	defer cancel()
	l.Source, l.System, l.SystemErr = m.SystemPrinters(ctx)
	return l, nil
}

// PrinterStates names a system printer's state in Spanish.
var PrinterStates = map[string]string{printer.PrinterIdle: "inactiva", printer.PrinterPrinting: "imprimiendo",
	printer.PrinterStopped: "detenida"}

// Write writes the listing as two tables.
func (l *PrinterListing) Write(out io.Writer) error {
	w := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	p := l.Profile
	fmt.Fprintf(w, "Impresoras del perfil %s:\n", l.ProfileName)
	if len(p.Printers) == 0 {
		fmt.Fprintln(w, "  (ninguna)")
	} else {
		fmt.Fprintln(w, "  ALIAS\tTIPO\tDESTINO\tCOPIAS\t")
	}
	for _, alias := range slices.Sorted(maps.Keys(p.Printers)) {
		pr := p.Printers[alias]
		dest := printerTarget(pr)
		if pr.Protocol == profiles.ProtocolESCPOS {
			dest += " (ESC/POS)"
		}
		mark := ""
		if strings.EqualFold(alias, p.DefaultPrinter) {
			mark = "(predeterminada)"
		}
		fmt.Fprintf(w, "  %s\t%s\t%s\t%s\t%s\n", alias, pr.Backend, dest, copiesText(pr), mark)
	}
	title := "Impresoras del equipo (CUPS)"
	if l.Source == printer.BackendWindows {
		title = "Impresoras del equipo (Windows)"
	}
	switch {
	case l.SystemErr != nil:
		fmt.Fprintf(w, "%s: %s\n", title, cfe.Describe(l.SystemErr))
	case len(l.System) == 0:
		fmt.Fprintf(w, "%s: ninguna\n", title)
	default:
		fmt.Fprintf(w, "%s:\n", title)
		fmt.Fprintln(w, "  NOMBRE\tESTADO\tACEPTA\tDESCRIPCIÓN\t")
		for _, q := range l.System {
			writeSystemPrinter(w, q)
		}
	}
	return w.Flush()
}

// writeSystemPrinter writes one line of the machine's printers.
func writeSystemPrinter(w io.Writer, q printer.SystemPrinter) {
	state := PrinterStates[q.State]
	if q.Reason != "" {
		state += " (" + q.Reason + ")"
	}
	accepts := "sí"
	if !q.Accepting {
		accepts = "no"
	}
	mark := ""
	if q.Default {
		mark = "(predeterminada)"
	}
	fmt.Fprintf(w, "  %s\t%s\t%s\t%s\t%s\n", q.Name, state, accepts, q.Description, mark)
}

// copiesText describes a printer's copies: "1", or "2; 111: 3" for a
// default and the types that differ.
func copiesText(pr profiles.Printer) string {
	s := fmt.Sprint(max(pr.DefaultCopies, 1))
	for _, t := range slices.Sorted(maps.Keys(pr.Copies)) {
		s += fmt.Sprintf("; %d: %d", int(t), pr.Copies[t])
	}
	return s
}
