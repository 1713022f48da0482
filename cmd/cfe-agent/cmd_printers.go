package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/cfe-agent/cfe-agent/app"
	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/printer"
	"github.com/cfe-agent/cfe-agent/profiles"
)

func newPrintersCommand(opts *app.Options) *cobra.Command {
	return &cobra.Command{
		Use:   "printers",
		Short: "Lista las impresoras del perfil activo y las del equipo (CUPS o Windows) con su estado",
		Long: "Lista las impresoras configuradas en el perfil (alias, tipo, destino, copias) y las del equipo: " +
			"las colas del servidor CUPS (el que indica CUPS_SERVER, o el local) o, en Windows, las del spooler, " +
			"con su estado; POST /pdf acepta como impresora un alias o el nombre de una de ellas. " +
			"GET /printers da lo mismo en JSON.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dataDir, cfg, _, err := app.LoadConfig(*opts)
			if err != nil {
				return err
			}
			p, ok := cfg.ActiveProfile()
			if !ok {
				return cfe.Errorf(cfe.ENOTFOUND, "el perfil %q no existe", cfg.Active)
			}
			p = p.Resolve(dataDir)
			m, err := app.PrinterManager(p)
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 2, 4, 2, ' ', 0)
			fmt.Fprintf(w, "Impresoras del perfil %s:\n", cfg.Active)
			if len(p.Printers) == 0 {
				fmt.Fprintln(w, "  (ninguna)")
			} else {
				fmt.Fprintln(w, "  ALIAS\tTIPO\tDESTINO\tCOPIAS\t")
			}
			for _, alias := range slices.Sorted(maps.Keys(p.Printers)) {
				pr := p.Printers[alias]
				dest := pr.Queue
				switch pr.Backend {
				case profiles.BackendDir:
					dest = pr.Dir
				case profiles.BackendTCP:
					dest = pr.Address
				case profiles.BackendDevice:
					dest = pr.Device
				}
				if pr.Protocol == profiles.ProtocolESCPOS {
					dest += " (ESC/POS)"
				}
				mark := ""
				if strings.EqualFold(alias, p.DefaultPrinter) {
					mark = "(predeterminada)"
				}
				fmt.Fprintf(w, "  %s\t%s\t%s\t%s\t%s\n", alias, pr.Backend, dest, copiesText(pr), mark)
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), 5*time.Second)
			defer cancel()
			source, system, err := m.SystemPrinters(ctx)
			title := "Impresoras del equipo (CUPS)"
			if source == printer.BackendWindows {
				title = "Impresoras del equipo (Windows)"
			}
			switch {
			case err != nil:
				fmt.Fprintf(w, "%s: %s\n", title, describe(err))
			case len(system) == 0:
				fmt.Fprintf(w, "%s: ninguna\n", title)
			default:
				fmt.Fprintf(w, "%s:\n", title)
				fmt.Fprintln(w, "  NOMBRE\tESTADO\tACEPTA\tDESCRIPCIÓN\t")
				for _, q := range system {
					state := printerStates[q.State]
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
			}
			return w.Flush()
		},
	}
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

// printerStates names a system printer's state in Spanish.
var printerStates = map[string]string{printer.PrinterIdle: "inactiva", printer.PrinterPrinting: "imprimiendo",
	printer.PrinterStopped: "detenida"}
