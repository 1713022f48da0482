package hosted

import (
	"cmp"
	"context"
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

// Search lists the company's CFEs of type t (every type when t is 0) signed
// from desde to hasta, inclusive (GET /api/v1/cfeemitido/buscar, interface
// §4.3; tipoFiltro is the type code, 0 for every type, as the sandbox
// documents it; the dates are YYYY-MM-DD).
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

// searchWindow is the first span, in days, LastNumbers searches back from
// today; each further span is twice as long.
const searchWindow = 7

// LastNumbers asks the service for the highest number it holds in each of
// ranges (CFEs the agent delivered, and any the service issued itself from
// the same CAE), by (type, serie), in the order of the ranges' types and
// series. Within a serie numbers grow with time, so it searches back from
// today, every type at once, in growing spans of signing dates, and stops
// once every serie was found or the span passes the authorization date of
// the oldest range. A serie the service holds no number of is absent from
// the answer. Searching starts one day after today so that a clock a little
// behind the service's misses nothing.
//
// Errors: those of Search; nothing is returned unless the search completed.
func (c *Client) LastNumbers(ctx context.Context, ranges []cfe.CAERange, today cfe.Date) ([]LastNumber, error) {
	type seq struct {
		t     cfe.Type
		serie string
	}
	open := map[seq]bool{} // series not found yet
	oldest := today
	for _, r := range ranges {
		open[seq{r.Type, r.Serie}] = true
		from := r.Autorizado
		if from.IsZero() {
			from = today.AddDays(-3 * 366) // no authorization date: CAE ranges are valid for up to about two years
		}
		if from.Before(oldest) {
			oldest = from
		}
	}
	var out []LastNumber
	hasta, span := today.AddDays(1), searchWindow
	for len(open) > 0 && !hasta.Before(oldest) {
		desde := hasta.AddDays(-span + 1)
		if desde.Before(oldest) {
			desde = oldest
		}
		found, err := c.Search(ctx, 0, desde, hasta)
		if err != nil {
			return nil, err
		}
		last := map[seq]int64{}
		for _, f := range found {
			k := seq{cfe.Type(f.TipoCfe), f.Serie}
			if open[k] && inRanges(ranges, k.t, k.serie, f.Nro) {
				last[k] = max(last[k], f.Nro)
			}
		}
		for k, n := range last {
			out = append(out, LastNumber{Type: k.t, Serie: k.serie, Last: n})
			delete(open, k)
		}
		hasta, span = desde.AddDays(-1), span*2
	}
	slices.SortFunc(out, func(a, b LastNumber) int {
		return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(a.Serie, b.Serie))
	})
	return out, nil
}

func inRanges(rs []cfe.CAERange, t cfe.Type, serie string, n int64) bool {
	for _, r := range rs {
		if r.Type == t && r.Serie == serie && r.DNro <= n && n <= r.HNro {
			return true
		}
	}
	return false
}
