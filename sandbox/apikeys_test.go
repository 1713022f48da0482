package sandbox_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/sandbox"
	"github.com/cfe-agent/cfe-agent/sandbox/auth"
)

func TestAPIKeys_Lifecycle(t *testing.T) {
	t.Parallel()
	e := start(t)
	tok := e.login("ana", anaPassword)

	var created auth.CreatedKeyResponse
	r := e.do("POST", "/api/v1/apikeys", auth.CreateKeyRequest{Nombre: "caja 2", Descripcion: "mostrador"}, bearer(tok.Token)...).
		expect(t, http.StatusCreated)
	r.decode(t, &created)
	if !strings.HasPrefix(created.ApiKey, "xx_test_") || len(created.ApiKey) < 40 {
		t.Fatalf("ApiKey %q: want xx_test_ and enough randomness", created.ApiKey)
	}
	if created.Estado != "activa" || created.Nombre != "caja 2" || created.Descripcion != "mostrador" {
		t.Errorf("created %+v", created.KeyResponse)
	}
	// Neither company limit nor key limit: the defaults.
	if created.LimitePorMinuto != 120 || created.LimitePorHora != 3600 {
		t.Errorf("limits %d/%d, want the defaults 120/3600", created.LimitePorMinuto, created.LimitePorHora)
	}

	t.Run("the listing never shows a key", func(t *testing.T) {
		r := e.do("GET", "/api/v1/apikeys", nil, bearer(tok.Token)...).expect(t, http.StatusOK)
		if strings.Contains(string(r.body), created.ApiKey) || strings.Contains(string(r.body), keyAlfa) || strings.Contains(string(r.body), "ApiKey") {
			t.Fatalf("listing shows a secret: %s", r.body)
		}
		var list []auth.KeyResponse
		r.decode(t, &list)
		if len(list) != 3 || list[0].Nombre != "caja 1" || list[1].Nombre != "limitada" || list[2].ID != created.ID {
			t.Fatalf("list %+v", list)
		}
		if list[1].LimitePorMinuto != 3 || list[1].LimitePorHora != 5 {
			t.Errorf("seeded limits %+v", list[1])
		}
		if !strings.HasPrefix(created.ApiKey, strings.TrimSuffix(list[2].Prefijo, "…")) || len(list[2].Prefijo) < len("xx_test_")+4 {
			t.Errorf("prefijo %q is not the start of the key", list[2].Prefijo)
		}
	})
	t.Run("authenticates in each header form", func(t *testing.T) {
		for _, h := range [][]string{{"X-API-Key", created.ApiKey}, bearer(created.ApiKey)} {
			var got []auth.CompanyResponse
			e.do("GET", "/api/v1/usuario/empresas", nil, h...).expect(t, http.StatusOK).decode(t, &got)
			if len(got) != 1 || got[0].RUC != rucAlfa {
				t.Errorf("%s: companies %+v", h[0], got)
			}
		}
		// "ApiKey" is a scheme of the PDF endpoint only.
		e.do("GET", "/api/v1/usuario/empresas", nil, "Authorization", "ApiKey "+created.ApiKey).expect(t, http.StatusUnauthorized)
	})
	t.Run("key management needs a JWT", func(t *testing.T) {
		e.do("GET", "/api/v1/apikeys", nil, "X-API-Key", created.ApiKey).expect(t, http.StatusForbidden)
		e.do("POST", "/api/v1/apikeys", auth.CreateKeyRequest{Nombre: "x"}, bearer(created.ApiKey)...).expect(t, http.StatusForbidden)
		e.do("GET", "/api/v1/apikeys", nil).expect(t, http.StatusUnauthorized)
	})
	t.Run("revoked keys get 401 in every header form", func(t *testing.T) {
		var rev auth.KeyResponse
		e.do("POST", "/api/v1/apikeys/"+strconv.FormatInt(created.ID, 10)+"/revocar", nil, bearer(tok.Token)...).expect(t, http.StatusOK).decode(t, &rev)
		if rev.Estado != "revocada" || rev.Revocada == nil {
			t.Errorf("revoked record %+v", rev)
		}
		for _, h := range [][]string{{"X-API-Key", created.ApiKey}, bearer(created.ApiKey)} {
			b := e.do("GET", "/api/v1/usuario/empresas", nil, h...).expect(t, http.StatusUnauthorized).errBody(t)
			if b.Code != "unauthorized" {
				t.Errorf("code %q", b.Code)
			}
		}
		// Revoking again changes nothing.
		var again auth.KeyResponse
		e.do("POST", "/api/v1/apikeys/"+strconv.FormatInt(created.ID, 10)+"/revocar", nil, bearer(tok.Token)...).expect(t, http.StatusOK).decode(t, &again)
		if !again.Revocada.Equal(*rev.Revocada) {
			t.Errorf("revocation time moved: %v → %v", rev.Revocada, again.Revocada)
		}
	})
	t.Run("unknown keys get 401", func(t *testing.T) {
		e.do("GET", "/api/v1/usuario/empresas", nil, "X-API-Key", "xx_test_not-a-key-of-anyone-000000000").expect(t, http.StatusUnauthorized)
		e.do("GET", "/api/v1/usuario/empresas", nil, "X-API-Key", "garbage").expect(t, http.StatusUnauthorized)
	})
}

