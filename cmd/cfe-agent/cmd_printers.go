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

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/profiles"
)

func newPrintersCommand(opts *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "printers",
		Short: "Lista las impresoras del perfil activo y las colas de CUPS de este equipo",
		Long: "Lista las impresoras configuradas en el perfil (alias, tipo, destino, copias) y las colas que " +
			"ofrece el servidor CUPS local; POST /pdf acepta como impresora un alias o el nombre de una cola.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			dataDir, cfg, _, err := loadConfig(*opts)
			if err != nil {
				return err
			}
			p, ok := cfg.ActiveProfile()
			if !ok {
				return cfe.Errorf(cfe.ENOTFOUND, "el perfil %q no existe", cfg.Active)
			}
			p = p.Resolve(dataDir)
			m, err := printerManager(p)
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
			queues, err := m.Discover(ctx)
			switch {
			case err != nil:
				fmt.Fprintf(w, "Colas de CUPS: %s\n", describe(err))
			case len(queues) == 0:
				fmt.Fprintln(w, "Colas de CUPS: ninguna")
			default:
				fmt.Fprintln(w, "Colas de CUPS:")
				fmt.Fprintln(w, "  COLA\tESTADO\tACEPTA\tDESCRIPCIÓN\t")
				for _, q := range queues {
					state := q.State
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
					fmt.Fprintf(w, "  %s\t%s\t%s\t%s\t%s\n", q.Name, state, accepts, q.Info, mark)
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
