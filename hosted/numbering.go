package hosted

import (
	"cmp"
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
	// CodSeguridad is the CFE's security code: the first six characters of
	// its signature's DigestValue (interface §2.3 names the field).
	CodSeguridad string `json:"codSeguridad"`
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

// searchWindow is the first span, in days, LastNumbers searches back from
// today; each further span is twice as long.
const searchWindow = 7

// LastNumbers asks the service for the highest number it holds in each of
// ranges (CFEs the agent delivered, and any the service issued itself from
// the same CAE), by (type, serie), sorted by type and serie. Within a serie
// numbers grow with time, so it searches back from today in growing spans of
// signing dates and stops, for each serie, at the first span holding one of
// its numbers, or at the authorization date of its oldest range. The first
// span (the last week) is asked for every type at once, which finds the
// series in daily use; series still missing are then asked type by type, so
// that no answer carries months of another type's CFEs. A serie the service
// holds no number of is absent from the answer. Searching starts one day
// after today so that a clock a little behind the service's misses nothing.
//
// Errors: those of Search; nothing is returned unless the search completed.
func (c *Client) LastNumbers(ctx context.Context, ranges []cfe.CAERange, today cfe.Date) ([]cfe.LastNumber, error) {
	open := map[seq]bool{}            // series not found yet
	oldest := map[cfe.Type]cfe.Date{} // per type: the earliest authorization date
	for _, r := range ranges {
		open[seq{r.Type, r.Serie}] = true
		from := r.Autorizado
		if from.IsZero() {
			from = today.AddDays(-3 * 366) // no authorization date: CAE ranges are valid for up to about two years
		}
		if o, ok := oldest[r.Type]; !ok || from.Before(o) {
			oldest[r.Type] = from
		}
	}
	var out []cfe.LastNumber
	// search asks one span for type t (0: every type) and records the series
	// it finds.
	search := func(t cfe.Type, desde, hasta cfe.Date) error {
		found, err := c.Search(ctx, t, desde, hasta)
		if err != nil {
			return err
		}
		last := map[seq]int64{}
		for _, f := range found {
			k := seq{cfe.Type(f.TipoCfe), f.Serie}
			if open[k] && (t == 0 || k.t == t) && inRanges(ranges, k.t, k.serie, f.Nro) {
				last[k] = max(last[k], f.Nro)
			}
		}
		for k, n := range last {
			out = append(out, cfe.LastNumber{Type: k.t, Serie: k.serie, Last: n})
			delete(open, k)
		}
		return nil
	}
	earliest := today
	for _, o := range oldest {
		if o.Before(earliest) {
			earliest = o
		}
	}
	hasta := today.AddDays(1)
	first := hasta.AddDays(-searchWindow + 1)
	if first.Before(earliest) {
		first = earliest
	}
	if len(open) > 0 {
		if err := search(0, first, hasta); err != nil {
			return nil, err
		}
	}
	for _, t := range slices.Sorted(maps.Keys(oldest)) {
		hasta, span := first.AddDays(-1), 2*searchWindow
		for hasOpen(open, t) && !hasta.Before(oldest[t]) {
			desde := hasta.AddDays(-span + 1)
			if desde.Before(oldest[t]) {
				desde = oldest[t]
			}
			if err := search(t, desde, hasta); err != nil {
				return nil, err
			}
			hasta, span = desde.AddDays(-1), span*2
		}
	}
	slices.SortFunc(out, func(a, b cfe.LastNumber) int {
		return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(a.Serie, b.Serie))
	})
	return out, nil
}

// seq is one (type, serie) of LastNumbers.
type seq struct {
	t     cfe.Type
	serie string
}

// hasOpen reports whether a serie of type t is still in open.
func hasOpen(open map[seq]bool, t cfe.Type) bool {
	for k := range open {
		if k.t == t {
			return true
		}
	}
	return false
}

func inRanges(rs []cfe.CAERange, t cfe.Type, serie string, n int64) bool {
	for _, r := range rs {
		if r.Type == t && r.Serie == serie && r.DNro <= n && n <= r.HNro {
			return true
		}
	}
	return false
}
