package main

import (
	"strconv"

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
			imported, err := app.ImportCAEFiles(cmd.Context(), *opts, args, cliLogger())
			for _, c := range imported {
				c.Write(cmd.OutOrStdout())
			}
			return err
		},
	}, &cobra.Command{
		Use:   "list",
		Short: "Lista los rangos CAE del perfil activo con su uso y vencimiento",
		Long: "Lista los rangos CAE del perfil activo con su uso y vencimiento. Con el agente en ejecución " +
			"(que tiene abierto el archivo de datos) los lee de su módulo local; si no, abre el archivo.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rows, live, err := app.CAERows(cmd.Context(), *opts, cliLogger())
			if live != nil {
				live.Note(cmd.ErrOrStderr())
			}
			if err != nil {
				return err
			}
			return app.WriteCAERows(cmd.OutOrStdout(), rows)
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
			u, err := app.MarkUsedElsewhere(cmd.Context(), *opts, cfe.Type(t), args[1], upTo, reason, cliLogger())
			if err != nil {
				return err
			}
			u.Write(cmd.OutOrStdout())
			return nil
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "qué sistema usó los números (obligatorio; queda en la auditoría)")
	return cmd
}
