package store

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shopspring/decimal"
	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// The rate table of the daily report (REP §1): the BCU's closing quote
// (interbank, buyer, bill) of a foreign currency on a day, in pesos, as the
// technician imports or types it, each with where it came from. An
// operation on day d converts at the quote of the last day before d that
// has one (the close of the day before; on a Monday, Friday's), looking
// back at most RateLookBack days.

var bucketRates = []byte("rates")

// RateLookBack is how many days before an operation a quote is looked for.
const RateLookBack = 10

// Rate is one quote of the table.
type Rate struct {
	Currency string          // ISO 4217 (USD, EUR, ...)
	Day      cfe.Date        // the day of the BCU's close
	Value    decimal.Decimal // pesos per unit
	Source   string          // where it came from (a file, "ingresada por el técnico")
	At       time.Time       // when it was recorded
}

type rateRecord struct {
	Currency string          `json:"moneda"`
	Day      string          `json:"fecha"`
	Value    decimal.Decimal `json:"valor"`
	Source   string          `json:"origen"`
	At       time.Time       `json:"en"`
}

func rateKey(cur string, d cfe.Date) []byte { return []byte(cur + "/" + d.String()) }

// SetRates records quotes (replacing those of the same currency and day).
// All or none are written.
//
// Errors: EINVALID for a currency that is not three capital letters or is
// UYU, a zero day, a value that is not positive, or no source.
func (db *DB) SetRates(ctx context.Context, rates []Rate) error {
	const op = "store.SetRates"
	for i, r := range rates {
		what := fmt.Sprintf("cotización %d", i+1)
		switch {
		case len(r.Currency) != 3 || strings.ToUpper(r.Currency) != r.Currency || r.Currency == cfe.CurrencyUYU:
			return invalid(op, field("moneda", "%s: la moneda %q no es un código ISO 4217 de tres letras mayúsculas distinto de UYU", what, r.Currency))
		case r.Day.IsZero():
			return invalid(op, field("fecha", "%s: falta la fecha", what))
		case !r.Value.IsPositive():
			return invalid(op, field("valor", "%s: el valor %s de %s el %s debe ser mayor que cero", what, r.Value, r.Currency, r.Day))
		case strings.TrimSpace(r.Source) == "":
			return invalid(op, field("origen", "%s: falta de dónde viene", what))
		}
	}
	now := db.opts.Now()
	return db.update(ctx, op, func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketRates)
		if err != nil {
			return err
		}
		for _, r := range rates {
			at := r.At
			if at.IsZero() {
				at = now
			}
			if err := putJSON(b, rateKey(r.Currency, r.Day), rateRecord{Currency: r.Currency, Day: r.Day.String(),
				Value: r.Value, Source: r.Source, At: at.UTC()}); err != nil {
				return err
			}
		}
		return appendAudit(tx, AuditEvent{At: now, Kind: AuditRatesSet, Detail: fmt.Sprintf("%d exchange rates recorded", len(rates))})
	})
}

// AuditRatesSet is the audit event of quotes recorded.
const AuditRatesSet = "rates_set"

// Rates lists the quotes of the table, by currency and day.
func (db *DB) Rates(ctx context.Context) ([]Rate, error) {
	const op = "store.Rates"
	var out []Rate
	err := db.view(ctx, op, func(tx *bolt.Tx) error {
		out = out[:0]
		b := tx.Bucket(bucketRates)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			var r rateRecord
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("%w: rate %s: %w", ErrDamaged, k, err)
			}
			d, err := cfe.ParseDate(r.Day)
			if err != nil {
				return fmt.Errorf("%w: rate %s: %w", ErrDamaged, k, err)
			}
			out = append(out, Rate{Currency: r.Currency, Day: d, Value: r.Value, Source: r.Source, At: r.At})
			return nil
		})
	})
	return out, err
}

// RateTable is the table as a cfe.RateSource.
type RateTable struct {
	byKey map[string]Rate
}

// NewRateTable makes a RateSource of rates.
func NewRateTable(rates []Rate) *RateTable {
	t := &RateTable{byKey: make(map[string]Rate, len(rates))}
	for _, r := range rates {
		t.byKey[string(rateKey(r.Currency, r.Day))] = r
	}
	return t
}

// RateTable reads the table (Rates) as a cfe.RateSource.
func (db *DB) RateTable(ctx context.Context) (*RateTable, error) {
	rates, err := db.Rates(ctx)
	if err != nil {
		return nil, err
	}
	return NewRateTable(rates), nil
}

// Rate is the quote an operation in cur on day d converts at: the last
// quote before d, at most RateLookBack days before. Its source names the
// quote's day and origin.
func (t *RateTable) Rate(cur string, d cfe.Date) (decimal.Decimal, string, bool) {
	for back := 1; back <= RateLookBack; back++ {
		day := d.AddDays(-back)
		if r, ok := t.byKey[string(rateKey(cur, day))]; ok {
			return r.Value, fmt.Sprintf("BCU %s del %s (%s)", cur, day, r.Source), true
		}
	}
	return decimal.Decimal{}, "", false
}

// Currencies lists the currencies the table has quotes of.
func (t *RateTable) Currencies() []string {
	var out []string
	for _, r := range t.byKey {
		if !slices.Contains(out, r.Currency) {
			out = append(out, r.Currency)
		}
	}
	slices.Sort(out)
	return out
}
