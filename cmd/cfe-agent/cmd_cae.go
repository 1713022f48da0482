package main

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/cfe-agent/cfe-agent/cfe"
)

func newCAECommand(opts *globalOptions) *cobra.Command {
	cmd := &cobra.Command{Use: "cae", Short: "Rangos de numeración autorizados por DGI (CAE)"}
	cmd.AddCommand(&cobra.Command{
		Use:   "import FILE.xml...",
		Short: "Importa archivos CAE firmados por DGI al perfil activo",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := openAgent(cmd.Context(), *opts, cliLogger())
			if err != nil {
				return err
			}
			defer a.Close()
			today := cfe.DateOf(time.Now().In(cfe.Montevideo))
			for _, f := range args {
				r, err := a.importCAE(cmd.Context(), f, today)
				if err != nil {
					return fmt.Errorf("%s: %w", f, err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "importado %s: %s serie %s, números %d a %d, CAE %s, vence %s\n",
					f, r.Type.Name(), r.Serie, r.DNro, r.HNro, r.CAEID, r.Vencimiento)
			}
			return nil
		},
	}, &cobra.Command{
		Use:   "list",
		Short: "Lista los rangos CAE del perfil activo con su uso y vencimiento",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			a, err := openAgent(cmd.Context(), *opts, cliLogger())
			if err != nil {
				return err
			}
			defer a.Close()
			st, err := a.db.RangeStatus(cmd.Context(), cfe.DateOf(time.Now().In(cfe.Montevideo)))
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 2, 4, 2, ' ', 0)
			fmt.Fprintln(w, "TIPO\tSERIE\tDESDE\tHASTA\tUSADOS\tRESTAN\tVENCE\tORIGEN\tAVISO")
			for _, s := range st {
				fmt.Fprintf(w, "%d\t%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\n", s.Range.Type, s.Range.Serie, s.Range.DNro,
					s.Range.HNro, s.Used, s.Remaining, s.Range.Vencimiento, s.Range.Source, rangeWarning(s.Expired, s.NearlyUsedUp, s.NearExpiry))
			}
			return w.Flush()
		},
	})
	return cmd
}

func rangeWarning(expired, nearlyUsedUp, nearExpiry bool) string {
	switch {
	case expired:
		return "vencido"
	case nearlyUsedUp && nearExpiry:
		return "por agotarse y por vencer"
	case nearlyUsedUp:
		return "por agotarse"
	case nearExpiry:
		return "por vencer"
	}
	return ""
}
