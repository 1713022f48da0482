package auth

import (
	"log/slog"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/sandbox/data"
	"github.com/cfe-agent/cfe-agent/sandbox/web"
)

// Guard authenticates requests: a JWT of a live session, or a company API key
// of this environment (rate-limited per key, and throttled per address that
// sends invalid ones). It puts the Principal in the request's context.
type Guard struct {
	db            *data.DB
	env           string
	prefix, other string // this environment's key prefix, and the other's
	jwtKey        []byte
	now           func() time.Time
	log           *slog.Logger
	clientAddr    func(r *http.Request) (netip.Addr, bool)
	trustProxy    bool
	limiter       *keyLimiter
	keyFails      keyThrottle
	counters      *Counters
}

// Which credentials a route accepts.
type authMode int

const (
	authJWT       authMode = iota // a JWT only (key management, sessions)
	authAny                       // a JWT or an API key
	authAnyPDFKey                 // as authAny, plus "Authorization: ApiKey <key>"
)

var (
	errNoCredentials = &cfe.Error{Code: cfe.EUNAUTHORIZED, Message: "falta la autenticación: envíe un JWT o una API key"}
	errBadToken      = &cfe.Error{Code: cfe.EUNAUTHORIZED, Message: "el token no es válido o venció"}
	errBadKey        = &cfe.Error{Code: cfe.EUNAUTHORIZED, Message: "API key inválida"}
	errRevokedKey    = &cfe.Error{Code: cfe.EUNAUTHORIZED, Message: "API key revocada"}
	errOtherEnvKey   = &cfe.Error{Code: cfe.EUNAUTHORIZED, Message: "la API key no corresponde a este ambiente"}
	errKeyNotAllowed = &cfe.Error{Code: cfe.EFORBIDDEN, Message: "esta operación requiere un JWT; no acepta API keys"}
)

// JWT accepts a JWT only (key management, sessions); errors in the common
// shape.
func (g *Guard) JWT(h http.HandlerFunc) http.HandlerFunc {
	return g.authenticated(authJWT, g.writeError, h)
}

// Any accepts a JWT or a company key; errors in the common shape.
func (g *Guard) Any(h http.HandlerFunc) http.HandlerFunc {
	return g.authenticated(authAny, g.writeError, h)
}

// PDF is Any plus "Authorization: ApiKey <key>", with errors in the PDF
// endpoint's shape (interface §4.3.1).
func (g *Guard) PDF(h http.HandlerFunc) http.HandlerFunc {
	return g.authenticated(authAnyPDFKey, func(w http.ResponseWriter, r *http.Request, err error) {
		web.WritePDFError(g.log, w, r, err)
	}, h)
}

func (g *Guard) writeError(w http.ResponseWriter, r *http.Request, err error) {
	web.WriteError(g.log, w, r, err)
}

// credential extracts the API key or JWT a request carries. A value is a key
// when it comes in X-API-Key, or when it starts with an environment prefix.
func credential(r *http.Request, mode authMode) (key, token string) {
	if k := r.Header.Get("X-API-Key"); k != "" {
		return k, ""
	}
	scheme, value, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	value = strings.TrimSpace(value)
	switch {
	case strings.EqualFold(scheme, "Bearer") && (strings.HasPrefix(value, prefixTest) || strings.HasPrefix(value, prefixLive)):
		return value, ""
	case strings.EqualFold(scheme, "Bearer"):
		return "", value
	case strings.EqualFold(scheme, "ApiKey") && mode == authAnyPDFKey:
		return value, ""
	}
	return "", ""
}

// authenticated wraps h with authentication in mode. Key-authenticated
// requests pass the key's rate limits and carry the X-RateLimit-* headers.
// Errors are written by onErr (the route's error shape).
func (g *Guard) authenticated(mode authMode, onErr func(http.ResponseWriter, *http.Request, error), h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		key, token := credential(r, mode)
		var p *Principal
		var err error
		switch {
		case key != "" && mode == authJWT:
			err = errKeyNotAllowed
		case key != "":
			if g.keyThrottled(w, r) {
				return
			}
			p, err = g.authKey(key)
			if g.keyFailed(w, r, err) {
				return
			}
			// A valid key is decided after the failures counted while it was
			// checked (keyThrottled again): the answer must not tell it apart.
			if err == nil && (g.keyThrottled(w, r) || !g.admitKey(w, r, p.Key)) {
				return
			}
		case token != "":
			p, err = g.authJWT(token)
		default:
			err = errNoCredentials
		}
		if err != nil {
			onErr(w, r, err)
			return
		}
		h(w, withPrincipal(r, p))
	}
}

