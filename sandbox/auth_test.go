package sandbox_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/sandbox"
	"github.com/cfe-agent/cfe-agent/sandbox/auth"
)

func TestLogin(t *testing.T) {
	t.Parallel()
	e := start(t)

	t.Run("password returns an HS512 JWT valid 6 hours and a refresh token", func(t *testing.T) {
		tok := e.login("ana", anaPassword)
		if got := jwtPart(t, tok.Token, 0)["alg"]; got != "HS512" {
			t.Errorf("alg %v, want HS512", got)
		}
		if want := t0.Add(6 * time.Hour).Unix(); tok.ExpiresAt != want {
			t.Errorf("expires_at %v, want %v", tok.ExpiresAt, want)
		}
		if exp := jwtPart(t, tok.Token, 1)["exp"]; exp != float64(t0.Add(6*time.Hour).Unix()) {
			t.Errorf("exp claim %v, want %d", exp, t0.Add(6*time.Hour).Unix())
		}
		if tok.RefreshToken == "" {
			t.Error("no refresh token")
		}
		e.do("GET", "/api/v1/usuario/empresas", nil, bearer(tok.Token)...).expect(t, http.StatusOK)
	})
	t.Run("the answer and the JWT carry the real service's fields", func(t *testing.T) {
		r := e.do("POST", "/api/auth/login", auth.LoginRequest{Username: "ana", Secret: anaPassword}).expect(t, http.StatusOK)
		var raw map[string]any
		r.decode(t, &raw)
		exp := float64(t0.Add(6 * time.Hour).Unix())
		if raw["expires_at"] != exp || strings.Contains(string(r.body), `"expires_at":"`) {
			t.Errorf("expires_at %#v, want the integer Unix time %.0f", raw["expires_at"], exp)
		}
		claims := jwtPart(t, raw["token"].(string), 1)
		want := map[string]any{"iat": float64(t0.Unix()), "nbf": float64(t0.Unix()), "exp": exp, "iss": e.url,
			"userName": "ana", "rol": "Supervisor de empresa", "env": "sandbox"}
		for k, v := range want {
			if claims[k] != v {
				t.Errorf("claim %s = %#v, want %#v", k, claims[k], v)
			}
		}
		if emp, ok := claims["empresas"].([]any); !ok || len(emp) != 1 {
			t.Errorf("claim empresas = %#v, want ana's one company", claims["empresas"])
		}
	})
	t.Run("username is matched case-insensitively and trimmed", func(t *testing.T) {
		e.login("  ANA ", anaPassword)
	})
	t.Run("wrong secret or unknown user is 401 with the same message", func(t *testing.T) {
		a := e.do("POST", "/api/auth/login", auth.LoginRequest{Username: "ana", Secret: "no"}).expect(t, http.StatusUnauthorized).errBody(t)
		b := e.do("POST", "/api/auth/login", auth.LoginRequest{Username: "nadie", Secret: "no"}).expect(t, http.StatusUnauthorized).errBody(t)
		if a.Error != b.Error || a.Code != "unauthorized" || b.Code != "unauthorized" {
			t.Errorf("bodies differ or wrong code: %+v / %+v", a, b)
		}
	})
	t.Run("missing fields are named", func(t *testing.T) {
		b := e.do("POST", "/api/auth/login", map[string]string{}).expect(t, http.StatusBadRequest).errBody(t)
		if len(b.Details) != 2 || b.Details[0].Campo != "username" || b.Details[1].Campo != "secret" || b.Code != "invalid" {
			t.Errorf("details %+v", b)
		}
	})
	t.Run("malformed JSON is 400", func(t *testing.T) {
		e.do("POST", "/api/auth/login", `{"username":`).expect(t, http.StatusBadRequest)
	})
	t.Run("demo user of the first run", func(t *testing.T) {
		var companies []auth.CompanyResponse
		e.do("GET", "/api/v1/usuario/empresas", nil, bearer(e.login("demo", "demo-password").Token)...).
			expect(t, http.StatusOK).decode(t, &companies)
		if len(companies) != 1 || companies[0].RUC != "219999830019" {
			t.Errorf("demo companies %+v, want the DGI test RUC", companies)
		}
	})
}

func TestJWT_Expiry(t *testing.T) {
	t.Parallel()
	e := start(t)
	tok := e.login("ana", anaPassword)
	e.clock.Advance(6*time.Hour - time.Second)
	e.do("GET", "/api/v1/usuario/empresas", nil, bearer(tok.Token)...).expect(t, http.StatusOK)
	e.clock.Advance(time.Second)
	b := e.do("GET", "/api/v1/usuario/empresas", nil, bearer(tok.Token)...).expect(t, http.StatusUnauthorized).errBody(t)
	if b.Code != "unauthorized" {
		t.Errorf("code %q", b.Code)
	}
}

