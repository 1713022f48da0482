package hosted_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/hosted"
	"github.com/cfe-agent/cfe-agent/sandbox"
)

// TestClient_JWT: one login serves every request while the JWT lasts, even
// many at once; near its expiry the refresh token renews it without a login;
// a revoked session leads to exactly one new login.
func TestClient_JWT(t *testing.T) {
	c := newClock()
	p := startPeer(t, c)
	cl := newClient(t, p, hosted.Config{Username: userName, Secret: userPassword})
	ctx := context.Background()

	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		wg.Go(func() {
			if _, err := cl.Empresas(ctx); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n := p.logins.Load(); n != 1 {
		t.Fatalf("%d logins for 20 concurrent requests, want 1", n)
	}

	// The JWT lasts 6 hours. Five hours later it is still used as is; at
	// 5 h 55 min it is within the refresh margin and is refreshed.
	c.Advance(5 * time.Hour)
	mustEmpresas(t, cl)
	c.Advance(55 * time.Minute)
	mustEmpresas(t, cl)
	c.Advance(5*time.Hour + 55*time.Minute)
	mustEmpresas(t, cl)
	if l, r := p.logins.Load(), p.refreshes.Load(); l != 1 || r != 2 {
		t.Fatalf("after 11 h 50 min: %d logins and %d refreshes, want 1 and 2", l, r)
	}

	// Revoking the session kills its JWTs and its refresh token: the next
	// request is refused, the refresh is refused, and one login follows.
	h := http.Header{}
	if err := cl.Authorize(ctx, h); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, p.url()+"/api/auth/revoke", nil)
	req.Header = h
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("revoke: HTTP %d", resp.StatusCode)
	}
	mustEmpresas(t, cl)
	if l, r := p.logins.Load(), p.refreshes.Load(); l != 2 || r != 3 {
		t.Errorf("after the revocation: %d logins and %d refreshes, want 2 and 3", l, r)
	}
	if st := cl.Status(); st.Auth != hosted.AuthJWT || !st.Reachable || st.LastError != "" || st.RateLimit != nil {
		t.Errorf("status %+v: want jwt, reachable, no error and no rate limit (JWT requests have none)", st)
	}
}

func mustEmpresas(t *testing.T, cl *hosted.Client) {
	t.Helper()
	got, err := cl.Empresas(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].RUC != testRUC {
		t.Fatalf("empresas %+v, want only %s", got, testRUC)
	}
}

// TestClient_RefusedLogin: a refused credential is reported and never tried
// again, whatever the caller does.
func TestClient_RefusedLogin(t *testing.T) {
	c := newClock()
	p := startPeer(t, c)
	cl := newClient(t, p, hosted.Config{Username: userName, Secret: "clave equivocada"})
	for range 5 {
		_, err := cl.Empresas(context.Background())
		if cfe.ErrorCode(err) != cfe.EUNAUTHORIZED {
			t.Fatalf("error %v, want %s", err, cfe.EUNAUTHORIZED)
		}
		c.Advance(time.Hour)
	}
	if n := p.logins.Load(); n != 1 {
		t.Errorf("%d logins, want 1: a refused credential must not be retried", n)
	}
	if st := cl.Status(); st.LastError == "" {
		t.Error("status carries no error")
	}
}

