package sandbox

import (
	"bytes"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/gorilla/mux"
	bolt "go.etcd.io/bbolt"
	"golang.org/x/crypto/bcrypt"

	"github.com/cfe-agent/cfe-agent/cfe"
)

func (s *Server) registerAuthRoutes(r *mux.Router) {
	r.HandleFunc("/api/auth/login", s.handleLogin).Methods(http.MethodPost)
	r.HandleFunc("/api/auth/refresh", s.handleRefresh).Methods(http.MethodPost)
	r.HandleFunc("/auth/refresh", s.handleRefresh).Methods(http.MethodPost)
	r.HandleFunc("/api/auth/revoke", s.authenticated(authJWT, s.writeError, s.handleRevoke)).Methods(http.MethodPost)
	r.HandleFunc("/api/auth/recuperarClave", s.handleRecover).Methods(http.MethodPost)
	r.HandleFunc("/api/v1/usuario/{idUsuario}/apikey", s.authenticated(authJWT, s.writeError, s.handleUserKey)).Methods(http.MethodPost)
	r.HandleFunc("/api/v1/usuario/empresas", s.authenticated(authAny, s.writeError, s.handleCompanies)).Methods(http.MethodGet)
}

// LoginRequest is the body of POST /api/auth/login.
type LoginRequest struct {
	Username string `json:"username"`
	Secret   string `json:"secret"`
}

// TokenResponse answers login and refresh. ExpiresAt is an integer Unix time,
// the JWT's exp, as the real service answers it (its PHP SDK declares it int).
type TokenResponse struct {
	Token        string `json:"token"`
	RefreshToken string `json:"refresh_token"`
	ExpiresAt    int64  `json:"expires_at"`
}

// RefreshRequest is the body of POST /api/auth/refresh and /auth/refresh.
type RefreshRequest struct {
	RefreshToken string `json:"refresh_token"`
}

var (
	errBadLogin   = &cfe.Error{Code: cfe.EUNAUTHORIZED, Message: "usuario o clave incorrectos"}
	errBadRefresh = &cfe.Error{Code: cfe.EUNAUTHORIZED, Message: "el refresh token no es válido, venció o ya se usó"}
	// errReusedRefresh answers a refresh token presented after it was exchanged.
	errReusedRefresh = &cfe.Error{Code: cfe.EUNAUTHORIZED,
		Message: "el refresh token ya se había usado: por seguridad se cerró la sesión; inicie sesión de nuevo"}
)

// dummyHash makes a login for an unknown user cost the same bcrypt work as
// one for a known user.
var dummyHash, _ = bcrypt.GenerateFromPassword([]byte("cfe-sandbox"), passwordCost)

