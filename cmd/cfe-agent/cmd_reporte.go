package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/cfe-agent/cfe-agent/app"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// The daily report's commands (issue 31, docs/reporte-diario.md): reporte,
// numeros anular, cotizaciones. Each works with the agent stopped (it opens
// the store) or running (through the agent: POST /reporte-diario).

func newReportCommand(opts *app.Options) *cobra.Command {
	var (
		fecha string
		seq   int
		out   string
	)
	cmd := &cobra.Command{
		Use:   "reporte --fecha AAAA-MM-DD [--sec-envio N] [-o ARCHIVO]",
		Short: "Escribe el reporte diario firmado de un día (también con el agente en ejecución)",
		Long: "Arma el reporte diario de DGI (Reporte Diario de CFE) del día indicado con los CFE firmados ese día\n" +
			"(la fecha de firma, no la de emisión), los números anulados ese día (saltados, anulados por el técnico,\n" +
			"rechazados por DGI) y las cotizaciones del BCU guardadas con «cfe-agent cotizaciones», lo firma con el\n" +
			"certificado de la empresa y lo escribe en ARCHIVO (si no se indica: Rep_RUC_AAAAMMDD_NN.xml en la\n" +
			"carpeta actual). Un día sin comprobantes da un reporte válido de cero comprobantes. Imprime un resumen.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if fecha == "" {
				return fmt.Errorf("indique el día con --fecha AAAA-MM-DD")
			}
			file, summary, err := app.WriteDailyReport(cmd.Context(), *opts, fecha, seq, out, cliLogger())
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "reporte diario firmado escrito en %s\n%s\n", file, summary)
			return nil
		},
	}
	cmd.Flags().StringVar(&fecha, "fecha", "", "día del reporte, `AAAA-MM-DD` (el de la firma de los CFE, en Montevideo)")
	cmd.Flags().IntVar(&seq, "sec-envio", 1, "secuencia de envío `N` (1 el primer envío del día; una corrección lleva la anterior + 1)")
	cmd.Flags().StringVarP(&out, "output", "o", "", "`ARCHIVO` donde escribir el reporte")
	return cmd
}

func newNumbersCommand(opts *app.Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "numeros",
		Short: "Números de CFE: anular números sin usar",
		Args:  cobra.NoArgs,
	}
	var motivo string
	annul := &cobra.Command{
		Use:   "anular TIPO:SERIE:DESDE-HASTA --motivo TEXTO",
		Short: "Anula números sin usar de una serie (también con el agente en ejecución); el reporte diario los informa",
		Long: "Anula los números DESDE a HASTA (o uno solo: TIPO:SERIE:NUMERO) del tipo de CFE y la serie indicados:\n" +
			"el agente no los firmará nunca y el reporte diario de hoy los informa como anulados. Deben ser números\n" +
			"sin usar (posteriores al último firmado), dentro de un rango CAE cargado y no anulados antes; si no, no\n" +
			"cambia nada. Ejemplo: cfe-agent numeros anular 101:A:120-150 --motivo \"rollo de papel dañado\".",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			req, err := app.ParseAnnulArg(args[0])
			if err != nil {
				return err
			}
			req.Motivo = motivo
			res, err := app.RunDailyReport(cmd.Context(), *opts, req, cliLogger())
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), res.Resumen)
			return nil
		},
	}
	annul.Flags().StringVar(&motivo, "motivo", "", "`TEXTO`: por qué se anulan (obligatorio)")
	cmd.AddCommand(annul)
	return cmd
}

func newRatesCommand(opts *app.Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cotizaciones",
		Short: "Cotizaciones del BCU para el reporte diario: importar, fijar, listar",
		Long: "El reporte diario convierte a pesos los CFE en moneda extranjera a la cotización interbancaria comprador\n" +
			"billete del BCU al cierre del día anterior a la operación (la del último día con cotización, hasta 10\n" +
			"días antes). Cada cotización guarda de dónde vino. Ver docs/reporte-diario.md.",
		Args: cobra.NoArgs,
	}
	var archivo string
	imp := &cobra.Command{
		Use:   "importar --archivo ARCHIVO",
		Short: "Importa cotizaciones de un archivo CSV: fecha,moneda,valor (una por línea)",
		Long: "Una cotización por línea: fecha,moneda,valor. fecha es el día del cierre del BCU (AAAA-MM-DD o\n" +
			"DD/MM/AAAA), moneda el código ISO 4217 (USD, EUR, ...), valor los pesos por unidad. Con coma decimal,\n" +
			"los campos van separados por punto y coma (2026-03-13;USD;39,812). Se omiten una primera línea de\n" +
			"títulos, las líneas vacías y las que empiezan con #.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if archivo == "" {
				return fmt.Errorf("indique el archivo con --archivo")
			}
			f, err := os.Open(archivo)
			if err != nil {
				return fmt.Errorf("no se puede leer %s: %w", archivo, app.UnwrapPathError(err))
			}
			defer f.Close()
			quotes, err := app.ReadRatesCSV(f, filepath.Base(archivo))
			if err != nil {
				return err
			}
			res, err := app.RunDailyReport(cmd.Context(), *opts, apitype.DailyReportRequest{Accion: "fijar_cotizaciones", Cotizaciones: quotes}, cliLogger())
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), res.Resumen)
			return nil
		},
	}
	imp.Flags().StringVar(&archivo, "archivo", "", "`ARCHIVO` CSV de cotizaciones")
	var q apitype.RateQuote
	set := &cobra.Command{
		Use:   "fijar --fecha AAAA-MM-DD --moneda USD --valor V",
		Short: "Guarda una cotización del BCU escrita por el técnico",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if q.Fecha == "" || q.Moneda == "" || q.Valor == "" {
				return fmt.Errorf("indique --fecha, --moneda y --valor")
			}
			q.Origen = "ingresada por el técnico"
			res, err := app.RunDailyReport(cmd.Context(), *opts, apitype.DailyReportRequest{Accion: "fijar_cotizaciones",
				Cotizaciones: []apitype.RateQuote{q}}, cliLogger())
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), res.Resumen)
			return nil
		},
	}
	set.Flags().StringVar(&q.Fecha, "fecha", "", "día del cierre del BCU, `AAAA-MM-DD`")
	set.Flags().StringVar(&q.Moneda, "moneda", "", "código ISO 4217 de la `MONEDA` (USD, EUR, ...)")
	set.Flags().StringVar(&q.Valor, "valor", "", "pesos por unidad, `V` (por ejemplo 39.812)")
	list := &cobra.Command{
		Use:   "listar",
		Short: "Lista las cotizaciones guardadas y de dónde vino cada una",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			res, err := app.RunDailyReport(cmd.Context(), *opts, apitype.DailyReportRequest{Accion: "cotizaciones"}, cliLogger())
			if err != nil {
				return err
			}
			if len(res.Cotizaciones) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "no hay cotizaciones guardadas")
			}
			for _, c := range res.Cotizaciones {
				fmt.Fprintf(cmd.OutOrStdout(), "%s %s %s  (%s)\n", c.Fecha, c.Moneda, c.Valor, c.Origen)
			}
			return nil
		},
	}
	cmd.AddCommand(imp, set, list)
	return cmd
}
