package data

import (
	"encoding/json"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// APIKey is a company API key. Only the SHA-256 of the complete key is kept.
type APIKey struct {
	ID          int64      `json:"id"`
	Company     int64      `json:"company"`
	Nombre      string     `json:"nombre"`
	Descripcion string     `json:"descripcion"`
	Hint        string     `json:"hint"` // the prefix and the first characters, to recognise the key
	Hash        string     `json:"hash"`
	Created     time.Time  `json:"created"`
	Revoked     *time.Time `json:"revoked,omitempty"`
	PerMinute   int        `json:"perMinute,omitempty"` // 0: the company's, else the default
	PerHour     int        `json:"perHour,omitempty"`
}

// Limits returns the effective limits of k: its own, else its company's
// (c, when not nil), else DefaultKeyPerMinute and DefaultKeyPerHour.
func (k *APIKey) Limits(c *Company) (perMinute, perHour int) {
	perMinute, perHour = DefaultKeyPerMinute, DefaultKeyPerHour
	if c != nil && c.PerMinute > 0 {
		perMinute = c.PerMinute
	}
	if c != nil && c.PerHour > 0 {
		perHour = c.PerHour
	}
	if k.PerMinute > 0 {
		perMinute = k.PerMinute
	}
	if k.PerHour > 0 {
		perHour = k.PerHour
	}
	return perMinute, perHour
}

// GetKey reads company key id.
func GetKey(tx *bolt.Tx, id int64) (*APIKey, error) {
	var k APIKey
	return &k, GetJSON(tx, bucketKeys, IDKey(id), "la API key", &k)
}

// KeyByHash returns the id of the key whose SHA-256 is hash.
func KeyByHash(tx *bolt.Tx, hash string) (int64, bool) { return lookup(tx, bucketKeyHashes, hash) }

// PutKey stores k, giving it an id when it has none, and indexes its hash.
// ECONFLICT when another key has the same hash.
func PutKey(tx *bolt.Tx, k *APIKey) error {
	if id, ok := lookup(tx, bucketKeyHashes, k.Hash); ok && id != k.ID {
		return &cfe.Error{Code: cfe.ECONFLICT, Message: "la API key ya existe"}
	}
	if k.ID == 0 {
		id, err := nextID(tx, bucketKeys)
		if err != nil {
			return err
		}
		k.ID = id
	}
	if err := tx.Bucket(bucketKeyHashes).Put([]byte(k.Hash), IDKey(k.ID)); err != nil {
		return err
	}
	return PutJSON(tx, bucketKeys, IDKey(k.ID), k)
}

// CompanyKeys returns the keys of company in id order.
func CompanyKeys(tx *bolt.Tx, company int64) ([]*APIKey, error) {
	keys := []*APIKey{}
	err := tx.Bucket(bucketKeys).ForEach(func(_, raw []byte) error {
		var k APIKey
		if err := json.Unmarshal(raw, &k); err != nil {
			return err
		}
		if k.Company == company {
			keys = append(keys, &k)
		}
		return nil
	})
	return keys, err
}
