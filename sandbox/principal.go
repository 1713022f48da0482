package sandbox

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/golang-jwt/jwt/v5"
	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// principal is the authenticated caller: a user holding a JWT, or a company
// API key.
type principal struct {
	user    *User   // JWT
	session string  // JWT
	key     *APIKey // API key
}

type principalKey struct{}

func principalOf(r *http.Request) *principal {
	p, _ := r.Context().Value(principalKey{}).(*principal)
	return p
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
func (s *Server) authenticated(mode authMode, onErr func(http.ResponseWriter, *http.Request, error), h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		key, token := credential(r, mode)
		var p *principal
		var err error
		switch {
		case key != "" && mode == authJWT:
			err = errKeyNotAllowed
		case key != "":
			if s.keyThrottled(w, r) {
				return
			}
			p, err = s.authKey(key)
			if s.keyFailed(w, r, err) {
				return
			}
			// A valid key is decided after the failures counted while it was
			// checked (keyThrottled again): the answer must not tell it apart.
			if err == nil && (s.keyThrottled(w, r) || !s.admitKey(w, r, p.key)) {
				return
			}
		case token != "":
			p, err = s.authJWT(token)
		default:
			err = errNoCredentials
		}
		if err != nil {
			onErr(w, r, err)
			return
		}
		h(w, r.WithContext(context.WithValue(r.Context(), principalKey{}, p)))
	}
}

// authKey finds the active company key k.
func (s *Server) authKey(k string) (*principal, error) {
	if !strings.HasPrefix(k, s.prefix) {
		if strings.HasPrefix(k, s.other) {
			return nil, errOtherEnvKey
		}
		return nil, errBadKey
	}
	var key *APIKey
	err := s.db.view(func(tx *bolt.Tx) error {
		id, ok := lookup(tx, bucketKeyHashes, hashSecret(k))
		if !ok {
			return errBadKey
		}
		var err error
		key, err = getKey(tx, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	if key.Revoked != nil {
		return nil, errRevokedKey
	}
	return &principal{key: key}, nil
}

// admitKey applies key's rate limits, sets the X-RateLimit-* headers and, when
// a limit is exceeded, answers 429 and returns false.
func (s *Server) admitKey(w http.ResponseWriter, r *http.Request, key *APIKey) bool {
	var c *Company
	if err := s.db.view(func(tx *bolt.Tx) error {
		var err error
		c, err = getCompany(tx, key.Company)
		return err
	}); err != nil {
		s.writeError(w, r, err)
		return false
	}
	perMinute, perHour := key.limits(c)
	st, ok := s.limiter.take(key.ID, perMinute, perHour, s.now())
	st.setHeaders(w.Header())
	if !ok {
		s.metrics.keyRateLimited.Add(1)
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
func (s *Server) authJWT(token string) (*principal, error) {
	var claims sessionClaims
	_, err := jwt.ParseWithClaims(token, &claims, func(*jwt.Token) (any, error) { return s.jwtKey, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS512.Alg()}),
		jwt.WithExpirationRequired(),
		jwt.WithTimeFunc(s.now))
	if err != nil || claims.Environment != s.cfg.Environment {
		return nil, errBadToken
	}
	p := &principal{session: claims.Session}
	err = s.db.view(func(tx *bolt.Tx) error {
		sess, err := getSession(tx, claims.Session)
		if err != nil || sess.Revoked || strconv.FormatInt(sess.User, 10) != claims.Subject {
			return errBadToken
		}
		p.user, err = getUser(tx, sess.User)
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

// company resolves the company a request acts for (interface §5.2 rule 3):
// a key's own company, which a sent idEmpresa must equal (else 403); for a
// JWT the sent idEmpresa, which must be one of the user's companies (403),
// or the user's only company when none is sent (400 when ambiguous).
// idEmpresa 0 is "not sent": real callers send it so when they have no
// company configured (the vendor's PHP SDK does).
func (p *principal) company(sent string) (int64, error) {
	var id int64
	if sent != "" {
		n, err := strconv.ParseInt(sent, 10, 64)
		if err != nil || n < 0 {
			return 0, invalid(cfe.FieldError{Campo: "idEmpresa", Mensaje: "debe ser un número mayor que cero"})
		}
		id = n
	}
	switch {
	case p.key != nil && id != 0 && id != p.key.Company:
		return 0, errOtherCompany
	case p.key != nil:
		return p.key.Company, nil
	case id != 0 && !p.user.belongsTo(id):
		return 0, errOtherCompany
	case id != 0:
		return id, nil
	case len(p.user.Companies) == 1:
		return p.user.Companies[0], nil
	}
	return 0, invalid(cfe.FieldError{Campo: "idEmpresa", Mensaje: "es obligatorio: el usuario tiene más de una empresa (o ninguna)"})
}

var errOtherCompany = &cfe.Error{Code: cfe.EFORBIDDEN, Message: "no tiene acceso a la empresa indicada"}