func TestJWT_AlgorithmPinned(t *testing.T) {
	t.Parallel()
	e := start(t)
	tok := e.login("ana", anaPassword)
	claims := jwt.MapClaims(jwtPart(t, tok.Token, 1))

	// Read the server's signing key from its file, so the forged tokens
	// below are rejected for their algorithm alone.
	e.close()
	key := readJWTKey(t, e.cfg.DataDir)
	e.open()

	sign := func(m jwt.SigningMethod, k any) string {
		s, err := jwt.NewWithClaims(m, claims).SignedString(k)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	// Control: the same claims signed HS512 with the key are accepted.
	e.do("GET", "/api/v1/usuario/empresas", nil, bearer(sign(jwt.SigningMethodHS512, key))...).expect(t, http.StatusOK)
	for name, forged := range map[string]string{
		"none":  sign(jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType),
		"HS256": sign(jwt.SigningMethodHS256, key),
		"HS384": sign(jwt.SigningMethodHS384, key),
	} {
		t.Run(name, func(t *testing.T) {
			e.do("GET", "/api/v1/usuario/empresas", nil, bearer(forged)...).expect(t, http.StatusUnauthorized)
		})
	}
	t.Run("a tampered subject", func(t *testing.T) {
		c := jwt.MapClaims{}
		for k, v := range claims {
			c[k] = v
		}
		c["sub"] = "3"
		s, _ := jwt.NewWithClaims(jwt.SigningMethodHS512, c).SignedString([]byte("another key of sixty-four bytes........................."))
		e.do("GET", "/api/v1/usuario/empresas", nil, bearer(s)...).expect(t, http.StatusUnauthorized)
	})
}

// readJWTKey reads the HS512 key from a closed server's data file.
func readJWTKey(t *testing.T, dir string) []byte {
	t.Helper()
	db, err := bolt.Open(filepath.Join(dir, "cfe-sandbox-sandbox.db"), 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var key []byte
	db.View(func(tx *bolt.Tx) error {
		key = append(key, tx.Bucket([]byte("meta")).Get([]byte("jwtkey"))...)
		return nil
	})
	if len(key) != 64 {
		t.Fatalf("jwt key of %d bytes", len(key))
	}
	return key
}

func TestRefresh(t *testing.T) {
	t.Parallel()
	e := start(t)
	first := e.login("ana", anaPassword)

	var second auth.TokenResponse
	e.clock.Advance(time.Hour)
	e.do("POST", "/api/auth/refresh", auth.RefreshRequest{RefreshToken: first.RefreshToken}).expect(t, http.StatusOK).decode(t, &second)
	if second.RefreshToken == first.RefreshToken || second.Token == first.Token {
		t.Fatal("refresh did not rotate the tokens")
	}
	if want := t0.Add(7 * time.Hour).Unix(); second.ExpiresAt != want {
		t.Errorf("expires_at %v, want %v", second.ExpiresAt, want)
	}
	e.do("GET", "/api/v1/usuario/empresas", nil, bearer(second.Token)...).expect(t, http.StatusOK)

	// Reusing a rotated refresh token: see TestRefresh_ReuseRevokesFamily.
	t.Run("the path without /api rotates too", func(t *testing.T) {
		var third auth.TokenResponse
		e.do("POST", "/auth/refresh", auth.RefreshRequest{RefreshToken: second.RefreshToken}).expect(t, http.StatusOK).decode(t, &third)
		if third.RefreshToken == second.RefreshToken {
			t.Fatal("refresh did not rotate the refresh token")
		}
		second = third
	})
	t.Run("a refresh token expires after 30 days", func(t *testing.T) {
		e.clock.Advance(30 * 24 * time.Hour)
		e.do("POST", "/api/auth/refresh", auth.RefreshRequest{RefreshToken: second.RefreshToken}).expect(t, http.StatusUnauthorized)
	})
	t.Run("missing refresh_token is named", func(t *testing.T) {
		b := e.do("POST", "/api/auth/refresh", map[string]string{}).expect(t, http.StatusBadRequest).errBody(t)
		if len(b.Details) != 1 || b.Details[0].Campo != "refresh_token" {
			t.Errorf("details %+v", b.Details)
		}
	})
}

// TestRefresh_ReuseRevokesFamily presents a refresh token again after it was
// exchanged, as a thief holding a copy would: the session it belongs to ends
// (its newest refresh token and its JWTs too), and other sessions do not.
func TestRefresh_ReuseRevokesFamily(t *testing.T) {
	t.Parallel()
	e := start(t)
	refresh := func(tok string) *resp {
		return e.do("POST", "/api/auth/refresh", auth.RefreshRequest{RefreshToken: tok})
	}
	first := e.login("ana", anaPassword)
	other := e.login("ana", anaPassword) // another session of the same user
	var second, third auth.TokenResponse
	refresh(first.RefreshToken).expect(t, http.StatusOK).decode(t, &second)
	refresh(second.RefreshToken).expect(t, http.StatusOK).decode(t, &third)
	e.do("GET", "/api/v1/usuario/empresas", nil, bearer(third.Token)...).expect(t, http.StatusOK)

	// The oldest rotated token comes back.
	b := refresh(first.RefreshToken).expect(t, http.StatusUnauthorized).errBody(t)
	if !strings.Contains(b.Error, "se cerró la sesión") {
		t.Errorf("reuse answered %q, want the Spanish explanation that the session was closed", b.Error)
	}
	for name, r := range map[string]*resp{
		"the newest refresh token of the family":   refresh(third.RefreshToken),
		"the other rotated token of the family":    refresh(second.RefreshToken),
		"the newest JWT of the family":             e.do("GET", "/api/v1/usuario/empresas", nil, bearer(third.Token)...),
		"the first JWT of the family":              e.do("GET", "/api/v1/usuario/empresas", nil, bearer(first.Token)...),
		"the reused token a second time (no loop)": refresh(first.RefreshToken),
	} {
		if r.status != http.StatusUnauthorized {
			t.Errorf("%s: status %d, want 401 (session revoked)", name, r.status)
		}
	}
	if m := e.metrics(); m.RefreshReuse != 1 {
		t.Errorf("refresh_token_reuse %d, want 1", m.RefreshReuse)
	}

	t.Run("other sessions are unaffected", func(t *testing.T) {
		e.do("GET", "/api/v1/usuario/empresas", nil, bearer(other.Token)...).expect(t, http.StatusOK)
		var next auth.TokenResponse
		refresh(other.RefreshToken).expect(t, http.StatusOK).decode(t, &next)
		e.do("GET", "/api/v1/usuario/empresas", nil, bearer(next.Token)...).expect(t, http.StatusOK)
	})
	t.Run("a new login works", func(t *testing.T) {
		tok := e.login("ana", anaPassword)
		e.do("GET", "/api/v1/usuario/empresas", nil, bearer(tok.Token)...).expect(t, http.StatusOK)
	})
	t.Run("an expired rotated token no longer revokes", func(t *testing.T) {
		s1 := e.login("ana", anaPassword)
		var s2, s3 auth.TokenResponse
		refresh(s1.RefreshToken).expect(t, http.StatusOK).decode(t, &s2)
		e.clock.Advance(31 * 24 * time.Hour) // s1's lifetime is over; s2's too
		e.do("POST", "/api/auth/refresh", auth.RefreshRequest{RefreshToken: s2.RefreshToken}).expect(t, http.StatusUnauthorized)
		s4 := e.login("ana", anaPassword)
		refresh(s4.RefreshToken).expect(t, http.StatusOK).decode(t, &s3)
		refresh(s1.RefreshToken).expect(t, http.StatusUnauthorized)
		e.do("GET", "/api/v1/usuario/empresas", nil, bearer(s3.Token)...).expect(t, http.StatusOK)
	})
	t.Run("an expired rotated token does not end the session it was exchanged in", func(t *testing.T) {
		s1 := e.login("ana", anaPassword)
		var s2, s3 auth.TokenResponse
		e.clock.Advance(29 * 24 * time.Hour)
		refresh(s1.RefreshToken).expect(t, http.StatusOK).decode(t, &s2) // s2 lives 30 days more
		e.clock.Advance(2 * 24 * time.Hour)                              // s1 is past its own expiry
		refresh(s1.RefreshToken).expect(t, http.StatusUnauthorized)
		refresh(s2.RefreshToken).expect(t, http.StatusOK).decode(t, &s3)
		e.do("GET", "/api/v1/usuario/empresas", nil, bearer(s3.Token)...).expect(t, http.StatusOK)
	})
}

func TestRevoke(t *testing.T) {
	t.Parallel()
	e := start(t)
	tok := e.login("ana", anaPassword)
	other := e.login("ana", anaPassword) // another session of the same user

	e.do("POST", "/api/auth/revoke", nil, bearer(tok.Token)...).expect(t, http.StatusOK)
	e.do("GET", "/api/v1/usuario/empresas", nil, bearer(tok.Token)...).expect(t, http.StatusUnauthorized)
	e.do("POST", "/api/auth/refresh", auth.RefreshRequest{RefreshToken: tok.RefreshToken}).expect(t, http.StatusUnauthorized)
	e.do("POST", "/api/auth/revoke", nil, bearer(tok.Token)...).expect(t, http.StatusUnauthorized)
	// Other sessions are not affected.
	e.do("GET", "/api/v1/usuario/empresas", nil, bearer(other.Token)...).expect(t, http.StatusOK)
	// Revoke needs a JWT, not a company key.
	e.do("POST", "/api/auth/revoke", nil, "X-API-Key", keyBeta).expect(t, http.StatusForbidden)
}

func TestUserAPIKey(t *testing.T) {
	t.Parallel()
	e := start(t)
	tok := e.login("ana", anaPassword)
	id := jwtPart(t, tok.Token, 1)["sub"].(string)

	var k auth.UserKeyResponse
	e.do("POST", "/api/v1/usuario/"+id+"/apikey", nil, bearer(tok.Token)...).expect(t, http.StatusCreated).decode(t, &k)
	if k.ApiKey == "" {
		t.Fatal("no key returned")
	}
	t.Run("is a login secret", func(t *testing.T) {
		e.login("ana", k.ApiKey)
	})
	t.Run("of another user does not log in", func(t *testing.T) {
		e.do("POST", "/api/auth/login", auth.LoginRequest{Username: "beto", Secret: k.ApiKey}).expect(t, http.StatusUnauthorized)
	})
	t.Run("is not a company key", func(t *testing.T) {
		e.do("GET", "/api/v1/usuario/empresas", nil, "X-API-Key", k.ApiKey).expect(t, http.StatusUnauthorized)
	})
	t.Run("only for oneself", func(t *testing.T) {
		n, _ := strconv.Atoi(id)
		e.do("POST", fmt.Sprintf("/api/v1/usuario/%d/apikey", n+1), nil, bearer(tok.Token)...).expect(t, http.StatusForbidden)
		e.do("POST", "/api/v1/usuario/x/apikey", nil, bearer(tok.Token)...).expect(t, http.StatusBadRequest)
	})
	t.Run("needs a JWT", func(t *testing.T) {
		e.do("POST", "/api/v1/usuario/"+id+"/apikey", nil).expect(t, http.StatusUnauthorized)
		e.do("POST", "/api/v1/usuario/"+id+"/apikey", nil, "X-API-Key", keyAlfa).expect(t, http.StatusForbidden)
	})
}

func TestCompanies(t *testing.T) {
	t.Parallel()
	e := start(t)
	var got []auth.CompanyResponse
	e.do("GET", "/api/v1/usuario/empresas", nil, bearer(e.login("beto", betoPassword).Token)...).expect(t, http.StatusOK).decode(t, &got)
	if len(got) != 2 || got[0].RUC != rucAlfa || got[1].RUC != rucBeta {
		t.Errorf("beto's companies %+v", got)
	}
	e.do("GET", "/api/v1/usuario/empresas", nil, "X-API-Key", keyBeta).expect(t, http.StatusOK).decode(t, &got)
	if len(got) != 1 || got[0].RUC != rucBeta {
		t.Errorf("the key's companies %+v", got)
	}
	e.do("GET", "/api/v1/usuario/empresas", nil).expect(t, http.StatusUnauthorized)
}

func TestNew_Environment(t *testing.T) {
	t.Parallel()
	if _, err := sandbox.New(sandbox.Config{Environment: "test", DataDir: t.TempDir()}); err == nil {
		t.Error("an unknown environment was accepted")
	}
	dir := t.TempDir()
	first, err := sandbox.New(sandbox.Config{Environment: sandbox.EnvSandbox, DataDir: dir, PasswordCost: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	// A second process on the same environment's data is refused plainly.
	if _, err := sandbox.New(sandbox.Config{Environment: sandbox.EnvSandbox, DataDir: dir, PasswordCost: 4}); err == nil {
		t.Error("a second instance opened the same data")
	}
	// The other environment has its own file in the same directory.
	prod, err := sandbox.New(sandbox.Config{Environment: sandbox.EnvProduccion, DataDir: dir, PasswordCost: 4})
	if err != nil {
		t.Fatal(err)
	}
	prod.Close()
	if _, err := os.Stat(filepath.Join(dir, "cfe-sandbox-produccion.db")); err != nil {
		t.Error(err)
	}
}

// TestRefresh_Concurrent exchanges one refresh token from 8 goroutines at
// once: exactly one gets new tokens.
func TestRefresh_Concurrent(t *testing.T) {
	t.Parallel()
	e := start(t)
	tok := e.login("ana", anaPassword)
	statuses := make(chan int, 8)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			statuses <- e.do("POST", "/api/auth/refresh", auth.RefreshRequest{RefreshToken: tok.RefreshToken}).status
		})
	}
	wg.Wait()
	close(statuses)
	count := map[int]int{}
	for s := range statuses {
		count[s]++
	}
	if count[http.StatusOK] != 1 || count[http.StatusUnauthorized] != 7 {
		t.Errorf("statuses %v, want one 200 and seven 401", count)
	}
}
