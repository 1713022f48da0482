package main

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/cfe-agent/cfe-agent/app"
	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/signer"
)

// newEnvelopeCommand is "envelope": DGI's envelope (sobre) of CFEs signed by
// this agent, for DGI or for an electronic receiver, from the local store.
func newEnvelopeCommand(opts *app.Options) *cobra.Command {
	var (
		uuids    []string
		from, to string
		tipo     int
		receptor string
		idEmisor int64
		out      string
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
			kind := cfe.EnvelopeDGI
			rut := cfe.RUCDGI
			if receptor != "" {
				if !cfe.ValidRUC(receptor) {
					return cfe.Errorf(cfe.EINVALID, "--receptor: %q no es un RUC válido", receptor)
				}
				kind, rut = cfe.EnvelopeReceiver, receptor
			}
			sel, err := envelopeSelection(uuids, from, to, tipo)
			if err != nil {
				return err
			}
			now := time.Now()
			if !cmd.Flags().Changed("id-emisor") {
				idEmisor = now.Unix()
			}
			if idEmisor < 0 || idEmisor > cfe.MaxEnvelopeID {
				return cfe.Errorf(cfe.EINVALID, "--id-emisor: debe ser un número de 0 a %d", int64(cfe.MaxEnvelopeID))
			}
			a, err := app.Open(cmd.Context(), *opts, cliLogger())
			if err != nil {
				return err
			}
			defer a.Close()
			issued, err := sel.collect(cmd, a, kind, rut)
			if err != nil {
				return err
			}
			req := signer.EnvelopeRequest{Kind: kind, RutReceptor: rut, IdEmisor: idEmisor, Fecha: now}
			for _, c := range issued {
				ec := cfe.EnvelopeCFE{XML: c.XML}
				if kind == cfe.EnvelopeReceiver {
					ec.Adenda = c.Adenda
				}
				req.CFEs = append(req.CFEs, ec)
			}
			env, err := signer.PrepareEnvelope(req)
			if err != nil {
				return err
			}
			b, err := cfe.BuildEnvelope(env)
			if err != nil {
				return err
			}
			if out == "" {
				out = fmt.Sprintf("Sob_%s_%s_%d.xml", env.Caratula.RUCEmisor, now.In(cfe.Montevideo).Format("20060102"), idEmisor)
			}
			if err := os.WriteFile(out, b, 0o600); err != nil {
				return fmt.Errorf("no se puede escribir %s: %w", out, app.UnwrapPathError(err))
			}
			fmt.Fprintf(cmd.OutOrStdout(), "sobre %s para el RUC %s con %d CFE (Idemisor %d) escrito en %s\n",
				kind.Root(), rut, len(issued), idEmisor, out)
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&uuids, "uuid", nil, "`UUID` de un CFE a incluir (repítalo para varios)")
	cmd.Flags().StringVar(&from, "desde", "", "primera `FECHA` de firma (AAAA-MM-DD, hora de Montevideo)")
	cmd.Flags().StringVar(&to, "hasta", "", "última `FECHA` de firma (AAAA-MM-DD, hora de Montevideo), incluida")
	cmd.Flags().IntVar(&tipo, "tipo", 0, "solo los CFE de este `TIPO` entre los elegidos por fecha (101, 111, …)")
	cmd.Flags().StringVar(&receptor, "receptor", "", "`RUC` de la empresa receptora: escribe su sobre (EnvioCFE_entreEmpresas) en lugar del de DGI")
	cmd.Flags().Int64Var(&idEmisor, "id-emisor", 0, "`NÚMERO` del sobre (Idemisor, hasta 10 dígitos; si no se indica: la hora Unix en segundos)")
	cmd.Flags().StringVarP(&out, "output", "o", "", "`ARCHIVO` a escribir (si no se indica: el nombre de DGI, Sob_RUC_AAAAMMDD_Idemisor.xml)")
	return cmd
}

// envelopeSel is the CFEs the user asked for.
type envelopeSel struct {
	uuids    []string
	from, to cfe.Date // zero: no date selection
	tipo     cfe.Type
}

func envelopeSelection(uuids []string, from, to string, tipo int) (envelopeSel, error) {
	s := envelopeSel{uuids: uuids, tipo: cfe.Type(tipo)}
	if tipo != 0 && !s.tipo.Valid() {
		return s, cfe.Errorf(cfe.EINVALID, "--tipo: %d no es un tipo de CFE", tipo)
	}
	if from == "" {
		from = to
	}
	if to == "" {
		to = from
	}
	if from != "" {
		var err error
		if s.from, err = cfe.ParseDate(from); err != nil {
			return s, cfe.Errorf(cfe.EINVALID, "--desde: %q no es una fecha AAAA-MM-DD", from)
		}
		if s.to, err = cfe.ParseDate(to); err != nil {
			return s, cfe.Errorf(cfe.EINVALID, "--hasta: %q no es una fecha AAAA-MM-DD", to)
		}
		if s.to.Before(s.from) {
			return s, cfe.Errorf(cfe.EINVALID, "--hasta no puede ser anterior a --desde")
		}
	}
	if len(uuids) == 0 && s.from.IsZero() {
		return s, cfe.Errorf(cfe.EINVALID, "indique los CFE del sobre con --uuid o con --desde/--hasta")
	}
	if tipo != 0 && s.from.IsZero() {
		return s, cfe.Errorf(cfe.EINVALID, "--tipo acota los CFE elegidos por fecha: indique también --desde/--hasta")
	}
	return s, nil
}

// collect reads the selected CFEs from the store: the named uuids in order,
// then those signed in the date range (of the type, and addressed to the
// receiver for its envelope), without repeating one.
func (s envelopeSel) collect(cmd *cobra.Command, a *app.Agent, kind cfe.EnvelopeKind, rut string) ([]*cfe.Issued, error) {
	var out []*cfe.Issued
	seen := map[string]bool{}
	for _, u := range s.uuids {
		if seen[u] {
			continue
		}
		c, err := a.DB.FindByUUID(cmd.Context(), u)
		if err != nil {
			return nil, fmt.Errorf("--uuid %s: %w", u, err)
		}
		seen[u] = true
		out = append(out, c)
	}
	if !s.from.IsZero() {
		list, err := a.DB.ListByDate(cmd.Context(), s.from, s.to, math.MaxInt32)
		if err != nil {
			return nil, err
		}
		matched := 0
		for _, c := range list {
			if seen[c.UUID] || (s.tipo != 0 && c.Type != s.tipo) {
				continue
			}
			if kind == cfe.EnvelopeReceiver {
				if h, err := cfe.ReadCFEHead(c.XML); err != nil || !h.AddressedTo(rut) {
					continue
				}
			}
			seen[c.UUID] = true
			matched++
			out = append(out, c)
		}
		if matched == 0 && len(s.uuids) == 0 {
			what := "ningún CFE firmado del " + s.from.String() + " al " + s.to.String()
			if s.tipo != 0 {
				what += " de tipo " + strconv.Itoa(int(s.tipo))
			}
			if kind == cfe.EnvelopeReceiver {
				what += " dirigido al RUC " + rut
			}
			return nil, cfe.Errorf(cfe.ENOTFOUND, "%s en este agente", what)
		}
	}
	if len(out) > cfe.MaxEnvelopeCFEs {
		return nil, cfe.Errorf(cfe.EINVALID, "se eligieron %d CFE y un sobre admite hasta %d (DGI, Formato del Sobre): acote las fechas o el tipo",
			len(out), cfe.MaxEnvelopeCFEs)
	}
	return out, nil
}
