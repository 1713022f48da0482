package sandbox

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// Buckets of the sandbox's own bbolt file.
var (
	bucketMeta      = []byte("meta")
	bucketUsers     = []byte("users")       // id → User
	bucketUsernames = []byte("usernames")   // normalized username → id
	bucketCompanies = []byte("companies")   // id → Company
	bucketRUCs      = []byte("rucs")        // RUC → company id
	bucketKeys      = []byte("apikeys")     // id → APIKey
	bucketKeyHashes = []byte("apikeyhash")  // SHA-256 of the key → id
	bucketUserKeys  = []byte("userkeyhash") // SHA-256 of a user key → user id
	bucketSessions  = []byte("sessions")    // id → Session
	bucketRefresh   = []byte("refresh")     // SHA-256 of the refresh token → session id
	allBuckets      = [][]byte{bucketMeta, bucketUsers, bucketUsernames, bucketCompanies, bucketRUCs, bucketKeys, bucketKeyHashes, bucketUserKeys, bucketSessions, bucketRefresh,
		bucketCFEs, bucketCFEUUIDs, bucketFolios, bucketPoints, bucketCredentials}
	metaEnvironment = []byte("environment")
	metaJWTKey      = []byte("jwtkey")
	metaInitialized = []byte("initialized")
)

// db is the sandbox's bbolt file: one per environment, so environments share
// no data.
type db struct {
	bolt *bolt.DB
}

// dbPath returns the file of environment env in dir.
func dbPath(dir, env string) string { return filepath.Join(dir, "cfe-sandbox-"+env+".db") }

func openDB(dir, env string) (*db, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("sandbox: create data directory: %w", err)
	}
	path := dbPath(dir, env)
	b, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: dbOpenTimeout})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("sandbox: %s is in use by another cfe-sandbox process", path)
	}
	if err != nil {
		return nil, fmt.Errorf("sandbox: open %s: %w", path, err)
	}
	d := &db{bolt: b}
	err = b.Update(func(tx *bolt.Tx) error {
		for _, name := range allBuckets {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		meta := tx.Bucket(bucketMeta)
		switch got := meta.Get(metaEnvironment); {
		case got == nil:
			return meta.Put(metaEnvironment, []byte(env))
		case string(got) != env:
			return fmt.Errorf("sandbox: %s belongs to environment %q, not %q", path, got, env)
		}
		return nil
	})
	if err != nil {
		return nil, errors.Join(err, b.Close())
	}
	return d, nil
}

func (d *db) Close() error { return d.bolt.Close() }

func (d *db) view(fn func(tx *bolt.Tx) error) error   { return d.bolt.View(fn) }
func (d *db) update(fn func(tx *bolt.Tx) error) error { return d.bolt.Update(fn) }

// idKey encodes an id so that bbolt keeps records in id order.
func idKey(id int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(id)) }

func keyID(b []byte) int64 { return int64(binary.BigEndian.Uint64(b)) }

// getJSON decodes the record under key, or returns an ENOTFOUND error naming what.
func getJSON(tx *bolt.Tx, bucket, key []byte, what string, v any) error {
	raw := tx.Bucket(bucket).Get(key)
	if raw == nil {
		return &cfe.Error{Code: cfe.ENOTFOUND, Message: what + " no existe"}
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("sandbox: decode %s: %w", bucket, err)
	}
	return nil
}

func putJSON(tx *bolt.Tx, bucket, key []byte, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return tx.Bucket(bucket).Put(key, raw)
}

// lookup follows an index bucket to an id.
func lookup(tx *bolt.Tx, index []byte, key string) (int64, bool) {
	raw := tx.Bucket(index).Get([]byte(key))
	if raw == nil {
		return 0, false
	}
	return keyID(raw), true
}

func nextID(tx *bolt.Tx, bucket []byte) (int64, error) {
	n, err := tx.Bucket(bucket).NextSequence()
	return int64(n), err
}