// TestClient_LoginLimited: a login answered with 429 is not sent again
// before its Retry-After, and goes through after it.
func TestClient_LoginLimited(t *testing.T) {
	c := newClock()
	p := newPeer(t, c)
	p.loginLimits = sandbox.LoginLimits{Window: 15 * time.Minute, PerIP: 2, PerPrefix: 30, AlertFailures: 20, AlertNetworks: 3}
	p.start()
	// Two failed logins from this address (someone else's mistakes) block it.
	for range 2 {
		resp, err := http.Post(p.url()+"/api/auth/login", "application/json", strings.NewReader(`{"username":"ana","secret":"mal"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	c.Advance(5 * time.Minute) // the first failure leaves the window 10 min from now

	cl := newClient(t, p, hosted.Config{Username: userName, Secret: userPassword})
	_, err := cl.Empresas(context.Background())
	ra, ok := hosted.RetryAfter(err)
	if cfe.ErrorCode(err) != cfe.EUNAVAILABLE || !ok || ra != 10*time.Minute {
		t.Fatalf("error %v, Retry-After %s: want unavailable for 10 min", err, ra)
	}
	c.Advance(9 * time.Minute)
	if _, err := cl.Empresas(context.Background()); cfe.ErrorCode(err) != cfe.EUNAVAILABLE {
		t.Fatalf("before Retry-After: %v", err)
	}
	if n := p.logins.Load(); n != 3 {
		t.Fatalf("%d logins reached the service, want 3 (2 failed, 1 limited): none may go before Retry-After", n)
	}
	c.Advance(time.Minute)
	mustEmpresas(t, cl)
	if n := p.logins.Load(); n != 4 {
		t.Errorf("%d logins, want 4", n)
	}
}

// TestClient_Errors: the service's answers become cfe errors with its own
// message and fields; an unreachable service is EUNAVAILABLE.
func TestClient_Errors(t *testing.T) {
	c := newClock()
	p := startPeer(t, c)
	cl := newClient(t, p, hosted.Config{APIKey: keyAgent})
	ctx := context.Background()

	tests := []struct {
		name    string
		call    func() error
		code    string
		message string
	}{
		{"unknown CFE", func() error { _, err := cl.Anular(ctx, 987654, cfe.DateOf(t0)); return err },
			cfe.ENOTFOUND, "CFE no existe"},
		{"invalid reference", func() error { _, err := cl.Anular(ctx, 0, cfe.DateOf(t0)); return err },
			cfe.EINVALID, "Id de CFE referencia invalido"},
		{"unknown id", func() error { _, err := cl.Comprobante(ctx, 987654); return err }, cfe.ENOTFOUND, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			var apiErr *hosted.APIError
			switch {
			case cfe.ErrorCode(err) != tt.code:
				t.Errorf("error %v, want code %s", err, tt.code)
			case tt.message != "" && cfe.ErrorMessage(err) != tt.message:
				t.Errorf("message %q, want the service's %q", cfe.ErrorMessage(err), tt.message)
			case !errors.As(err, &apiErr) || len(apiErr.RequestID) != 16:
				t.Errorf("error %v does not carry the service's answer and request id", err)
			}
		})
	}

	st := cl.Status()
	// Three key requests against the default limits (120 a minute, 3 600 an hour).
	if st.RateLimit == nil || *st.RateLimit != (hosted.RateLimit{LimitMinute: 120, RemainingMinute: 117,
		LimitHour: 3600, RemainingHour: 3597, ObservedAt: t0}) {
		t.Errorf("rate limit %+v", st.RateLimit)
	}

	t.Run("unreachable", func(t *testing.T) {
		p.stop()
		_, err := cl.Comprobante(ctx, 1)
		if cfe.ErrorCode(err) != cfe.EUNAVAILABLE {
			t.Errorf("error %v, want %s", err, cfe.EUNAVAILABLE)
		}
		if err := cl.Ping(ctx); cfe.ErrorCode(err) != cfe.EUNAVAILABLE {
			t.Errorf("ping: %v", err)
		}
		if st := cl.Status(); st.Reachable || st.LastError == "" {
			t.Errorf("status %+v, want unreachable with an error", st)
		}
	})
}

// TestClient_EmitirRetries: an emission whose answer is lost is sent again
// only when it carries a uuid, and then the service answers the same CFE: one
// CFE issued either way.
func TestClient_EmitirRetries(t *testing.T) {
	c := newClock()
	p := startPeer(t, c)
	const path = "/api/v1/comprobante/emitir"
	body := func(uuid string) json.RawMessage {
		return json.RawMessage(`{` + uuid + `"cfe":{"idDoc":{"tipoCfe":101,"formaPago":1,"montoBruto":1},
			"detalles":[{"indicadorFacturacion":3,"nombreItem":"Yerba","cantidad":2,"precioUnitario":61}]}}`)
	}
	cl := newClient(t, p, hosted.Config{APIKey: keyAgent})
	// loseNext loses the answer to the next emission only (f runs under the
	// peer's lock).
	loseNext := func() {
		lost := false
		p.loseAnswers(func(r *http.Request) bool {
			if r.URL.Path == path && !lost {
				lost = true
				return true
			}
			return false
		})
	}
	loseNext()

	got, err := cl.Emitir(context.Background(), body(`"uuid":"venta-con-uuid",`))
	if err != nil {
		t.Fatal(err)
	}
	if n := p.requestsTo(path); n != 2 {
		t.Errorf("%d emissions sent, want 2 (the lost one and its repetition)", n)
	}
	again, err := cl.Emitir(context.Background(), body(`"uuid":"venta-con-uuid",`))
	if err != nil || again.ID != got.ID || again.Nro != got.Nro {
		t.Errorf("the same uuid answered %+v (%v), want CFE %d again", again, err, got.ID)
	}

	loseNext()
	before := p.requestsTo(path)
	_, err = cl.Emitir(context.Background(), body(""))
	if cfe.ErrorCode(err) != cfe.EUNAVAILABLE {
		t.Errorf("a lost answer without uuid: %v, want %s", err, cfe.EUNAVAILABLE)
	}
	if n := p.requestsTo(path) - before; n != 1 {
		t.Errorf("an emission without uuid was sent %d times, want once", n)
	}
}
