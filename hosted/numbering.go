package hosted

import (
	"context"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// IssuedSummary is one CFE in the answer of GET /api/v1/cfeemitido/buscar
// (the fields the agent reads).
type IssuedSummary struct {
	ID         int64     `json:"id"`
	UUID       string    `json:"uuid"`
	TipoCfe    int       `json:"tipoCfe"`
	Serie      string    `json:"serie"`
	Nro        int64     `json:"nro"`
	FechaFirma time.Time `json:"fechaFirma"`
	Origen     string    `json:"origen"`
}

// Search lists the company's CFEs of type t signed from desde to hasta,
// inclusive (GET /api/v1/cfeemitido/buscar, interface §4.3; tipoFiltro is
// the type code, the dates YYYY-MM-DD).
//
// Errors: EINVALID when the service refuses a parameter; EUNAUTHORIZED;
// EFORBIDDEN; EUNAVAILABLE.
func (c *Client) Search(ctx context.Context, t cfe.Type, desde, hasta cfe.Date) ([]IssuedSummary, error) {
	if c.Auth() == AuthNone {
		return nil, errNoCredentials
	}
	q := url.Values{"tipoFiltro": {strconv.Itoa(int(t))}, "fechaFirmaDesde": {desde.String()}, "fechaFirmaHasta": {hasta.String()}}
	var out []IssuedSummary
	err := c.do(ctx, &request{op: "hosted.Search", method: http.MethodGet, path: "/api/v1/cfeemitido/buscar", query: q, retry: true}, &out)
	return out, err
}

// LastNumber is the highest number of one (type, serie) the service holds.
type LastNumber struct {
	Type  cfe.Type
	Serie string
	Last  int64
}

// searchWindow is the first span LastNumbers searches back from today;
// each further span is twice as long.
const searchWindow = 7

// LastNumbers asks the service for the highest number it holds in each of
// ranges (CFEs the agent delivered, and any the service issued itself from
// the same CAE), by (type, serie). Within a serie numbers grow with time, so
// it searches back from today in growing spans of signing dates and stops,
// for each serie, at the first span holding one of its numbers, or at the
// authorization date of its oldest range. A serie the service holds no
// number of is absent from the answer. Searching starts one day after today
// so that a clock a little behind the service's misses nothing.
//
// Errors: those of Search; nothing is returned unless every type was asked.
func (c *Client) LastNumbers(ctx context.Context, ranges []cfe.CAERange, today cfe.Date) ([]LastNumber, error) {
	byType := map[cfe.Type][]cfe.CAERange{}
	for _, r := range ranges {
		byType[r.Type] = append(byType[r.Type], r)
	}
	var out []LastNumber
	for _, t := range slices.Sorted(maps.Keys(byType)) {
		rs := byType[t]
		oldest := today
		open := map[string]bool{} // series not found yet
		for _, r := range rs {
			open[r.Serie] = true
			from := r.Autorizado
			if from.IsZero() {
				from = today.AddDays(-3 * 366) // no authorization date: CAE ranges are valid for up to about two years
			}
			if from.Before(oldest) {
				oldest = from
			}
		}
		hasta, span := today.AddDays(1), searchWindow
		for len(open) > 0 && !hasta.Before(oldest) {
			desde := hasta.AddDays(-span + 1)
			if desde.Before(oldest) {
				desde = oldest
			}
			found, err := c.Search(ctx, t, desde, hasta)
			if err != nil {
				return nil, err
			}
			last := map[string]int64{}
			for _, f := range found {
				if cfe.Type(f.TipoCfe) != t || !open[f.Serie] || !inRanges(rs, f.Serie, f.Nro) {
					continue
				}
				last[f.Serie] = max(last[f.Serie], f.Nro)
			}
			for serie, n := range last {
				out = append(out, LastNumber{Type: t, Serie: serie, Last: n})
				delete(open, serie)
			}
			hasta, span = desde.AddDays(-1), span*2
		}
	}
	return out, nil
}

func inRanges(rs []cfe.CAERange, serie string, n int64) bool {
	for _, r := range rs {
		if r.Serie == serie && r.DNro <= n && n <= r.HNro {
			return true
		}
	}
	return false
}