func TestAPIKeys_Companies(t *testing.T) {
	t.Parallel()
	e := start(t)
	beto := e.login("beto", betoPassword).Token // Alfa and Beta
	ana := e.login("ana", anaPassword).Token    // Alfa only

	t.Run("a user of several companies must name one", func(t *testing.T) {
		b := e.do("POST", "/api/v1/apikeys", auth.CreateKeyRequest{Nombre: "x"}, bearer(beto)...).expect(t, http.StatusBadRequest).errBody(t)
		if len(b.Details) != 1 || b.Details[0].Campo != "idEmpresa" {
			t.Errorf("details %+v", b.Details)
		}
		e.do("GET", "/api/v1/apikeys", nil, bearer(beto)...).expect(t, http.StatusBadRequest)
	})
	var betaID int64
	t.Run("and gets the keys of the one named", func(t *testing.T) {
		var companies []auth.CompanyResponse
		e.do("GET", "/api/v1/usuario/empresas", nil, bearer(beto)...).expect(t, http.StatusOK).decode(t, &companies)
		betaID = companies[1].IdEmpresa
		var created auth.CreatedKeyResponse
		e.do("POST", "/api/v1/apikeys", auth.CreateKeyRequest{Nombre: "x", IdEmpresa: betaID}, bearer(beto)...).expect(t, http.StatusCreated).decode(t, &created)
		// Beta's company limits are the defaults of its keys.
		if created.IdEmpresa != betaID || created.LimitePorMinuto != 50 || created.LimitePorHora != 500 {
			t.Errorf("created %+v", created.KeyResponse)
		}
		var list []auth.KeyResponse
		e.do("GET", "/api/v1/apikeys?idEmpresa="+strconv.FormatInt(betaID, 10), nil, bearer(beto)...).expect(t, http.StatusOK).decode(t, &list)
		if len(list) != 2 || list[0].Nombre != "caja beta" || list[1].ID != created.ID {
			t.Errorf("Beta's keys %+v", list)
		}
	})
	t.Run("another company's keys are forbidden", func(t *testing.T) {
		id := strconv.FormatInt(betaID, 10)
		e.do("GET", "/api/v1/apikeys?idEmpresa="+id, nil, bearer(ana)...).expect(t, http.StatusForbidden)
		e.do("POST", "/api/v1/apikeys", auth.CreateKeyRequest{Nombre: "x", IdEmpresa: betaID}, bearer(ana)...).expect(t, http.StatusForbidden)
		// Key 2 is Beta's seeded key.
		e.do("POST", "/api/v1/apikeys/2/revocar", nil, bearer(ana)...).expect(t, http.StatusForbidden)
		e.do("POST", "/api/v1/apikeys/2/rate-limit", auth.KeyLimitsRequest{LimitePorMinuto: 1, LimitePorHora: 1}, bearer(ana)...).expect(t, http.StatusForbidden)
		e.do("GET", "/api/v1/usuario/empresas", nil, "X-API-Key", keyBeta).expect(t, http.StatusOK)
	})
	t.Run("unknown key ids are 404", func(t *testing.T) {
		e.do("POST", "/api/v1/apikeys/999/revocar", nil, bearer(ana)...).expect(t, http.StatusNotFound)
		e.do("POST", "/api/v1/apikeys/abc/revocar", nil, bearer(ana)...).expect(t, http.StatusBadRequest)
	})
	t.Run("create validates its fields", func(t *testing.T) {
		b := e.do("POST", "/api/v1/apikeys", auth.CreateKeyRequest{Descripcion: strings.Repeat("d", 501)}, bearer(ana)...).expect(t, http.StatusBadRequest).errBody(t)
		if len(b.Details) != 2 || b.Details[0].Campo != "nombre" || b.Details[1].Campo != "descripcion" {
			t.Errorf("details %+v", b.Details)
		}
	})
}