func (s *Server) handleLogin(w http.ResponseWriter, r *http.Request) {
	var req LoginRequest
	if err := decodeJSON(r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := invalid(required("username", req.Username, "secret", req.Secret)...); err != nil {
		s.writeError(w, r, err)
		return
	}
	addr, now := s.clientAddr(r), s.now()
	if retry, blocked := s.guard.blocked(addr, now); blocked {
		writeTooMany(w, r, codeLoginRateLimit, "demasiados intentos fallidos; intente más tarde", retry)
		return
	}
	user, err := s.checkSecret(req.Username, req.Secret, now)
	if err != nil {
		if cfe.ErrorCode(err) == cfe.EUNAUTHORIZED {
			s.guard.fail(addr, normalizeIdentifier(req.Username), now)
		}
		s.writeError(w, r, err)
		return
	}
	s.issueTokens(w, r, user.ID)
}

// checkSecret verifies secret for username: the password, an unexpired
// temporary password (consumed by this login) or a user API key. The bcrypt
// work runs outside any write transaction.
func (s *Server) checkSecret(username, secret string, now time.Time) (*User, error) {
	var u *User
	err := s.db.view(func(tx *bolt.Tx) error {
		var err error
		u, err = userByName(tx, username)
		return err
	})
	if cfe.ErrorCode(err) == cfe.ENOTFOUND {
		_ = bcrypt.CompareHashAndPassword(dummyHash, []byte(secret)) // only to spend the same time
		return nil, errBadLogin
	}
	if err != nil {
		return nil, err
	}
	switch t := u.Temp; {
	case strings.HasPrefix(secret, userKeyPrefix):
		return u, u.checkUserKey(secret)
	case bcrypt.CompareHashAndPassword(u.PasswordHash, []byte(secret)) == nil:
		return u, nil
	case t != nil && now.Before(t.Expires) && bcrypt.CompareHashAndPassword(t.Hash, []byte(secret)) == nil:
		return u, s.consumeTempPassword(u.ID, t.Hash)
	}
	return nil, errBadLogin
}

// consumeTempPassword removes the temporary password whose hash is hash; a
// concurrent login that consumed it first wins.
func (s *Server) consumeTempPassword(userID int64, hash []byte) error {
	return s.db.update(func(tx *bolt.Tx) error {
		u, err := getUser(tx, userID)
		if err != nil {
			return err
		}
		if u.Temp == nil || !bytes.Equal(u.Temp.Hash, hash) {
			return errBadLogin
		}
		u.Temp = nil
		return putUser(tx, u)
	})
}

func (u *User) checkUserKey(secret string) error {
	h := hashSecret(secret)
	for _, k := range u.Keys {
		if sameHash(k.Hash, h) {
			return nil
		}
	}
	return errBadLogin
}

func newSessionID() string { return hex.EncodeToString(randomBytes(16)) }

// issueTokens stores a new session for user and answers its first JWT and
// refresh token.
func (s *Server) issueTokens(w http.ResponseWriter, r *http.Request, user int64) {
	now := s.now()
	sess := &Session{ID: newSessionID(), User: user, Created: now}
	var refresh string
	err := s.db.update(func(tx *bolt.Tx) error {
		refresh, _ = sess.rotate(now)
		return putSession(tx, sess)
	})
	s.answerTokens(w, r, sess, refresh, now, err)
}

// rotate gives the session a new refresh token and returns it. The previous
// one, if any, joins Rotated so that its reuse can be recognized; it returns
// the hashes of rotated tokens it forgets (expired, or beyond maxRotated),
// whose index entries the caller removes.
func (sess *Session) rotate(now time.Time) (refresh string, forgotten []string) {
	if sess.RefreshHash != "" {
		sess.Rotated = append(sess.Rotated, RotatedRefresh{Hash: sess.RefreshHash, Expires: sess.RefreshExpires})
	}
	keep := sess.Rotated[:0]
	for i, r := range sess.Rotated {
		if !now.Before(r.Expires) || len(sess.Rotated)-i > maxRotated {
			forgotten = append(forgotten, r.Hash)
			continue
		}
		keep = append(keep, r)
	}
	sess.Rotated = keep
	refresh = newSecret("")
	sess.RefreshHash = hashSecret(refresh)
	sess.RefreshExpires = now.Add(refreshTTL)
	return refresh, forgotten
}

// end revokes sess and returns every refresh hash that led to it, current
// and rotated, for the caller to remove from the index.
func (sess *Session) end() []string {
	hashes := []string{sess.RefreshHash}
	for _, r := range sess.Rotated {
		hashes = append(hashes, r.Hash)
	}
	sess.Revoked, sess.RefreshHash, sess.Rotated = true, "", nil
	return hashes
}

// answerTokens answers a new JWT of sess with its refresh token, or err.
func (s *Server) answerTokens(w http.ResponseWriter, r *http.Request, sess *Session, refresh string, now time.Time, err error) {
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	token, expires, err := s.signJWT(sess, now)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, TokenResponse{Token: token, RefreshToken: refresh, ExpiresAt: expires.Unix()})
}

// signJWT returns an HS512 JWT of sess valid for jwtTTL from now, with the
// real service's claims (iat, nbf, exp, iss, userName, rol, empresas) and the
// sandbox's own (sub, sid, env, jti).
func (s *Server) signJWT(sess *Session, now time.Time) (string, time.Time, error) {
	var user *User
	if err := s.db.view(func(tx *bolt.Tx) error {
		var err error
		user, err = getUser(tx, sess.User)
		return err
	}); err != nil {
		return "", time.Time{}, err
	}
	now = now.Truncate(time.Second)
	exp := now.Add(jwtTTL)
	claims := sessionClaims{
		Session:     sess.ID,
		Environment: s.cfg.Environment,
		UserName:    user.Username,
		Rol:         jwtRole,
		Empresas:    append([]int64{}, user.Companies...),
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    s.issuer(),
			Subject:   strconv.FormatInt(sess.User, 10),
			IssuedAt:  jwt.NewNumericDate(now),
			NotBefore: jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(exp),
			ID:        newSessionID(),
		},
	}
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS512, claims).SignedString(s.jwtKey)
	return tok, exp.UTC(), err
}

// issuer is the JWTs' iss: the service's URL, as the real service's tokens
// carry it (the address it listens on; the configured one when it serves
// through Handler only). Authentication does not read it: the signing key
// and the live session are what authenticate a JWT.
func (s *Server) issuer() string {
	if s.ln != nil {
		return s.URL()
	}
	return "http://" + s.cfg.Listen
}

