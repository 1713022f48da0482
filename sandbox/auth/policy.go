package auth

import (
	"fmt"
	"time"
)

// Choices the interface leaves open ("not shown") about authentication. Each
// is described in docs/sandbox.md; change them here and only here.

// Environments and their API key prefixes (interface §5.2 rule 2).
const (
	EnvSandbox    = "sandbox"
	EnvProduccion = "produccion"

	prefixTest = "xx_test_"
	prefixLive = "xx_live_"

	// userKeyPrefix marks a user API key (usable only as a login secret). It
	// is deliberately not an environment prefix, so it is never taken for a
	// company key.
	userKeyPrefix = "xx_usr_"
)

// KeyPrefixes returns the API key prefix of environment env and the other
// environment's.
func KeyPrefixes(env string) (own, other string, err error) {
	switch env {
	case EnvSandbox:
		return prefixTest, prefixLive, nil
	case EnvProduccion:
		return prefixLive, prefixTest, nil
	}
	return "", "", fmt.Errorf("sandbox: unknown environment %q (want %q or %q)", env, EnvSandbox, EnvProduccion)
}

// Sessions.
const (
	jwtTTL           = 6 * time.Hour       // interface §5.1
	refreshTTL       = 30 * 24 * time.Hour // lifetime of a refresh token
	tempPasswordTTL  = 30 * time.Minute    // password recovery: a single-use temporary password
	secretBytes      = 32                  // random bytes in keys, refresh tokens and temporary passwords
	recoveryCooldown = time.Minute         // at most one recovery mail per user in this time
)

// jwtRole is the rol claim of every JWT: the real service names the user's
// role there ("Supervisor de empresa"); the sandbox has one role.
const jwtRole = "Supervisor de empresa"

// maxRotated caps the exchanged refresh tokens a session remembers to
// recognize their reuse (one a day for a month, with room to spare).
const maxRotated = 64

// PasswordCost is the bcrypt cost of stored passwords.
const PasswordCost = 10

// maxKeyLimit bounds the per-minute and per-hour limits a key may be given.
const maxKeyLimit = 1_000_000

// LoginLimits are the login-protection thresholds (interface §8.3). A window
// is a sliding window over failures.
type LoginLimits struct {
	Window time.Duration
	// PerIP and PerPrefix: failures from one address, or from one IPv4 /24 or
	// IPv6 /64, after which further attempts from it get 429.
	PerIP     int
	PerPrefix int
	// AlertFailures failures against one normalized identifier, coming from at
	// least AlertNetworks distinct prefixes, raise an alert. They never block.
	AlertFailures int
	AlertNetworks int
}

// Check refuses limits that would disable the protection by accident.
func (l LoginLimits) Check() error {
	if l.Window <= 0 || l.PerIP < 1 || l.PerPrefix < 1 || l.AlertFailures < 1 || l.AlertNetworks < 1 {
		return fmt.Errorf("sandbox: login limits need a positive window and thresholds of at least 1 (got %+v)", l)
	}
	return nil
}

// DefaultLoginLimits are the thresholds used when Config.LoginLimits is zero.
var DefaultLoginLimits = LoginLimits{
	Window:        15 * time.Minute,
	PerIP:         10,
	PerPrefix:     30,
	AlertFailures: 20,
	AlertNetworks: 3,
}

// Codes of the error body that are not cfe codes.
const (
	codeKeyRateLimit   = "api_key_rate_limit_exceeded" // interface §7 rule 2
	codeLoginRateLimit = "login_rate_limited"
	codeKeyFailures    = "api_key_failures_rate_limited"
)