func TestAPIKeys_Environment(t *testing.T) {
	t.Parallel()
	t.Run("sandbox refuses live keys", func(t *testing.T) {
		e := start(t)
		b := e.do("GET", "/api/v1/usuario/empresas", nil, "X-API-Key", "xx_live_alfa-known-key-0000000000000001").expect(t, http.StatusUnauthorized).errBody(t)
		if !strings.Contains(b.Error, "ambiente") {
			t.Errorf("message %q should say the key is of another environment", b.Error)
		}
		e.do("GET", "/api/v1/usuario/empresas", nil, bearer("xx_live_alfa-known-key-0000000000000001")...).expect(t, http.StatusUnauthorized)
	})
	t.Run("produccion issues live keys and refuses test keys", func(t *testing.T) {
		e := start(t, func(c *sandbox.Config) {
			c.Environment = sandbox.EnvProduccion
			c.Seed.APIKeys = nil // the seed's keys are test keys
		})
		tok := e.login("ana", anaPassword)
		var created auth.CreatedKeyResponse
		e.do("POST", "/api/v1/apikeys", auth.CreateKeyRequest{Nombre: "prod"}, bearer(tok.Token)...).expect(t, http.StatusCreated).decode(t, &created)
		if !strings.HasPrefix(created.ApiKey, "xx_live_") {
			t.Fatalf("production key %q", created.ApiKey)
		}
		e.do("GET", "/api/v1/usuario/empresas", nil, "X-API-Key", created.ApiKey).expect(t, http.StatusOK)
		test := "xx_test_" + strings.TrimPrefix(created.ApiKey, "xx_live_")
		e.do("GET", "/api/v1/usuario/empresas", nil, "X-API-Key", test).expect(t, http.StatusUnauthorized)
		e.do("GET", "/api/v1/usuario/empresas", nil, bearer(test)...).expect(t, http.StatusUnauthorized)
	})
	t.Run("a seed key of the other environment is refused at start", func(t *testing.T) {
		_, err := sandbox.New(sandbox.Config{Environment: sandbox.EnvProduccion, DataDir: t.TempDir(), PasswordCost: 4, Seed: testSeed()})
		if err == nil {
			t.Error("xx_test_ seed keys were accepted in produccion")
		}
	})
}

// limits reads the X-RateLimit-* headers.
func limits(t *testing.T, r *resp) [4]string {
	t.Helper()
	return [4]string{r.header.Get("X-RateLimit-Limit-Minute"), r.header.Get("X-RateLimit-Remaining-Minute"),
		r.header.Get("X-RateLimit-Limit-Hour"), r.header.Get("X-RateLimit-Remaining-Hour")}
}

