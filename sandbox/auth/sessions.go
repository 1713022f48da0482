package auth

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/gorilla/mux"
	bolt "go.etcd.io/bbolt"
	"golang.org/x/crypto/bcrypt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/sandbox/data"
	"github.com/cfe-agent/cfe-agent/sandbox/web"
)

// Sessions serves logins and what hangs on them (interface §5): login,
// refresh, revoke, password recovery, user API keys and the caller's
// companies.
type Sessions struct {
	db       *data.DB
	guard    *Guard // the JWT key and the client address
	now      func() time.Time
	log      *slog.Logger
	cost     int
	counters *Counters
	login    *loginGuard
	mailer   Mailer
	issuer   func() string
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
var dummyHash, _ = bcrypt.GenerateFromPassword([]byte("cfe-sandbox"), PasswordCost)

func (s *Sessions) writeError(w http.ResponseWriter, r *http.Request, err error) {
	web.WriteError(s.log, w, r, err)
}

// HandleLogin is POST /api/auth/login.
func (s *Sessions) HandleLogin(w http.ResponseWriter, r *http.Request) {
	var req LoginRequest
	if err := web.DecodeJSON(r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := web.Invalid(web.Required("username", req.Username, "secret", req.Secret)...); err != nil {
		s.writeError(w, r, err)
		return
	}
	addr, now := s.guard.ClientAddr(r), s.now()
	if retry, blocked := s.login.blocked(addr, now); blocked {
		writeTooMany(w, r, codeLoginRateLimit, "demasiados intentos fallidos; intente más tarde", retry)
		return
	}
	user, err := s.checkSecret(req.Username, req.Secret, now)
	if err != nil {
		if cfe.ErrorCode(err) == cfe.EUNAUTHORIZED {
			s.login.fail(addr, data.NormalizeIdentifier(req.Username), now)
		}
		s.writeError(w, r, err)
		return
	}
	s.issueTokens(w, r, user.ID)
}

// checkSecret verifies secret for username: the password, an unexpired
// temporary password (consumed by this login) or a user API key. The bcrypt
// work runs outside any write transaction.
func (s *Sessions) checkSecret(username, secret string, now time.Time) (*data.User, error) {
	var u *data.User
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		u, err = data.UserByName(tx, username)
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
		return u, checkUserKey(u, secret)
	case bcrypt.CompareHashAndPassword(u.PasswordHash, []byte(secret)) == nil:
		return u, nil
	case t != nil && now.Before(t.Expires) && bcrypt.CompareHashAndPassword(t.Hash, []byte(secret)) == nil:
		return u, s.consumeTempPassword(u.ID, t.Hash)
	}
	return nil, errBadLogin
}

// consumeTempPassword removes the temporary password whose hash is hash; a
// concurrent login that consumed it first wins.
func (s *Sessions) consumeTempPassword(userID int64, hash []byte) error {
	return s.db.Update(func(tx *bolt.Tx) error {
		u, err := data.GetUser(tx, userID)
		if err != nil {
			return err
		}
		if u.Temp == nil || !bytes.Equal(u.Temp.Hash, hash) {
			return errBadLogin
		}
		u.Temp = nil
		return data.PutUser(tx, u)
	})
}

func checkUserKey(u *data.User, secret string) error {
	h := HashSecret(secret)
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
func (s *Sessions) issueTokens(w http.ResponseWriter, r *http.Request, user int64) {
	now := s.now()
	sess := &data.Session{ID: newSessionID(), User: user, Created: now}
	var refresh string
	err := s.db.Update(func(tx *bolt.Tx) error {
		refresh, _ = rotate(sess, now)
		return data.PutSession(tx, sess)
	})
	s.answerTokens(w, r, sess, refresh, now, err)
}

// rotate gives the session a new refresh token and returns it. The previous
// one, if any, joins Rotated so that its reuse can be recognized; it returns
// the hashes of rotated tokens it forgets (expired, or beyond maxRotated),
// whose index entries the caller removes.
func rotate(sess *data.Session, now time.Time) (refresh string, forgotten []string) {
	if sess.RefreshHash != "" {
		sess.Rotated = append(sess.Rotated, data.RotatedRefresh{Hash: sess.RefreshHash, Expires: sess.RefreshExpires})
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
	refresh = NewSecret("")
	sess.RefreshHash = HashSecret(refresh)
	sess.RefreshExpires = now.Add(refreshTTL)
	return refresh, forgotten
}

// end revokes sess and returns every refresh hash that led to it, current
// and rotated, for the caller to remove from the index.
func end(sess *data.Session) []string {
	hashes := []string{sess.RefreshHash}
	for _, r := range sess.Rotated {
		hashes = append(hashes, r.Hash)
	}
	sess.Revoked, sess.RefreshHash, sess.Rotated = true, "", nil
	return hashes
}

// rotatedLive reports whether hash is a refresh token sess already exchanged
// that would still be valid at now: only such a token's reuse means it was
// copied (the list is pruned at rotations only, so it may hold expired ones).
func rotatedLive(sess *data.Session, hash string, now time.Time) bool {
	for _, r := range sess.Rotated {
		if sameHash(r.Hash, hash) {
			return now.Before(r.Expires)
		}
	}
	return false
}

// answerTokens answers a new JWT of sess with its refresh token, or err.
func (s *Sessions) answerTokens(w http.ResponseWriter, r *http.Request, sess *data.Session, refresh string, now time.Time, err error) {
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	token, expires, err := s.signJWT(sess, now)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	web.WriteJSON(w, http.StatusOK, TokenResponse{Token: token, RefreshToken: refresh, ExpiresAt: expires.Unix()})
}

// signJWT returns an HS512 JWT of sess valid for jwtTTL from now, with the
// real service's claims (iat, nbf, exp, iss, userName, rol, empresas) and the
// sandbox's own (sub, sid, env, jti). iss is the service's URL, as the real
// service's tokens carry it; authentication does not read it: the signing
// key and the live session are what authenticate a JWT.
func (s *Sessions) signJWT(sess *data.Session, now time.Time) (string, time.Time, error) {
	var user *data.User
	if err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		user, err = data.GetUser(tx, sess.User)
		return err
	}); err != nil {
		return "", time.Time{}, err
	}
	now = now.Truncate(time.Second)
	exp := now.Add(jwtTTL)
	claims := sessionClaims{
		Session:     sess.ID,
		Environment: s.guard.env,
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
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS512, claims).SignedString(s.guard.jwtKey)
	return tok, exp.UTC(), err
}

// HandleRefresh is POST /api/auth/refresh and /auth/refresh: it exchanges a
// refresh token for a new JWT and a new refresh token; the one presented
// becomes invalid.
func (s *Sessions) HandleRefresh(w http.ResponseWriter, r *http.Request) {
	var req RefreshRequest
	if err := web.DecodeJSON(r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := web.Invalid(web.Required("refresh_token", req.RefreshToken)...); err != nil {
		s.writeError(w, r, err)
		return
	}
	// Look up and rotate in one transaction, so a token is exchanged once
	// even by concurrent requests. A token the session already exchanged
	// means two parties hold the session's tokens (one of them stole it):
	// the whole session ends, its current refresh token and JWTs included,
	// and both must log in again (token theft detection).
	now, old := s.now(), HashSecret(req.RefreshToken)
	var sess *data.Session
	var refresh string
	reused := false
	err := s.db.Update(func(tx *bolt.Tx) error {
		id, ok := data.SessionByRefresh(tx, old)
		if !ok {
			return errBadRefresh
		}
		var err error
		if sess, err = data.GetSession(tx, id); err != nil {
			return err
		}
		if sess.Revoked {
			return errBadRefresh
		}
		if !sameHash(sess.RefreshHash, old) {
			if !rotatedLive(sess, old, now) {
				return errBadRefresh // an exchanged token past its own expiry proves nothing
			}
			reused = true
			return data.PutSession(tx, sess, end(sess)...)
		}
		if !now.Before(sess.RefreshExpires) {
			return errBadRefresh
		}
		var forgotten []string
		refresh, forgotten = rotate(sess, now)
		return data.PutSession(tx, sess, forgotten...)
	})
	switch {
	case cfe.ErrorCode(err) == cfe.ENOTFOUND:
		err = errBadRefresh
	case err == nil && reused:
		s.counters.refreshReuse.Add(1)
		s.log.Warn("rotated refresh token reused: session revoked", "session", sess.ID, "user", sess.User)
		err = errReusedRefresh
	}
	s.answerTokens(w, r, sess, refresh, now, err)
}

// RevokeResponse answers POST /api/auth/revoke.
type RevokeResponse struct {
	Revocado bool `json:"revocado"`
}

// HandleRevoke is POST /api/auth/revoke: it ends the caller's session, whose
// JWTs and refresh token stop working.
func (s *Sessions) HandleRevoke(w http.ResponseWriter, r *http.Request) {
	p := PrincipalOf(r)
	err := s.db.Update(func(tx *bolt.Tx) error {
		sess, err := data.GetSession(tx, p.Session)
		if err != nil {
			return err
		}
		return data.PutSession(tx, sess, end(sess)...)
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	web.WriteJSON(w, http.StatusOK, RevokeResponse{Revocado: true})
}

// UserKeyResponse answers POST /api/v1/usuario/{idUsuario}/apikey. The key is
// shown only here.
type UserKeyResponse struct {
	ID     int64  `json:"id"`
	ApiKey string `json:"ApiKey"`
}

// HandleUserKey is POST /api/v1/usuario/{idUsuario}/apikey: it generates an
// API key for the calling user, usable as the secret of login. A user may
// generate keys only for themself.
func (s *Sessions) HandleUserKey(w http.ResponseWriter, r *http.Request) {
	p := PrincipalOf(r)
	id, err := strconv.ParseInt(mux.Vars(r)["idUsuario"], 10, 64)
	if err != nil || id <= 0 {
		s.writeError(w, r, web.Invalid(cfe.FieldError{Campo: "idUsuario", Mensaje: "debe ser un número mayor que cero"}))
		return
	}
	if id != p.User.ID {
		s.writeError(w, r, &cfe.Error{Code: cfe.EFORBIDDEN, Message: "solo puede generar API keys para su propio usuario"})
		return
	}
	key := NewSecret(userKeyPrefix)
	var resp UserKeyResponse
	err = s.db.Update(func(tx *bolt.Tx) error {
		u, err := data.GetUser(tx, id)
		if err != nil {
			return err
		}
		kid, err := data.NextUserKeyID(tx)
		if err != nil {
			return err
		}
		u.Keys = append(u.Keys, data.UserKey{ID: kid, Hash: HashSecret(key), Created: s.now()})
		resp = UserKeyResponse{ID: kid, ApiKey: key}
		return data.PutUser(tx, u)
	})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	web.WriteJSON(w, http.StatusCreated, resp)
}

// CompanyResponse is one company of GET /api/v1/usuario/empresas.
type CompanyResponse struct {
	IdEmpresa     int64   `json:"idEmpresa"`
	RUC           string  `json:"ruc"`
	RazonSocial   string  `json:"razonSocial"`
	PuntosEmision []int64 `json:"puntosEmision"` // idPde of each issuing point
}

// HandleCompanies is GET /api/v1/usuario/empresas: the caller's companies,
// the user's or the key's one.
func (s *Sessions) HandleCompanies(w http.ResponseWriter, r *http.Request) {
	p := PrincipalOf(r)
	ids := []int64{}
	if p.Key != nil {
		ids = append(ids, p.Key.Company)
	} else {
		ids = append(ids, p.User.Companies...)
	}
	out := make([]CompanyResponse, 0, len(ids))
	err := s.db.View(func(tx *bolt.Tx) error {
		for _, id := range ids {
			c, err := data.GetCompany(tx, id)
			if err != nil {
				return err
			}
			points, err := data.CompanyPoints(tx, c.ID)
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
	web.WriteJSON(w, http.StatusOK, out)
}

// RecoverRequest is the body of POST /api/auth/recuperarClave.
type RecoverRequest struct {
	Username string `json:"username"`
}

// RecoverResponse answers every well-formed recovery request alike, so the
// endpoint does not tell whether a user exists.
type RecoverResponse struct {
	Mensaje string `json:"mensaje"`
}

const recoverMessage = "si el usuario existe, se envió una clave temporal a su correo"

// HandleRecover is POST /api/auth/recuperarClave: it issues a single-use
// temporary password, valid for tempPasswordTTL, and e-mails it to the user.
// The user's password keeps working. At most one mail per user per
// recoveryCooldown.
func (s *Sessions) HandleRecover(w http.ResponseWriter, r *http.Request) {
	var req RecoverRequest
	if err := web.DecodeJSON(r, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := web.Invalid(web.Required("username", req.Username)...); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := s.recoverPassword(req.Username); err != nil {
		s.log.Error("password recovery failed", "request_id", web.RequestID(r), "err", err)
	}
	web.WriteJSON(w, http.StatusOK, RecoverResponse{Mensaje: recoverMessage})
}

func (s *Sessions) recoverPassword(username string) error {
	now := s.now()
	temp := NewSecret("")[:16]
	hash, err := bcrypt.GenerateFromPassword([]byte(temp), s.cost)
	if err != nil {
		return err
	}
	var user *data.User
	err = s.db.Update(func(tx *bolt.Tx) error {
		u, err := data.UserByName(tx, username)
		if err != nil {
			return err
		}
		if u.Temp != nil && now.Sub(u.Temp.Sent) < recoveryCooldown {
			return nil
		}
		u.Temp = &data.TempPassword{Hash: hash, Expires: now.Add(tempPasswordTTL), Sent: now}
		user = u
		return data.PutUser(tx, u)
	})
	if err != nil || user == nil {
		if cfe.ErrorCode(err) == cfe.ENOTFOUND {
			return nil
		}
		return err
	}
	if err := s.mailer.SendText(user.Email, "Clave temporal del sandbox CFE", fmt.Sprintf(
		"Hola %s:\r\n\r\nSu clave temporal es: %s\r\n\r\nVale una sola vez y vence a las %s (hora de Montevideo).\r\nSu clave habitual sigue funcionando.\r\n",
		user.Username, temp, now.Add(tempPasswordTTL).In(cfe.Montevideo).Format("15:04"))); err != nil {
		return err
	}
	s.counters.recoveryEmails.Add(1)
	return nil
}
