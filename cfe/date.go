package cfe

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// Date is a civil date (xs:date without zone), as DGI writes FchEmis or FecVenc.
type Date struct {
	Year  int
	Month time.Month
	Day   int
}

// DateOf returns the civil date of t in t's location.
func DateOf(t time.Time) Date {
	y, m, d := t.Date()
	return Date{y, m, d}
}

// ParseDate reads YYYY-MM-DD.
func ParseDate(s string) (Date, error) {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return Date{}, fmt.Errorf("fecha %q inválida: se espera AAAA-MM-DD", s)
	}
	return DateOf(t), nil
}

// IsZero reports whether d is the zero Date.
func (d Date) IsZero() bool { return d == Date{} }

// String formats d as YYYY-MM-DD.
func (d Date) String() string { return fmt.Sprintf("%04d-%02d-%02d", d.Year, d.Month, d.Day) }

// Time returns midnight of d in loc.
func (d Date) Time(loc *time.Location) time.Time {
	return time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, loc)
}

// Before reports whether d is before e.
func (d Date) Before(e Date) bool { return d.Time(time.UTC).Before(e.Time(time.UTC)) }

// After reports whether d is after e.
func (d Date) After(e Date) bool { return e.Before(d) }

// AddDays returns d plus n days.
func (d Date) AddDays(n int) Date { return DateOf(d.Time(time.UTC).AddDate(0, 0, n)) }

// MarshalJSON writes "YYYY-MM-DD".
func (d Date) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads "YYYY-MM-DD".
func (d *Date) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("fecha inválida: se espera un texto AAAA-MM-DD")
	}
	v, err := ParseDate(s)
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// MontevideoOffset is Uruguay's offset from UTC in seconds: -03:00 all year
// since March 2015.
const MontevideoOffset = -3 * 60 * 60

// Montevideo is Uruguay's zone. DGI times (TmstFirma) are written in it.
var Montevideo = time.FixedZone("America/Montevideo", MontevideoOffset)

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
