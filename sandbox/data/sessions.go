package data

import (
	"time"

	bolt "go.etcd.io/bbolt"
)

// Session is one login: the JWTs it issues carry its ID, and it holds the
// hash of its current refresh token.
type Session struct {
	ID             string    `json:"id"`
	User           int64     `json:"user"`
	RefreshHash    string    `json:"refreshHash"`
	RefreshExpires time.Time `json:"refreshExpires"`
	Revoked        bool      `json:"revoked"`
	Created        time.Time `json:"created"`
	// Rotated are the session's refresh tokens already exchanged and not yet
	// expired, oldest first: presenting one again means it was copied, and
	// revokes the session (auth's refresh).
	Rotated []RotatedRefresh `json:"rotated,omitempty"`
}

// RotatedRefresh is a refresh token a session already exchanged.
type RotatedRefresh struct {
	Hash    string    `json:"hash"`
	Expires time.Time `json:"expires"` // when it would have expired unused
}

// GetSession reads session id.
func GetSession(tx *bolt.Tx, id string) (*Session, error) {
	var s Session
	return &s, GetJSON(tx, bucketSessions, []byte(id), "la sesión", &s)
}

// SessionByRefresh returns the id of the session a refresh token's hash
// leads to: its current one or one it exchanged.
func SessionByRefresh(tx *bolt.Tx, hash string) (string, bool) {
	raw := tx.Bucket(bucketRefresh).Get([]byte(hash))
	return string(raw), raw != nil
}

// PutSession stores s, indexes its current refresh hash (rotated hashes keep
// the entries they had) and removes the index entries of the hashes in drop.
func PutSession(tx *bolt.Tx, s *Session, drop ...string) error {
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
	return PutJSON(tx, bucketSessions, []byte(s.ID), s)
}
