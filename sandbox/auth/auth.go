package auth

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/sandbox/data"
	"github.com/cfe-agent/cfe-agent/sandbox/web"
)

// Mailer delivers a plain-text message to one address (the mail room's
// sender): the recovery mail's way out.
type Mailer interface {
	SendText(to, subject, body string) error
}

// Config configures the auth room.
type Config struct {
	DB          *data.DB
	Environment string // EnvSandbox or EnvProduccion
	Now         func() time.Time
	Log         *slog.Logger

	// ClientAddr, when set, decides the client address of every request,
	// before TrustProxy and the connection (a test hook: the command line
	// never sets it). TrustProxy makes it the last X-Forwarded-For hop.
	ClientAddr func(r *http.Request) (netip.Addr, bool)
	TrustProxy bool

	LoginLimits      LoginLimits      // DefaultLoginLimits when zero
	KeyFailureLimits KeyFailureLimits // DefaultKeyFailureLimits for each zero field
	PasswordCost     int              // bcrypt cost; PasswordCost when zero

	Mailer Mailer        // delivers the recovery mail
	Issuer func() string // the JWTs' iss: the service's URL
}

// Service is the auth room: its three parts share the JWT key, the clock and
// the counters.
type Service struct {
	Guard    *Guard
	Sessions *Sessions
	Keys     *Keys
	Counters *Counters
}

// New loads the environment's JWT signing key (creating it on first run)
// and builds the room.
func New(cfg Config) (*Service, error) {
	prefix, other, err := KeyPrefixes(cfg.Environment)
	if err != nil {
		return nil, err
	}
	if cfg.LoginLimits == (LoginLimits{}) {
		cfg.LoginLimits = DefaultLoginLimits
	}
	if err := cfg.LoginLimits.Check(); err != nil {
		return nil, err
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.PasswordCost == 0 {
		cfg.PasswordCost = PasswordCost
	}
	var jwtKey []byte
	if err := cfg.DB.Update(func(tx *bolt.Tx) error {
		var err error
		// HS512 wants a key of at least 512 bits.
		jwtKey, err = data.JWTKey(tx, func() []byte { return randomBytes(64) })
		return err
	}); err != nil {
		return nil, fmt.Errorf("sandbox: JWT key: %w", err)
	}
	counters := &Counters{}
	g := &Guard{db: cfg.DB, env: cfg.Environment, prefix: prefix, other: other, jwtKey: jwtKey, now: cfg.Now, log: cfg.Log,
		clientAddr: cfg.ClientAddr, trustProxy: cfg.TrustProxy, limiter: newKeyLimiter(),
		keyFails: newKeyThrottle(cfg.KeyFailureLimits), counters: counters}
	s := &Sessions{db: cfg.DB, guard: g, now: cfg.Now, log: cfg.Log, cost: cfg.PasswordCost, counters: counters,
		login: newLoginGuard(cfg.LoginLimits, counters, cfg.Log), mailer: cfg.Mailer, issuer: cfg.Issuer}
	k := &Keys{db: cfg.DB, prefix: prefix, now: cfg.Now, log: cfg.Log}
	return &Service{Guard: g, Sessions: s, Keys: k, Counters: counters}, nil
}

// writeTooMany answers 429 with Retry-After in whole seconds (at least 1).
func writeTooMany(w http.ResponseWriter, r *http.Request, code, msg string, retry time.Duration) {
	w.Header().Set("Retry-After", strconv.Itoa(retrySeconds(retry)))
	web.WriteJSON(w, http.StatusTooManyRequests, web.ErrorBody{Error: msg, Code: code, Details: []cfe.FieldError{}, RequestID: web.RequestID(r)})
}