func TestAPIKeys_RateLimit(t *testing.T) {
	t.Parallel()
	e := start(t) // t0 is hh:00:30; keyAlfaTight allows 3 a minute and 5 an hour
	get := func() *resp { return e.do("GET", "/api/v1/usuario/empresas", nil, "X-API-Key", keyAlfaTight) }

	for i, want := range [][4]string{{"3", "2", "5", "4"}, {"3", "1", "5", "3"}, {"3", "0", "5", "2"}} {
		if got := limits(t, get().expect(t, http.StatusOK)); got != want {
			t.Fatalf("request %d: headers %v, want %v", i+1, got, want)
		}
	}
	t.Run("the minute window", func(t *testing.T) {
		r := get().expect(t, http.StatusTooManyRequests)
		if b := r.errBody(t); b.Code != "api_key_rate_limit_exceeded" {
			t.Errorf("code %q", b.Code)
		}
		// 30 s left of the minute; the refused request counted nothing.
		if got := r.header.Get("Retry-After"); got != "30" {
			t.Errorf("Retry-After %q, want 30", got)
		}
		if got, want := limits(t, r), [4]string{"3", "0", "5", "2"}; got != want {
			t.Errorf("headers %v, want %v", got, want)
		}
	})
	t.Run("JWT requests have no limit", func(t *testing.T) {
		r := e.do("GET", "/api/v1/usuario/empresas", nil, bearer(e.login("ana", anaPassword).Token)...).expect(t, http.StatusOK)
		if r.header.Get("X-RateLimit-Limit-Minute") != "" {
			t.Error("rate-limit headers on a JWT request")
		}
	})
	t.Run("the hour window", func(t *testing.T) {
		e.clock.Advance(30 * time.Second) // hh:01:00, a new minute
		for i, want := range [][4]string{{"3", "2", "5", "1"}, {"3", "1", "5", "0"}} {
			if got := limits(t, get().expect(t, http.StatusOK)); got != want {
				t.Fatalf("request %d: headers %v, want %v", i+1, got, want)
			}
		}
		r := get().expect(t, http.StatusTooManyRequests)
		if got := r.header.Get("Retry-After"); got != "3540" {
			t.Errorf("Retry-After %q, want 3540 (59 minutes)", got)
		}
		if got, want := limits(t, r), [4]string{"3", "1", "5", "0"}; got != want {
			t.Errorf("headers %v, want %v", got, want)
		}
		e.clock.Advance(59 * time.Minute) // the next hour
		if got, want := limits(t, get().expect(t, http.StatusOK)), [4]string{"3", "2", "5", "4"}; got != want {
			t.Errorf("after the hour: headers %v, want %v", got, want)
		}
	})
	t.Run("keys are limited separately", func(t *testing.T) {
		if got, want := limits(t, e.do("GET", "/api/v1/usuario/empresas", nil, "X-API-Key", keyBeta).expect(t, http.StatusOK)), [4]string{"50", "49", "500", "499"}; got != want {
			t.Errorf("Beta's key: headers %v, want %v", got, want)
		}
	})
	t.Run("updated limits apply at once", func(t *testing.T) {
		tok := e.login("ana", anaPassword).Token
		var k auth.KeyResponse
		e.do("POST", "/api/v1/apikeys/3/rate-limit", auth.KeyLimitsRequest{LimitePorMinuto: 10, LimitePorHora: 20}, bearer(tok)...).expect(t, http.StatusOK).decode(t, &k)
		if k.LimitePorMinuto != 10 || k.LimitePorHora != 20 {
			t.Errorf("record %+v", k)
		}
		if got, want := limits(t, get().expect(t, http.StatusOK)), [4]string{"10", "8", "20", "18"}; got != want {
			t.Errorf("headers %v, want %v", got, want)
		}
	})
	t.Run("limit updates are validated", func(t *testing.T) {
		tok := e.login("ana", anaPassword).Token
		for _, c := range []struct {
			req   auth.KeyLimitsRequest
			field string
		}{
			{auth.KeyLimitsRequest{LimitePorMinuto: 0, LimitePorHora: 10}, "limitePorMinuto"},
			{auth.KeyLimitsRequest{LimitePorMinuto: 10, LimitePorHora: 2_000_000}, "limitePorHora"},
			{auth.KeyLimitsRequest{LimitePorMinuto: 10, LimitePorHora: 9}, "limitePorHora"},
		} {
			b := e.do("POST", "/api/v1/apikeys/3/rate-limit", c.req, bearer(tok)...).expect(t, http.StatusBadRequest).errBody(t)
			if len(b.Details) != 1 || b.Details[0].Campo != c.field {
				t.Errorf("%+v: details %+v", c.req, b.Details)
			}
		}
	})
}
