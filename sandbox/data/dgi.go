package data

import (
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// The provider's DGI records: what the sandbox, as the provider, sent to
// DGI and what DGI answered (sandbox/dgi's Provider writes them; the
// issuing room shows them in cfeemitido/{id} and buscar).
//
//	dgicfes       CFE id → DGIRecord (a CFE without one was not put in an
//	              envelope yet)
//	dgienvelopes  company/envelope id → DGIEnvelopeRecord
//	dgiopen       company/envelope id → "" while the envelope is open
//	dgicursor     company → the highest CFE id of the company put in an
//	              envelope (or passed over: before the provider started)
var (
	bucketDGICFEs      = []byte("dgicfes")
	bucketDGIEnvelopes = []byte("dgienvelopes")
	bucketDGIOpen      = []byte("dgiopen")
	bucketDGICursor    = []byte("dgicursor")
)

// DGIReason is one of DGI's codes with its text.
type DGIReason struct {
	Codigo  string `json:"codigo"`
	Glosa   string `json:"glosa,omitempty"`
	Detalle string `json:"detalle,omitempty"`
}

// DGIRecord is a CFE's state at DGI as the provider knows it. State is one
// of cfe's DGI states (cfe.DGIPending … cfe.DGIUnknown).
type DGIRecord struct {
	State     string      `json:"state"`
	Envelope  int64       `json:"envelope,omitempty"` // the envelope that carried it last (its Idemisor)
	Reasons   []DGIReason `json:"reasons,omitempty"`
	UpdatedAt time.Time   `json:"updatedAt"`
}

// DGIEnvelopeRecord is an envelope the provider sent (or is about to send)
// to DGI.
type DGIEnvelopeRecord struct {
	CFEs       []int64     `json:"cfes"`
	Fecha      time.Time   `json:"fecha"`
	State      string      `json:"state"` // cfe.Envelope*
	IDReceptor int64       `json:"idReceptor,omitempty"`
	Token      string      `json:"token,omitempty"`
	Fechahora  time.Time   `json:"fechahora,omitzero"`
	Reasons    []DGIReason `json:"reasons,omitempty"`
	Attempts   int         `json:"attempts,omitempty"`
	LastError  string      `json:"lastError,omitempty"`
	SentAt     time.Time   `json:"sentAt,omitzero"`
	UpdatedAt  time.Time   `json:"updatedAt"`
}

// GetDGI returns CFE id's DGI record, or nil when it has none.
func GetDGI(tx *bolt.Tx, id int64) (*DGIRecord, error) {
	raw := tx.Bucket(bucketDGICFEs).Get(IDKey(id))
	if raw == nil {
		return nil, nil
	}
	var r DGIRecord
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("sandbox: DGI record of CFE %d: %w", id, err)
	}
	return &r, nil
}

// PutDGI stores CFE id's DGI record.
// A rejection (BE) changes the daily report of the CFE's signature day: its
// number is annulled.
func PutDGI(tx *bolt.Tx, id int64, r *DGIRecord) error {
	if r.State == cfe.DGIRejected {
		if c, err := GetCFE(tx, id); err == nil {
			if err := MarkReportDirty(tx, c.Company, c.SignatureDay()); err != nil {
				return err
			}
		}
	}
	return PutJSON(tx, bucketDGICFEs, IDKey(id), r)
}

func envelopeKey(company, id int64) []byte { return append(IDKey(company), IDKey(id)...) }

// GetDGIEnvelope returns company's envelope id. ENOTFOUND when missing.
func GetDGIEnvelope(tx *bolt.Tx, company, id int64) (*DGIEnvelopeRecord, error) {
	var r DGIEnvelopeRecord
	err := GetJSON(tx, bucketDGIEnvelopes, envelopeKey(company, id), "el sobre", &r)
	return &r, err
}

// PutDGIEnvelope stores company's envelope id, keeping the open index: an
// envelope is open until it is resolved or refused.
func PutDGIEnvelope(tx *bolt.Tx, company, id int64, r *DGIEnvelopeRecord) error {
	k := envelopeKey(company, id)
	var err error
	if r.State == cfe.EnvelopeDone || r.State == cfe.EnvelopeRefused {
		err = tx.Bucket(bucketDGIOpen).Delete(k)
	} else {
		err = tx.Bucket(bucketDGIOpen).Put(k, nil)
	}
	if err != nil {
		return err
	}
	return PutJSON(tx, bucketDGIEnvelopes, k, r)
}

// OpenDGIEnvelopes returns the ids of company's open envelopes, oldest
// first.
func OpenDGIEnvelopes(tx *bolt.Tx, company int64) []int64 {
	var out []int64
	prefix := IDKey(company)
	c := tx.Bucket(bucketDGIOpen).Cursor()
	for k, _ := c.Seek(prefix); len(k) == 16 && KeyID(k[:8]) == company; k, _ = c.Next() {
		out = append(out, KeyID(k[8:]))
	}
	return out
}

// DGICursor returns the highest CFE id of company the provider put in an
// envelope or passed over.
func DGICursor(tx *bolt.Tx, company int64) int64 {
	v := tx.Bucket(bucketDGICursor).Get(IDKey(company))
	if len(v) != 8 {
		return 0
	}
	return KeyID(v)
}

// SetDGICursor records company's cursor.
func SetDGICursor(tx *bolt.Tx, company, id int64) error {
	return tx.Bucket(bucketDGICursor).Put(IDKey(company), IDKey(id))
}

// CFEsAfter calls fn for each CFE with an id above after, in id order,
// until fn returns false or an error.
func CFEsAfter(tx *bolt.Tx, after int64, fn func(*CFERecord) (bool, error)) error {
	c := tx.Bucket(bucketCFEs).Cursor()
	for k, v := c.Seek(IDKey(after + 1)); k != nil; k, v = c.Next() {
		var rec CFERecord
		if err := json.Unmarshal(v, &rec); err != nil {
			return err
		}
		more, err := fn(&rec)
		if err != nil || !more {
			return err
		}
	}
	return nil
}

// Companies returns the ids of every company.
func Companies(tx *bolt.Tx) []int64 {
	var out []int64
	_ = tx.Bucket(bucketCompanies).ForEach(func(k, _ []byte) error {
		out = append(out, KeyID(k))
		return nil
	})
	return out
}

func putBackKey(company int64) []byte { return append(IDKey(company), "/back"...) }

// DGIPutBack returns the CFEs of company put back after DGI refused their
// envelope, in id order: they go first in the next envelope.
func DGIPutBack(tx *bolt.Tx, company int64) ([]int64, error) {
	raw := tx.Bucket(bucketDGICursor).Get(putBackKey(company))
	if raw == nil {
		return nil, nil
	}
	var ids []int64
	return ids, json.Unmarshal(raw, &ids)
}

// SetDGIPutBack records company's put-back CFEs.
func SetDGIPutBack(tx *bolt.Tx, company int64, ids []int64) error {
	if len(ids) == 0 {
		return tx.Bucket(bucketDGICursor).Delete(putBackKey(company))
	}
	return PutJSON(tx, bucketDGICursor, putBackKey(company), ids)
}
