package profiles

import (
	"errors"
	"strings"
	"unicode"

	"golang.org/x/crypto/bcrypt"
)

// Caja configures the shop's own screens (/caja).
type Caja struct {
	// SupervisorPINHash is the bcrypt hash of the supervisor's PIN, which
	// credit notes issued from the /caja page ask for (HashPIN makes it:
	// `cfe-agent caja pin`). Without it the page cannot issue credit notes.
	// The PIN itself is never stored.
	SupervisorPINHash string `yaml:"supervisor_pin_hash,omitempty"`
}

// PIN lengths HashPIN accepts: digits only.
const (
	minPIN = 4
	maxPIN = 12
)

// HashPIN checks a supervisor PIN (4 to 12 digits) and returns its bcrypt
// hash for Caja.SupervisorPINHash. The error is in Spanish.
func HashPIN(pin string) (string, error) {
	if len(pin) < minPIN || len(pin) > maxPIN || strings.IndexFunc(pin, func(r rune) bool { return !unicode.IsDigit(r) || r > '9' }) >= 0 {
		return "", errors.New("el PIN debe tener de 4 a 12 dígitos")
	}
	h, err := bcrypt.GenerateFromPassword([]byte(pin), bcrypt.DefaultCost)
	if err != nil {
		return "", err
	}
	return string(h), nil
}

// HasPIN reports whether a supervisor PIN is configured.
func (c Caja) HasPIN() bool { return c.SupervisorPINHash != "" }

// CheckPIN reports whether pin is the supervisor's PIN; false when none is
// configured. It takes bcrypt's time whatever the answer.
func (c Caja) CheckPIN(pin string) bool {
	if c.SupervisorPINHash == "" || pin == "" || len(pin) > 72 {
		return false
	}
	return bcrypt.CompareHashAndPassword([]byte(c.SupervisorPINHash), []byte(pin)) == nil
}

// caja checks that a configured hash is a bcrypt hash.
func (v *validator) caja(at string, c Caja) {
	if c.SupervisorPINHash == "" {
		return
	}
	if _, err := bcrypt.Cost([]byte(c.SupervisorPINHash)); err != nil {
		v.fail(at+".supervisor_pin_hash", "no es un hash bcrypt: genérelo con «cfe-agent caja pin»")
	}
}
