package data

import (
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// User is a person who logs in. Secrets are stored only as hashes: the
// password and temporary password with bcrypt, user API keys with SHA-256
// (they are long random values).
type User struct {
	ID           int64         `json:"id"`
	Username     string        `json:"username"`
	Email        string        `json:"email"`
	PasswordHash []byte        `json:"passwordHash"`
	Temp         *TempPassword `json:"temp,omitempty"`
	Keys         []UserKey     `json:"keys,omitempty"`
	Companies    []int64       `json:"companies"`
}

// TempPassword is a single-use password sent by e-mail on recovery.
type TempPassword struct {
	Hash    []byte    `json:"hash"`
	Expires time.Time `json:"expires"`
	Sent    time.Time `json:"sent"`
}

// UserKey is an API key generated for a user, usable as the login secret.
type UserKey struct {
	ID      int64     `json:"id"`
	Hash    string    `json:"hash"`
	Created time.Time `json:"created"`
}

// BelongsTo reports whether the user may act for company id.
func (u *User) BelongsTo(id int64) bool { return slices.Contains(u.Companies, id) }

// GetUser reads user id.
func GetUser(tx *bolt.Tx, id int64) (*User, error) {
	var u User
	return &u, GetJSON(tx, bucketUsers, IDKey(id), "el usuario", &u)
}

// UserByName reads the user of a username, compared normalized.
func UserByName(tx *bolt.Tx, name string) (*User, error) {
	id, ok := lookup(tx, bucketUsernames, NormalizeIdentifier(name))
	if !ok {
		return nil, NotFound("el usuario")
	}
	return GetUser(tx, id)
}

// PutUser stores u, giving it an id when it has none. ECONFLICT when another
// user has the same normalized username.
func PutUser(tx *bolt.Tx, u *User) error {
	name := NormalizeIdentifier(u.Username)
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
	if err := tx.Bucket(bucketUsernames).Put([]byte(name), IDKey(u.ID)); err != nil {
		return err
	}
	return PutJSON(tx, bucketUsers, IDKey(u.ID), u)
}

// NextUserKeyID takes the id of a new user API key.
func NextUserKeyID(tx *bolt.Tx) (int64, error) { return nextID(tx, bucketUserKeys) }
