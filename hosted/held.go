package hosted

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// heldSpan is the span of signing days of each search Held makes: two
// weeks of a busy till (a few thousand CFEs) is one answer of well under
// maxResponseBytes.
const heldSpan = 14

// Held lists the CFEs the service holds in ranges (those the agent
// delivered, and any the service issued itself from the same CAE), so that
// a restore can compare a backup's CFEs with the service's under the same
// numbers (docs/numbering.md "Backups and restore"). A CFE of a range is
// signed after the range was authorized, so it searches, type by type, from
// the earliest authorization date of the type's ranges (three years back
// for a range without one, as LastNumbers) to the day after today, in spans
// of heldSpan days. A span whose answer cannot be read (larger than the
// client reads) is asked again in halves, down to one day.
//
// Errors: those of Search; nothing is returned unless every search
// completed.
func (c *Client) Held(ctx context.Context, ranges []cfe.CAERange, today cfe.Date) ([]IssuedSummary, error) {
	oldest := map[cfe.Type]cfe.Date{}
	for _, r := range ranges {
		from := r.Autorizado
		if from.IsZero() {
			from = today.AddDays(-3 * 366)
		}
		if o, ok := oldest[r.Type]; !ok || from.Before(o) {
			oldest[r.Type] = from
		}
	}
	until := today.AddDays(1)
	var out []IssuedSummary
	for _, t := range slices.Sorted(maps.Keys(oldest)) {
		for desde := oldest[t]; !desde.After(until); {
			hasta := desde.AddDays(heldSpan - 1)
			if hasta.After(until) {
				hasta = until
			}
			found, err := c.searchSplit(ctx, t, desde, hasta)
			if err != nil {
				return nil, err
			}
			for _, f := range found {
				if cfe.Type(f.TipoCfe) == t && inRanges(ranges, t, f.Serie, f.Nro) {
					out = append(out, f)
				}
			}
			desde = hasta.AddDays(1)
		}
	}
	return out, nil
}

// searchSplit is Search, asking again in two halves a span of more than a
// day whose answer could not be read: cut at maxResponseBytes, it is not
// whole JSON.
func (c *Client) searchSplit(ctx context.Context, t cfe.Type, desde, hasta cfe.Date) ([]IssuedSummary, error) {
	found, err := c.Search(ctx, t, desde, hasta)
	var syntax *json.SyntaxError
	if err == nil || !desde.Before(hasta) || !errors.As(err, &syntax) {
		return found, err
	}
	days := int(hasta.Time(time.UTC).Sub(desde.Time(time.UTC)) / (24 * time.Hour))
	mid := desde.AddDays(days / 2)
	first, err := c.searchSplit(ctx, t, desde, mid)
	if err != nil {
		return nil, err
	}
	second, err := c.searchSplit(ctx, t, mid.AddDays(1), hasta)
	if err != nil {
		return nil, err
	}
	return append(first, second...), nil
}
