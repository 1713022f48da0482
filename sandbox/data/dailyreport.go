package data

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// The provider's daily reports (sandbox/dgi's Reporter writes them): one
// report per company and day, built from every CFE the company's agents
// delivered or the sandbox signed that day and every number annulled that
// day, and sent to DGI.
//
//	dailyreports  company/YYYY-MM-DD → DailyReportRecord
//	reportdirty   company/YYYY-MM-DD → "" while the day's content (its CFEs,
//	              its annulled numbers, DGI's rejections) changed after its
//	              report was last built
//	reportbegin   company → YYYY-MM-DD, the first day the reporter reports
//	              (the day it first saw the company); earlier days are
//	              reported only when something of theirs arrives later
var (
	bucketDailyReports = []byte("dailyreports")
	bucketReportDirty  = []byte("reportdirty")
	bucketReportBegin  = []byte("reportbegin")
)

// DailyReportRecord is where a company's report of one day stands: the last
// report built for the day (its SecEnvio, its signed XML) and DGI's answer.
type DailyReportRecord struct {
	Date cfe.Date `json:"date"`
	Seq  int      `json:"seq"`
	// State is "" while the report is built and recorded but DGI's answer
	// is not known (not sent yet, or sent without an answer: DGI is asked
	// before it is sent again), or DGI's code: AR, BR, DR, ER, FR.
	State       string      `json:"state,omitempty"`
	Reasons     []DGIReason `json:"reasons,omitempty"`
	IDReceptor  int64       `json:"idReceptor,omitempty"`
	XML         []byte      `json:"xml"`
	Fingerprint string      `json:"fingerprint"` // the content the report was built from
	CFEs        int         `json:"cfes"`        // CFEs signed that day (DGI's rejections included)
	Annulled    int         `json:"annulled"`    // annulled numbers it counts
	Attempts    int         `json:"attempts,omitempty"`
	LastError   string      `json:"lastError,omitempty"`
	BuiltAt     time.Time   `json:"builtAt"`
	SentAt      time.Time   `json:"sentAt,omitzero"`
	CheckedAt   time.Time   `json:"checkedAt,omitzero"`
	// Earlier are the reports of the day this one superseded (SecEnvio - 1,
	// ...), oldest first.
	Earlier []EarlierReport `json:"earlier,omitempty"`
}

// EarlierReport is a report of the day a later SecEnvio superseded.
type EarlierReport struct {
	Seq        int       `json:"seq"`
	State      string    `json:"state,omitempty"`
	IDReceptor int64     `json:"idReceptor,omitempty"`
	SentAt     time.Time `json:"sentAt,omitzero"`
}

func dayKey(company int64, d cfe.Date) []byte { return append(IDKey(company), d.String()...) }

// GetDailyReport returns company's record of day d, or nil.
func GetDailyReport(tx *bolt.Tx, company int64, d cfe.Date) (*DailyReportRecord, error) {
	raw := tx.Bucket(bucketDailyReports).Get(dayKey(company, d))
	if raw == nil {
		return nil, nil
	}
	var r DailyReportRecord
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("sandbox: daily report %s of company %d: %w", d, company, err)
	}
	return &r, nil
}

// PutDailyReport stores company's record of its day.
func PutDailyReport(tx *bolt.Tx, company int64, r *DailyReportRecord) error {
	return PutJSON(tx, bucketDailyReports, dayKey(company, r.Date), r)
}

// DailyReports calls fn for each of company's records of the days from to
// to (inclusive; a zero bound is open), in date order.
func DailyReports(tx *bolt.Tx, company int64, from, to cfe.Date, fn func(*DailyReportRecord) error) error {
	prefix := IDKey(company)
	c := tx.Bucket(bucketDailyReports).Cursor()
	start := prefix
	if !from.IsZero() {
		start = dayKey(company, from)
	}
	for k, v := c.Seek(start); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if !to.IsZero() && string(k[8:]) > to.String() {
			return nil
		}
		var r DailyReportRecord
		if err := json.Unmarshal(v, &r); err != nil {
			return fmt.Errorf("sandbox: daily report %s of company %d: %w", k[8:], company, err)
		}
		if err := fn(&r); err != nil {
			return err
		}
	}
	return nil
}

// MarkReportDirty records that company's content of day d changed.
func MarkReportDirty(tx *bolt.Tx, company int64, d cfe.Date) error {
	return tx.Bucket(bucketReportDirty).Put(dayKey(company, d), nil)
}

// ReportDirty returns company's days whose content changed, in date order.
func ReportDirty(tx *bolt.Tx, company int64) []cfe.Date {
	var out []cfe.Date
	prefix := IDKey(company)
	c := tx.Bucket(bucketReportDirty).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		if d, err := cfe.ParseDate(string(k[8:])); err == nil {
			out = append(out, d)
		}
	}
	return out
}

// ClearReportDirty forgets that company's day d changed.
func ClearReportDirty(tx *bolt.Tx, company int64, d cfe.Date) error {
	return tx.Bucket(bucketReportDirty).Delete(dayKey(company, d))
}

// ReportBegin returns company's first reported day, zero before the
// reporter first saw it.
func ReportBegin(tx *bolt.Tx, company int64) cfe.Date {
	d, _ := cfe.ParseDate(string(tx.Bucket(bucketReportBegin).Get(IDKey(company))))
	return d
}

// SetReportBegin records company's first reported day.
func SetReportBegin(tx *bolt.Tx, company int64, d cfe.Date) error {
	return tx.Bucket(bucketReportBegin).Put(IDKey(company), []byte(d.String()))
}

// SignatureDay is the day a CFE was signed, in Montevideo: the daily report
// that counts it (REP A-C3).
func (c *CFERecord) SignatureDay() cfe.Date { return cfe.DateOf(c.TmstFirma.In(cfe.Montevideo)) }