// handleRefresh exchanges a refresh token for a new JWT and a new refresh
// token; the one presented becomes invalid.
func (s *Server) handleRefresh(w http.ResponseWriter, r *http.Request) {
	var req RefreshRequest
	if err := decodeJSON(r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := invalid(required("refresh_token", req.RefreshToken)...); err != nil {
		s.writeError(w, r, err)
		return
	}
	// Look up and rotate in one transaction, so a token is exchanged once
	// even by concurrent requests. A token the session already exchanged
	// means two parties hold the session's tokens (one of them stole it):
	// the whole session ends, its current refresh token and JWTs included,
	// and both must log in again (token theft detection).
	now, old := s.now(), hashSecret(req.RefreshToken)
	var sess *Session
	var refresh string
	reused := false
	err := s.db.update(func(tx *bolt.Tx) error {
		raw := tx.Bucket(bucketRefresh).Get([]byte(old))
		if raw == nil {
			return errBadRefresh
		}
		var err error
		if sess, err = getSession(tx, string(raw)); err != nil {
			return err
		}
		if sess.Revoked {
			return errBadRefresh
		}
		if !sameHash(sess.RefreshHash, old) {
			if !sess.rotatedLive(old, now) {
				return errBadRefresh // an exchanged token past its own expiry proves nothing
			}
			reused = true
			return putSession(tx, sess, sess.end()...)
		}
		if !now.Before(sess.RefreshExpires) {
			return errBadRefresh
		}
		var forgotten []string
		refresh, forgotten = sess.rotate(now)
		return putSession(tx, sess, forgotten...)
	})
	switch {
	case cfe.ErrorCode(err) == cfe.ENOTFOUND:
		err = errBadRefresh
	case err == nil && reused:
		s.metrics.refreshReuse.Add(1)
		s.log.Warn("rotated refresh token reused: session revoked", "session", sess.ID, "user", sess.User)
		err = errReusedRefresh
	}
	s.answerTokens(w, r, sess, refresh, now, err)
}

// RevokeResponse answers POST /api/auth/revoke.
type RevokeResponse struct {
	Revocado bool `json:"revocado"`
}

// handleRevoke ends the caller's session: its JWTs and its refresh token stop
// working.
func (s *Server) handleRevoke(w http.ResponseWriter, r *http.Request) {
	p := principalOf(r)
	err := s.db.update(func(tx *bolt.Tx) error {
		sess, err := getSession(tx, p.session)
		if err != nil {
			return err
		}
		return putSession(tx, sess, sess.end()...)
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, RevokeResponse{Revocado: true})
}

// UserKeyResponse answers POST /api/v1/usuario/{idUsuario}/apikey. The key is
// shown only here.
type UserKeyResponse struct {
	ID     int64  `json:"id"`
	ApiKey string `json:"ApiKey"`
}

// handleUserKey generates an API key for the calling user, usable as the
// secret of login. A user may generate keys only for themself.
func (s *Server) handleUserKey(w http.ResponseWriter, r *http.Request) {
	p := principalOf(r)
	id, err := strconv.ParseInt(mux.Vars(r)["idUsuario"], 10, 64)
	if err != nil || id <= 0 {
		s.writeError(w, r, invalid(cfe.FieldError{Campo: "idUsuario", Mensaje: "debe ser un número mayor que cero"}))
		return
	}
	if id != p.user.ID {
		s.writeError(w, r, &cfe.Error{Code: cfe.EFORBIDDEN, Message: "solo puede generar API keys para su propio usuario"})
		return
	}
	key := newSecret(userKeyPrefix)
	var resp UserKeyResponse
	err = s.db.update(func(tx *bolt.Tx) error {
		u, err := getUser(tx, id)
		if err != nil {
			return err
		}
		kid, err := nextID(tx, bucketUserKeys)
		if err != nil {
			return err
		}
		u.Keys = append(u.Keys, UserKey{ID: kid, Hash: hashSecret(key), Created: s.now()})
		resp = UserKeyResponse{ID: kid, ApiKey: key}
		return putUser(tx, u)
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, resp)
}

// CompanyResponse is one company of GET /api/v1/usuario/empresas.
type CompanyResponse struct {
	IdEmpresa     int64   `json:"idEmpresa"`
	RUC           string  `json:"ruc"`
	RazonSocial   string  `json:"razonSocial"`
	PuntosEmision []int64 `json:"puntosEmision"` // idPde of each issuing point
}

// handleCompanies lists the caller's companies: the user's, or the key's one.
func (s *Server) handleCompanies(w http.ResponseWriter, r *http.Request) {
	p := principalOf(r)
	ids := []int64{}
	if p.key != nil {
		ids = append(ids, p.key.Company)
	} else {
		ids = append(ids, p.user.Companies...)
	}
	out := make([]CompanyResponse, 0, len(ids))
	err := s.db.view(func(tx *bolt.Tx) error {
		for _, id := range ids {
			c, err := getCompany(tx, id)
			if err != nil {
				return err
			}
			points, err := companyPoints(tx, c.ID)
			if err != nil {
				return err
			}
			out = append(out, CompanyResponse{IdEmpresa: c.ID, RUC: c.RUC, RazonSocial: c.RazonSocial, PuntosEmision: points})
		}
		return nil
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, out)
}