// authKey finds the active company key k.
func (g *Guard) authKey(k string) (*Principal, error) {
	if !strings.HasPrefix(k, g.prefix) {
		if strings.HasPrefix(k, g.other) {
			return nil, errOtherEnvKey
		}
		return nil, errBadKey
	}
	var key *data.APIKey
	err := g.db.View(func(tx *bolt.Tx) error {
		id, ok := data.KeyByHash(tx, HashSecret(k))
		if !ok {
			return errBadKey
		}
		var err error
		key, err = data.GetKey(tx, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	if key.Revoked != nil {
		return nil, errRevokedKey
	}
	return &Principal{Key: key}, nil
}

// admitKey applies key's rate limits, sets the X-RateLimit-* headers and, when
// a limit is exceeded, answers 429 and returns false.
func (g *Guard) admitKey(w http.ResponseWriter, r *http.Request, key *data.APIKey) bool {
	var c *data.Company
	if err := g.db.View(func(tx *bolt.Tx) error {
		var err error
		c, err = data.GetCompany(tx, key.Company)
		return err
	}); err != nil {
		g.writeError(w, r, err)
		return false
	}
	perMinute, perHour := key.Limits(c)
	st, ok := g.limiter.take(key.ID, perMinute, perHour, g.now())
	st.setHeaders(w.Header())
	if !ok {
		g.counters.keyRateLimited.Add(1)
		writeTooMany(w, r, codeKeyRateLimit, "se superó el límite de solicitudes de la API key", st.retry)
	}
	return ok
}

// sessionClaims are the claims of the sandbox's JWTs: the real service's
// (userName, rol, empresas and the registered iat, nbf, exp, iss) and the
// sandbox's own (sid, env, sub, jti), which authentication reads.
type sessionClaims struct {
	Session     string  `json:"sid"`
	Environment string  `json:"env"`
	UserName    string  `json:"userName"`
	Rol         string  `json:"rol"`
	Empresas    []int64 `json:"empresas"`
	jwt.RegisteredClaims
}

// authJWT validates an HS512 JWT of this environment whose session is live.
func (g *Guard) authJWT(token string) (*Principal, error) {
	var claims sessionClaims
	_, err := jwt.ParseWithClaims(token, &claims, func(*jwt.Token) (any, error) { return g.jwtKey, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS512.Alg()}),
		jwt.WithExpirationRequired(),
		jwt.WithTimeFunc(g.now))
	if err != nil || claims.Environment != g.env {
		return nil, errBadToken
	}
	p := &Principal{Session: claims.Session}
	err = g.db.View(func(tx *bolt.Tx) error {
		sess, err := data.GetSession(tx, claims.Session)
		if err != nil || sess.Revoked || strconv.FormatInt(sess.User, 10) != claims.Subject {
			return errBadToken
		}
		p.User, err = data.GetUser(tx, sess.User)
		return err
	})
	if err != nil {
		if cfe.ErrorCode(err) == cfe.ENOTFOUND {
			return nil, errBadToken
		}
		return nil, err
	}
	return p, nil
}

// keyThrottled answers 429, and returns true, when the caller's address has
// used up its tries of API keys. A valid key from it waits too: were it let
// through, a guesser would lose nothing by being throttled.
func (g *Guard) keyThrottled(w http.ResponseWriter, r *http.Request) bool {
	retry, blocked := g.keyFails.blocked(g.ClientAddr(r), g.now())
	if blocked {
		g.refuseKeyThrottled(w, r, retry)
	}
	return blocked
}

func (g *Guard) refuseKeyThrottled(w http.ResponseWriter, r *http.Request, retry time.Duration) {
	g.counters.keyFailuresBlocked.Add(1)
	writeTooMany(w, r, codeKeyFailures, "demasiadas API keys inválidas desde esta dirección; intente más tarde", retry)
}

// keyFailed counts an API key that did not authenticate (err), and reports
// whether the address had no try left for it: then it has answered 429, so
// that concurrent guesses learn no more outcomes than the address has tries.
func (g *Guard) keyFailed(w http.ResponseWriter, r *http.Request, err error) bool {
	if cfe.ErrorCode(err) != cfe.EUNAUTHORIZED {
		return false
	}
	retry, blocked := g.keyFails.fail(g.ClientAddr(r), g.now())
	if blocked {
		g.refuseKeyThrottled(w, r, retry)
	}
	return blocked
}

// ClientAddr is the caller's address: the test hook when set, the last
// X-Forwarded-For hop when TrustProxy, else the connection's peer.
func (g *Guard) ClientAddr(r *http.Request) netip.Addr {
	if g.clientAddr != nil {
		if a, ok := g.clientAddr(r); ok {
			return a.Unmap()
		}
	}
	if g.trustProxy {
		if a, ok := lastForwarded(r.Header.Values("X-Forwarded-For")); ok {
			return a
		}
	}
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}
