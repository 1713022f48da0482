package auth

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
)

// randomBytes returns n bytes from crypto/rand, whose Read never fails.
func randomBytes(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

// NewSecret returns prefix followed by 32 random bytes, URL-safe.
func NewSecret(prefix string) string {
	return prefix + base64.RawURLEncoding.EncodeToString(randomBytes(secretBytes))
}

// HashSecret is how long random secrets (API keys, refresh tokens) are
// stored: they carry enough entropy that a fast hash cannot be reversed.
func HashSecret(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// sameHash compares two hashes in constant time.
func sameHash(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// KeyHint is what a listing shows of a key: its prefix and four characters.
func KeyHint(key, prefix string) string {
	const shown = 4
	if len(key) < len(prefix)+shown {
		return prefix
	}
	return key[:len(prefix)+shown] + "…"
}
