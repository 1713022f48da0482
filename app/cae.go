package app

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// The CAE ranges' use cases: "cfe-agent cae import", "cae list" and "cae
// used-elsewhere".

// ImportedCAE is a DGI CAE file imported into the store.
type ImportedCAE struct {
	File  string
	Range cfe.CAERange
}

// ImportCAEFiles checks each of DGI's CAE files (DGI's signature, the
// fields, the company's RUC) and stores its range in the active profile's
// store, in order; at the first that fails it stops, returning those
// imported before it and the error, which names the file.
func ImportCAEFiles(ctx context.Context, opts Options, files []string, log *slog.Logger) ([]ImportedCAE, error) {
	a, err := Open(ctx, opts, log)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	today := cfe.DateOf(time.Now().In(cfe.Montevideo))
	var out []ImportedCAE
	for _, f := range files {
		r, err := a.ImportCAE(ctx, f, today)
		if err != nil {
			return out, fmt.Errorf("%s: %w", f, err)
		}
		out = append(out, ImportedCAE{File: f, Range: r})
	}
	return out, nil
}

// Write writes the technician's line of an imported range.
func (c ImportedCAE) Write(w io.Writer) {
	r := c.Range
	fmt.Fprintf(w, "importado %s: %s serie %s, números %d a %d, CAE %s, vence %s\n",
		c.File, r.Type.Name(), r.Serie, r.DNro, r.HNro, r.CAEID, r.Vencimiento)
}

// CAERow is one range of "cae list".
type CAERow struct {
	Type                          cfe.Type
	Serie                         string
	Desde, Hasta, Used, Remaining int64
	Vence                         cfe.Date
	Origen, Warning               string
}

// CAERows lists the active profile's ranges with their use and expiry, by
// type, serie and first number: from the running agent's state report when
// there is one (live; it holds the store's lock), else from the store.
func CAERows(ctx context.Context, opts Options, log *slog.Logger) (rows []CAERow, live *Live, err error) {
	if live, err = OpenLive(ctx, opts); err != nil {
		return nil, nil, err
	}
	if live != nil {
		for _, t := range live.State.CAE {
			for _, r := range t.Ranges {
				rows = append(rows, CAERow{Type: t.TipoCFE, Serie: r.Serie, Desde: r.Desde, Hasta: r.Hasta, Used: r.Used,
					Remaining: r.Remaining, Vence: r.Vence, Origen: r.Origen,
					Warning: rangeWarning(r.Expired, r.NearlyUsedUp, r.NearExpiry)})
			}
		}
	} else {
		a, err := Open(ctx, opts, log)
		if err != nil {
			return nil, nil, err
		}
		defer a.Close()
		st, err := a.DB.RangeStatus(ctx, cfe.DateOf(time.Now().In(cfe.Montevideo)))
		if err != nil {
			return nil, nil, err
		}
		for _, s := range st {
			rows = append(rows, CAERow{Type: s.Range.Type, Serie: s.Range.Serie, Desde: s.Range.DNro, Hasta: s.Range.HNro,
				Used: s.Used, Remaining: s.Remaining, Vence: s.Range.Vencimiento, Origen: s.Range.Source,
				Warning: rangeWarning(s.Expired, s.NearlyUsedUp, s.NearExpiry)})
		}
	}
	slices.SortFunc(rows, func(a, b CAERow) int {
		return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(a.Serie, b.Serie), cmp.Compare(a.Desde, b.Desde))
	})
	return rows, live, nil
}

// WriteCAERows writes the ranges as a table.
func WriteCAERows(out io.Writer, rows []CAERow) error {
	w := tabwriter.NewWriter(out, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "TIPO\tSERIE\tDESDE\tHASTA\tUSADOS\tRESTAN\tVENCE\tORIGEN\tAVISO")
	for _, r := range rows {
		fmt.Fprintf(w, "%d\t%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\n", r.Type, r.Serie, r.Desde, r.Hasta, r.Used,
			r.Remaining, r.Vence, r.Origen, r.Warning)
	}
	return w.Flush()
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

// UsedElsewhere is what MarkUsedElsewhere recorded: the numbers of Type and
// Serie another system used up to UpTo; numbering goes on after Last (the
// numbering witness may have raised it above UpTo); Before was the last
// number before.
type UsedElsewhere struct {
	Type         cfe.Type
	Serie        string
	UpTo         int64
	Before, Last int64
}

// MarkUsedElsewhere records that another system (the previous billing
// software, another till) already used the numbers of typ and serie up to
// upTo, in the range holding upTo ("cfe-agent cae used-elsewhere"): the
// agent goes on after it. It also settles a held serie; upTo 0 settles it
// recording nothing.
func MarkUsedElsewhere(ctx context.Context, opts Options, typ cfe.Type, serie string, upTo int64, reason string, log *slog.Logger) (*UsedElsewhere, error) {
	a, err := Open(ctx, opts, log)
	if err != nil {
		return nil, err
	}
	defer a.Close()
	u := &UsedElsewhere{Type: typ, Serie: serie, UpTo: upTo, Before: a.DB.LastNumber(typ, serie)}
	if err := a.DB.MarkUsedElsewhere(ctx, typ, serie, upTo, reason); err != nil {
		return nil, err
	}
	// The numbering witness may have raised it further (an older copy of
	// the data directory: docs/numbering.md).
	u.Last = a.DB.LastNumber(typ, serie)
	return u, nil
}

// Write writes the technician's report of what was recorded.
func (u *UsedElsewhere) Write(w io.Writer) {
	name := u.Type.Name()
	switch {
	case u.UpTo == 0 && u.Last == u.Before:
		fmt.Fprintf(w, "confirmado: ningún número de %s serie %s se usó fuera del agente\n", name, u.Serie)
	case u.UpTo == 0:
		fmt.Fprintf(w, "confirmado: ningún número de %s serie %s se usó fuera del agente más allá de lo que registra el testigo de numeración de este equipo (hasta el %d); el agente sigue desde el %d\n",
			name, u.Serie, u.Last, u.Last+1)
	default:
		fmt.Fprintf(w, "registrado: %s serie %s usado por otro sistema hasta el número %d; el agente sigue desde el %d\n",
			name, u.Serie, u.UpTo, max(u.Last, u.UpTo)+1)
	}
}
