package data

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// Annulled numbers: runs of a company's numbers that will never be signed
// (a block the agent skipped, a technician's void, ...), as the agents
// deliver them (POST /api/v1/numerosanulados, docs/sandbox.md). They go
// into the company's daily report (dailyreport.go) of the day they were
// annulled.
//
//	annulled  company/type/serie/ + from (8 bytes) → AnnulledRecord
//
// A range never overlaps another range or a CFE of the company (except a
// CFE DGI rejected: its number is annulled too), and no CFE is added inside
// a range (AddCFE).
var bucketAnnulled = []byte("annulled")

// AnnulledRecord is one range of annulled numbers.
type AnnulledRecord struct {
	Company  int64     `json:"company"`
	Type     cfe.Type  `json:"type"`
	Serie    string    `json:"serie"`
	From     int64     `json:"from"`
	To       int64     `json:"to"`
	Reason   string    `json:"reason"`         // a stable code (skipped-block, technician, ...)
	Note     string    `json:"note,omitempty"` // free text
	At       time.Time `json:"at"`             // when the numbers were annulled
	Received time.Time `json:"received"`       // when the service recorded them
	// ReportDay is the day whose report counts the numbers when it is not
	// At's (a DGI rejection counts on its CFE's signature day).
	ReportDay cfe.Date `json:"reportDay,omitzero"`
}

// Day is the day whose daily report lists the range: ReportDay, or the day
// it was annulled, in Montevideo.
func (a *AnnulledRecord) Day() cfe.Date {
	if !a.ReportDay.IsZero() {
		return a.ReportDay
	}
	return cfe.DateOf(a.At.In(cfe.Montevideo))
}

func seriePrefix(company int64, t cfe.Type, serie string) []byte {
	return fmt.Appendf(nil, "%d/%d/%s/", company, int(t), serie)
}

func annulledKey(a *AnnulledRecord) []byte {
	return append(seriePrefix(a.Company, a.Type, a.Serie), IDKey(a.From)...)
}

// SerieAnnulled calls fn for each range of company's type and serie, in
// number order.
func SerieAnnulled(tx *bolt.Tx, company int64, t cfe.Type, serie string, fn func(*AnnulledRecord) error) error {
	prefix := seriePrefix(company, t, serie)
	c := tx.Bucket(bucketAnnulled).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && len(k) == len(prefix)+8; k, v = c.Next() {
		var a AnnulledRecord
		if err := json.Unmarshal(v, &a); err != nil {
			return err
		}
		if err := fn(&a); err != nil {
			return err
		}
	}
	return nil
}

// CompanyAnnulled calls fn for each range of company.
func CompanyAnnulled(tx *bolt.Tx, company int64, fn func(*AnnulledRecord) error) error {
	prefix := fmt.Appendf(nil, "%d/", company)
	c := tx.Bucket(bucketAnnulled).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		var a AnnulledRecord
		if err := json.Unmarshal(v, &a); err != nil {
			return err
		}
		if err := fn(&a); err != nil {
			return err
		}
	}
	return nil
}

// AnnulledAt returns the range of company's type and serie holding nro, or
// nil.
func AnnulledAt(tx *bolt.Tx, company int64, t cfe.Type, serie string, nro int64) (*AnnulledRecord, error) {
	var found *AnnulledRecord
	err := SerieAnnulled(tx, company, t, serie, func(a *AnnulledRecord) error {
		if a.From <= nro && nro <= a.To {
			found = a
		}
		return nil
	})
	return found, err
}

// SerieCFEs calls fn for each CFE of company's type and serie (in no
// particular order).
func SerieCFEs(tx *bolt.Tx, company int64, t cfe.Type, serie string, fn func(nro, id int64) error) error {
	prefix := folioKey(company, t, serie, 0)
	prefix = prefix[:len(prefix)-1] // "company/type/serie/"
	c := tx.Bucket(bucketFolios).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		nro, err := strconv.ParseInt(string(k[len(prefix):]), 10, 64)
		if err != nil {
			continue // a serie whose name extends this one's ("A" and "A/..." cannot be: series have no slash)
		}
		if err := fn(nro, KeyID(v)); err != nil {
			return err
		}
	}
	return nil
}

// AddAnnulled records range a. It returns created false, changing nothing,
// when the very same range (company, type, serie, from, to) is already
// recorded: the agents deliver it again after a lost answer. ECONFLICT
// when the range overlaps another range or one of the company's CFEs that
// DGI did not reject (rejected says whether it did).
func AddAnnulled(tx *bolt.Tx, a *AnnulledRecord, rejected func(tx *bolt.Tx, cfeID int64) (bool, error)) (created bool, err error) {
	var same bool
	err = SerieAnnulled(tx, a.Company, a.Type, a.Serie, func(b *AnnulledRecord) error {
		switch {
		case b.From == a.From && b.To == a.To:
			same = true
		case b.From <= a.To && a.From <= b.To:
			return &cfe.Error{Code: cfe.ECONFLICT, Message: fmt.Sprintf(
				"los números %d a %d de la serie %s del tipo %d se superponen con los números %d a %d, ya anulados (%s)",
				a.From, a.To, a.Serie, int(a.Type), b.From, b.To, b.Reason)}
		}
		return nil
	})
	if err != nil || same {
		return false, err
	}
	err = SerieCFEs(tx, a.Company, a.Type, a.Serie, func(nro, id int64) error {
		if nro < a.From || nro > a.To {
			return nil
		}
		if ok, err := rejected(tx, id); err != nil || ok {
			return err
		}
		return &cfe.Error{Code: cfe.ECONFLICT, Message: fmt.Sprintf(
			"el número %s-%d del tipo %d ya es un CFE emitido (id %d): no puede anularse", a.Serie, nro, int(a.Type), id)}
	})
	if err != nil {
		return false, err
	}
	if err := PutJSON(tx, bucketAnnulled, annulledKey(a), a); err != nil {
		return false, err
	}
	return true, MarkReportDirty(tx, a.Company, a.Day())
}
