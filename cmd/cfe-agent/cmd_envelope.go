package main

import (
	"github.com/spf13/cobra"

	"github.com/cfe-agent/cfe-agent/app"
)

// newEnvelopeCommand is "envelope": DGI's envelope (sobre) of CFEs signed by
// this agent, for DGI or for an electronic receiver, from the local store.
func newEnvelopeCommand(opts *app.Options) *cobra.Command {
	var (
		req      app.EnvelopeRequest
		idEmisor int64
	)
	cmd := &cobra.Command{
		Use:   "envelope [--receptor RUC] [--uuid UUID]... [--desde AAAA-MM-DD] [--hasta AAAA-MM-DD] [--tipo TIPO] [-o ARCHIVO]",
		Short: "Genera el sobre de DGI (EnvioCFE) o el sobre para un receptor electrónico con CFE firmados por este agente",
		Long: "Genera un sobre de CFE con el formato de DGI a partir de los CFE guardados por el agente: sin --receptor, " +
			"el sobre para DGI (EnvioCFE, RUC receptor de DGI); con --receptor RUC, el sobre para esa empresa " +
			"(EnvioCFE_entreEmpresas, cada CFE con su adenda), solo con CFE dirigidos a ese RUC. " +
			"Los CFE se eligen por --uuid (se puede repetir) y/o por fecha de firma (--desde, --hasta, inclusive; " +
			"con una sola, ese día) y --tipo, que acota los elegidos por fecha; con --receptor, los elegidos por fecha " +
			"se limitan a los dirigidos a ese RUC. Cada CFE va tal como se firmó, byte a byte, y el certificado que los " +
			"firmó va en la carátula (DGI: un solo certificado por sobre; el sobre no lleva firma propia). " +
			"Un sobre admite hasta 250 CFE y 2 MB. --id-emisor es el número del envío (Idemisor, hasta 10 dígitos; " +
			"por defecto, la hora actual en segundos Unix, que crece con cada sobre). Sin -o, el archivo se llama " +
			"como pide DGI: Sob_RUC_AAAAMMDD_Idemisor.xml. El agente no debe estar en ejecución (usa su base de datos).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("id-emisor") {
				req.IdEmisor = &idEmisor
			}
			res, err := app.WriteEnvelope(cmd.Context(), *opts, req, cliLogger())
			if err != nil {
				return err
			}
			res.Write(cmd.OutOrStdout())
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&req.UUIDs, "uuid", nil, "`UUID` de un CFE a incluir (repítalo para varios)")
	cmd.Flags().StringVar(&req.From, "desde", "", "primera `FECHA` de firma (AAAA-MM-DD, hora de Montevideo)")
	cmd.Flags().StringVar(&req.To, "hasta", "", "última `FECHA` de firma (AAAA-MM-DD, hora de Montevideo), incluida")
	cmd.Flags().IntVar(&req.Tipo, "tipo", 0, "solo los CFE de este `TIPO` entre los elegidos por fecha (101, 111, …)")
	cmd.Flags().StringVar(&req.Receptor, "receptor", "", "`RUC` de la empresa receptora: escribe su sobre (EnvioCFE_entreEmpresas) en lugar del de DGI")
	cmd.Flags().Int64Var(&idEmisor, "id-emisor", 0, "`NÚMERO` del sobre (Idemisor, hasta 10 dígitos; si no se indica: la hora Unix en segundos)")
	cmd.Flags().StringVarP(&req.Out, "output", "o", "", "`ARCHIVO` a escribir (si no se indica: el nombre de DGI, Sob_RUC_AAAAMMDD_Idemisor.xml)")
	return cmd
}
