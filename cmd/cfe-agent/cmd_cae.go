package main

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/cfe-agent/cfe-agent/app"
	"github.com/cfe-agent/cfe-agent/cfe"
)

func newCAECommand(opts *app.Options) *cobra.Command {
	cmd := &cobra.Command{Use: "cae", Short: "Rangos de numeración autorizados por DGI (CAE)"}
	cmd.AddCommand(&cobra.Command{
		Use:   "import FILE.xml...",
		Short: "Importa archivos CAE firmados por DGI al perfil activo",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := app.Open(cmd.Context(), *opts, cliLogger())
			if err != nil {
				return err
			}
			defer a.Close()
			today := cfe.DateOf(time.Now().In(cfe.Montevideo))
			for _, f := range args {
				r, err := a.ImportCAE(cmd.Context(), f, today)
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
		Long: "Lista los rangos CAE del perfil activo con su uso y vencimiento. Con el agente en ejecución " +
			"(que tiene abierto el archivo de datos) los lee de su módulo local; si no, abre el archivo.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rows, err := caeRows(cmd, *opts)
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 2, 4, 2, ' ', 0)
			fmt.Fprintln(w, "TIPO\tSERIE\tDESDE\tHASTA\tUSADOS\tRESTAN\tVENCE\tORIGEN\tAVISO")
			for _, r := range rows {
				fmt.Fprintf(w, "%d\t%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\n", r.typ, r.serie, r.desde, r.hasta, r.used,
					r.remaining, r.vence, r.origen, r.warning)
			}
			return w.Flush()
		},
	}, newCAEUsedElsewhereCommand(opts))
	return cmd
}

// newCAEUsedElsewhereCommand is "cae used-elsewhere": the migration step for a
// shop whose previous billing software (or another machine) already used the
// first numbers of a range.
func newCAEUsedElsewhereCommand(opts *app.Options) *cobra.Command {
	var reason string
	cmd := &cobra.Command{
		Use:   "used-elsewhere TIPO SERIE HASTA",
		Short: "Registra que otro sistema ya usó los números del rango hasta HASTA (antes de emitir con el agente)",
		Long: "Registra que otro sistema (el programa de facturación anterior u otra caja) ya usó los números\n" +
			"del tipo y la serie hasta HASTA, en el rango CAE que contiene HASTA: el agente sigue desde HASTA+1.\n" +
			"Se hace una vez, antes de que el agente firme en ese rango, y queda en el registro de auditoría.\n" +
			"Si la numeración está en espera (se perdió el archivo de datos y su diario de numeración), también\n" +
			"confirma la serie; HASTA 0 la confirma sin registrar nada (ningún número usado fuera del agente).",
		Args: cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := strconv.Atoi(args[0])
			if err != nil {
				return cfe.Errorf(cfe.EINVALID, "tipo: %q no es un número de tipo de CFE", args[0])
			}
			upTo, err := strconv.ParseInt(args[2], 10, 64)
			if err != nil {
				return cfe.Errorf(cfe.EINVALID, "hasta: %q no es un número", args[2])
			}
			a, err := app.Open(cmd.Context(), *opts, cliLogger())
			if err != nil {
				return err
			}
			defer a.Close()
			before := a.DB.LastNumber(cfe.Type(t), args[1])
			if err := a.DB.MarkUsedElsewhere(cmd.Context(), cfe.Type(t), args[1], upTo, reason); err != nil {
				return err
			}
			// The numbering witness may have raised it further (an older
			// copy of the data directory: docs/numbering.md).
			last := a.DB.LastNumber(cfe.Type(t), args[1])
			switch {
			case upTo == 0 && last == before:
				fmt.Fprintf(cmd.OutOrStdout(), "confirmado: ningún número de %s serie %s se usó fuera del agente\n", cfe.Type(t).Name(), args[1])
			case upTo == 0:
				fmt.Fprintf(cmd.OutOrStdout(), "confirmado: ningún número de %s serie %s se usó fuera del agente más allá de lo que registra el testigo de numeración de este equipo (hasta el %d); el agente sigue desde el %d\n",
					cfe.Type(t).Name(), args[1], last, last+1)
			default:
				fmt.Fprintf(cmd.OutOrStdout(), "registrado: %s serie %s usado por otro sistema hasta el número %d; el agente sigue desde el %d\n",
					cfe.Type(t).Name(), args[1], upTo, max(last, upTo)+1)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "qué sistema usó los números (obligatorio; queda en la auditoría)")
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

// caeRow is one line of cae list.
type caeRow struct {
	typ                           cfe.Type
	serie                         string
	desde, hasta, used, remaining int64
	vence                         cfe.Date
	origen, warning               string
}

// caeRows reads the ranges from the running agent's /state when there is
// one (it holds the store's lock), else from the store, in the same order:
// by type, serie and first number.
func caeRows(cmd *cobra.Command, opts app.Options) ([]caeRow, error) {
	var rows []caeRow
	live, err := app.OpenLive(cmd.Context(), opts)
	if err != nil {
		return nil, err
	}
	if live != nil {
		live.Note(cmd.ErrOrStderr())
		for _, t := range live.State.CAE {
			for _, r := range t.Ranges {
				rows = append(rows, caeRow{typ: t.TipoCFE, serie: r.Serie, desde: r.Desde, hasta: r.Hasta, used: r.Used,
					remaining: r.Remaining, vence: r.Vence, origen: r.Origen,
					warning: rangeWarning(r.Expired, r.NearlyUsedUp, r.NearExpiry)})
			}
		}
	} else {
		a, err := app.Open(cmd.Context(), opts, cliLogger())
		if err != nil {
			return nil, err
		}
		defer a.Close()
		st, err := a.DB.RangeStatus(cmd.Context(), cfe.DateOf(time.Now().In(cfe.Montevideo)))
		if err != nil {
			return nil, err
		}
		for _, s := range st {
			rows = append(rows, caeRow{typ: s.Range.Type, serie: s.Range.Serie, desde: s.Range.DNro, hasta: s.Range.HNro,
				used: s.Used, remaining: s.Remaining, vence: s.Range.Vencimiento, origen: s.Range.Source,
				warning: rangeWarning(s.Expired, s.NearlyUsedUp, s.NearExpiry)})
		}
	}
	slices.SortFunc(rows, func(a, b caeRow) int {
		return cmp.Or(cmp.Compare(a.typ, b.typ), cmp.Compare(a.serie, b.serie), cmp.Compare(a.desde, b.desde))
	})
	return rows, nil
}
