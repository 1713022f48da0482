package sandbox

import (
	"time"

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

// belongsTo reports whether the user may act for company id.
func (u *User) belongsTo(id int64) bool {
	for _, c := range u.Companies {
		if c == id {
			return true
		}
	}
	return false
}

// Company is an emitter. PerMinute and PerHour, when positive, are the
// default rate limits of its API keys. FechaEmisor or Resolucion, WebURL and
// OmitIVAConstancia are its printed footer's data (pdf.Footer); companies
// stored before they existed read them as zero: no Fecha emisor nor
// resolution, e-Tickets verified at www.dgi.gub.uy, and the constancia.
type Company struct {
	ID                int64            `json:"id"`
	RUC               string           `json:"ruc"`
	RazonSocial       string           `json:"razonSocial"`
	FormatoRepImpresa string           `json:"formatoRepImpresa"`
	DomFiscal         string           `json:"domFiscal"`
	Ciudad            string           `json:"ciudad"`
	Departamento      string           `json:"departamento"`
	Templates         []TemplateConfig `json:"templates,omitempty"`
	PerMinute         int              `json:"perMinute,omitempty"`
	PerHour           int              `json:"perHour,omitempty"`
	FechaEmisor       cfe.Date         `json:"fechaEmisor,omitzero"`
	Resolucion        string           `json:"resolucion,omitempty"`
	WebURL            string           `json:"webUrl,omitempty"`
	OmitIVAConstancia bool             `json:"omitIvaConstancia,omitempty"`
}

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
	// revokes the session (see handleRefresh).
	Rotated []RotatedRefresh `json:"rotated,omitempty"`
}

// rotatedLive reports whether hash is a refresh token sess already exchanged
// that would still be valid at now: only such a token's reuse means it was
// copied (the list is pruned at rotations only, so it may hold expired ones).
func (sess *Session) rotatedLive(hash string, now time.Time) bool {
	for _, r := range sess.Rotated {
		if sameHash(r.Hash, hash) {
			return now.Before(r.Expires)
		}
	}
	return false
}

// RotatedRefresh is a refresh token a session already exchanged.
type RotatedRefresh struct {
	Hash    string    `json:"hash"`
	Expires time.Time `json:"expires"` // when it would have expired unused
}