// normalizeIdentifier is the form under which usernames are unique and login
// failures are counted: trimmed and lower-cased.
func normalizeIdentifier(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

func getUser(tx *bolt.Tx, id int64) (*User, error) {
	var u User
	return &u, getJSON(tx, bucketUsers, idKey(id), "el usuario", &u)
}

func userByName(tx *bolt.Tx, name string) (*User, error) {
	id, ok := lookup(tx, bucketUsernames, normalizeIdentifier(name))
	if !ok {
		return nil, &cfe.Error{Code: cfe.ENOTFOUND, Message: "el usuario no existe"}
	}
	return getUser(tx, id)
}

// putUser stores u, giving it an id when it has none. ECONFLICT when another
// user has the same normalized username.
func putUser(tx *bolt.Tx, u *User) error {
	name := normalizeIdentifier(u.Username)
	if id, ok := lookup(tx, bucketUsernames, name); ok && id != u.ID {
		return &cfe.Error{Code: cfe.ECONFLICT, Message: fmt.Sprintf("el usuario %q ya existe", u.Username)}
	}
	if u.ID == 0 {
		id, err := nextID(tx, bucketUsers)
		if err != nil {
			return err
		}
		u.ID = id
	}
	if err := tx.Bucket(bucketUsernames).Put([]byte(name), idKey(u.ID)); err != nil {
		return err
	}
	return putJSON(tx, bucketUsers, idKey(u.ID), u)
}

func getCompany(tx *bolt.Tx, id int64) (*Company, error) {
	var c Company
	return &c, getJSON(tx, bucketCompanies, idKey(id), "la empresa", &c)
}

// putCompany stores c, giving it an id when it has none. ECONFLICT when
// another company has the same RUC.
func putCompany(tx *bolt.Tx, c *Company) error {
	if id, ok := lookup(tx, bucketRUCs, c.RUC); ok && id != c.ID {
		return &cfe.Error{Code: cfe.ECONFLICT, Message: fmt.Sprintf("ya existe una empresa con RUC %s", c.RUC)}
	}
	if c.ID == 0 {
		id, err := nextID(tx, bucketCompanies)
		if err != nil {
			return err
		}
		c.ID = id
	}
	if err := tx.Bucket(bucketRUCs).Put([]byte(c.RUC), idKey(c.ID)); err != nil {
		return err
	}
	return putJSON(tx, bucketCompanies, idKey(c.ID), c)
}

func getKey(tx *bolt.Tx, id int64) (*APIKey, error) {
	var k APIKey
	return &k, getJSON(tx, bucketKeys, idKey(id), "la API key", &k)
}

// putKey stores k, giving it an id when it has none, and indexes its hash.
func putKey(tx *bolt.Tx, k *APIKey) error {
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
	if err := tx.Bucket(bucketKeyHashes).Put([]byte(k.Hash), idKey(k.ID)); err != nil {
		return err
	}
	return putJSON(tx, bucketKeys, idKey(k.ID), k)
}

// companyKeys returns the keys of company id in id order.
func companyKeys(tx *bolt.Tx, company int64) ([]*APIKey, error) {
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

func getSession(tx *bolt.Tx, id string) (*Session, error) {
	var s Session
	return &s, getJSON(tx, bucketSessions, []byte(id), "la sesión", &s)
}

// putSession stores s, indexes its current refresh hash (rotated hashes keep
// the entries they had) and removes the index entries of the hashes in drop.
func putSession(tx *bolt.Tx, s *Session, drop ...string) error {
	idx := tx.Bucket(bucketRefresh)
	for _, h := range drop {
		if h == "" {
			continue
		}
		if err := idx.Delete([]byte(h)); err != nil {
			return err
		}
	}
	if s.RefreshHash != "" {
		if err := idx.Put([]byte(s.RefreshHash), []byte(s.ID)); err != nil {
			return err
		}
	}
	return putJSON(tx, bucketSessions, []byte(s.ID), s)
}
