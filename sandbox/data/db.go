package data

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

// Buckets of the shared records, created when the file is opened.
var (
	bucketMeta      = []byte("meta")
	bucketUsers     = []byte("users")       // id → User
	bucketUsernames = []byte("usernames")   // normalized username → id
	bucketCompanies = []byte("companies")   // id → Company
	bucketRUCs      = []byte("rucs")        // RUC → company id
	bucketKeys      = []byte("apikeys")     // id → APIKey
	bucketKeyHashes = []byte("apikeyhash")  // SHA-256 of the key → id
	bucketUserKeys  = []byte("userkeyhash") // the sequence of user key ids
	bucketSessions  = []byte("sessions")    // id → Session
	bucketRefresh   = []byte("refresh")     // SHA-256 of the refresh token → session id
	bucketCFEs      = []byte("cfes")        // id → CFERecord
	bucketCFEUUIDs  = []byte("cfeuuids")    // company/uuid → id
	bucketFolios    = []byte("folios")      // company/type/serie/nro → id
	bucketPoints    = []byte("points")      // idPde → IssuingPoint

	allBuckets = [][]byte{bucketMeta, bucketUsers, bucketUsernames, bucketCompanies, bucketRUCs, bucketKeys,
		bucketKeyHashes, bucketUserKeys, bucketSessions, bucketRefresh, bucketCFEs, bucketCFEUUIDs, bucketFolios,
		bucketPoints, bucketDGICFEs, bucketDGIEnvelopes, bucketDGIOpen, bucketDGICursor, bucketAnnulled,
		bucketDailyReports, bucketReportDirty, bucketReportBegin}

	metaEnvironment = []byte("environment")
	metaJWTKey      = []byte("jwtkey")
	metaInitialized = []byte("initialized")
)

// DB is the emulator's bbolt file: one per environment, so environments share
// no data. It is the one owner of the state the rooms share.
type DB struct {
	bolt *bolt.DB
}

// Path returns the file of environment env in dir.
func Path(dir, env string) string { return filepath.Join(dir, "cfe-sandbox-"+env+".db") }

// Open opens (creating it when missing) the file of environment env in dir.
// A file held by another process fails after OpenTimeout, saying so.
func Open(dir, env string) (*DB, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("sandbox: create data directory: %w", err)
	}
	path := Path(dir, env)
	b, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: OpenTimeout})
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("sandbox: %s is in use by another cfe-sandbox process", path)
	}
	if err != nil {
		return nil, fmt.Errorf("sandbox: open %s: %w", path, err)
	}
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
	return &DB{bolt: b}, nil
}

// Close closes the file.
func (d *DB) Close() error { return d.bolt.Close() }

// View runs fn in a read transaction.
func (d *DB) View(fn func(tx *bolt.Tx) error) error { return d.bolt.View(fn) }

// Update runs fn in a write transaction, committed when fn returns nil.
func (d *DB) Update(fn func(tx *bolt.Tx) error) error { return d.bolt.Update(fn) }

// IDKey encodes an id so that bbolt keeps records in id order.
func IDKey(id int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(id)) }

// KeyID decodes an IDKey.
func KeyID(b []byte) int64 { return int64(binary.BigEndian.Uint64(b)) }

// GetJSON decodes the record under key of bucket, or returns an ENOTFOUND
// error naming what ("el CFE"). A bucket that does not exist yet (a room's
// own, created by its first write) holds nothing.
func GetJSON(tx *bolt.Tx, bucket, key []byte, what string, v any) error {
	var raw []byte
	if b := tx.Bucket(bucket); b != nil {
		raw = b.Get(key)
	}
	if raw == nil {
		return NotFound(what)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("sandbox: decode %s: %w", bucket, err)
	}
	return nil
}

// PutJSON stores v under key of bucket, creating the bucket when a room
// writes its first record.
func PutJSON(tx *bolt.Tx, bucket, key []byte, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	b, err := tx.CreateBucketIfNotExists(bucket)
	if err != nil {
		return err
	}
	return b.Put(key, raw)
}

// NotFound returns the ENOTFOUND error of a missing thing ("la API key").
func NotFound(what string) error {
	return &cfe.Error{Code: cfe.ENOTFOUND, Message: what + " no existe"}
}

// lookup follows an index bucket to an id.
func lookup(tx *bolt.Tx, index []byte, key string) (int64, bool) {
	raw := tx.Bucket(index).Get([]byte(key))
	if raw == nil {
		return 0, false
	}
	return KeyID(raw), true
}

func nextID(tx *bolt.Tx, bucket []byte) (int64, error) {
	n, err := tx.Bucket(bucket).NextSequence()
	return int64(n), err
}

// FirstErr returns the first error that is not nil.
func FirstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// NormalizeIdentifier is the form under which usernames are unique and login
// failures are counted: trimmed and lower-cased.
func NormalizeIdentifier(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// JWTKey returns the key the environment's JWTs are signed with, creating it
// with create the first time.
func JWTKey(tx *bolt.Tx, create func() []byte) ([]byte, error) {
	meta := tx.Bucket(bucketMeta)
	if k := meta.Get(metaJWTKey); k != nil {
		return append([]byte(nil), k...), nil
	}
	k := create()
	return k, meta.Put(metaJWTKey, k)
}

// Initialized reports whether the file's first-run data were created.
func Initialized(tx *bolt.Tx) bool { return tx.Bucket(bucketMeta).Get(metaInitialized) != nil }

// MarkInitialized records that the first-run data were created.
func MarkInitialized(tx *bolt.Tx) error {
	return tx.Bucket(bucketMeta).Put(metaInitialized, []byte("1"))
}
