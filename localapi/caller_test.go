package localapi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/health"
	"github.com/cfe-agent/cfe-agent/issuer"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// emptyState reports an agent with nothing: no certificate, no ranges.
type emptyState struct{}

func (emptyState) Report(context.Context, bool) (*apitype.StateReport, error) {
	return health.Report(health.Identity{Zone: apitype.ZoneReport{OK: true}}, health.State{}, nil, time.Now()), nil
}

type noIssuer struct{}

func (noIssuer) Issue(context.Context, *cfe.Request) (*issuer.Result, error) {
	return nil, &cfe.Error{Code: cfe.EUNAVAILABLE, Respuesta: cfe.RespSinRangoCAE, Message: "sin rango"}
}

// TestSecurity_Caller drives the whole pipeline with the remote address a
// request from another machine would have. (The network namespace test checks
// the same rules over a real second address.)
func TestSecurity_Caller(t *testing.T) {
	const token = "terminal-token-0123456789"
	open := func(t *testing.T, lan LANConfig) *Server {
		s := NewServer(ServerConfig{Listen: "127.0.0.1:0", LAN: lan, Issuer: noIssuer{}, State: emptyState{}})
		if err := s.Open(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	lanOff := open(t, LANConfig{})
	lanOn := open(t, LANConfig{Enabled: true, Tokens: []string{"another-terminal-token", token}})

	tests := []struct {
		name    string
		srv     *Server
		remote  string
		headers map[string]string
		want    int
	}{
		{"loopback needs nothing", lanOff, "127.0.0.1:50000", nil, http.StatusOK},
		{"loopback v6", lanOff, "[::1]:50000", nil, http.StatusOK},
		{"loopback v4-mapped", lanOff, "[::ffff:127.0.0.1]:50000", nil, http.StatusOK},
		{"remote, LAN off", lanOff, "192.0.2.10:50000", nil, http.StatusForbidden},
		{"remote, LAN off, even with a token", lanOff, "192.0.2.10:50000",
			map[string]string{"Authorization": "Bearer " + token}, http.StatusForbidden},
		{"remote without token", lanOn, "192.0.2.10:50000", nil, http.StatusUnauthorized},
		{"remote with a wrong token", lanOn, "192.0.2.10:50000",
			map[string]string{"Authorization": "Bearer terminal-token-0123456780"}, http.StatusUnauthorized},
		{"remote with a token prefix", lanOn, "192.0.2.10:50000",
			map[string]string{"X-CFE-Token": token[:10]}, http.StatusUnauthorized},
		{"remote with Basic credentials", lanOn, "192.0.2.10:50000",
			map[string]string{"Authorization": "Basic " + token}, http.StatusUnauthorized},
		{"remote with Bearer", lanOn, "192.0.2.10:50000",
			map[string]string{"Authorization": "Bearer " + token}, http.StatusOK},
		{"remote with lower-case bearer", lanOn, "[2001:db8::7]:50000",
			map[string]string{"Authorization": "bearer " + token}, http.StatusOK},
		{"remote with X-CFE-Token", lanOn, "192.0.2.10:50000",
			map[string]string{"X-CFE-Token": token}, http.StatusOK},
		{"remote with the other terminal's token", lanOn, "192.0.2.10:50000",
			map[string]string{"X-CFE-Token": "another-terminal-token"}, http.StatusOK},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, path := range []string{"/state", "/sign-cfe"} {
				method := http.MethodGet
				if path == "/sign-cfe" {
					method = http.MethodPost
				}
				req := httptest.NewRequest(method, "http://127.0.0.1"+path, strings.NewReader(`{"cfe":{}}`))
				req.Header.Set("Content-Type", "application/json")
				req.RemoteAddr = tc.remote
				for k, v := range tc.headers {
					req.Header.Set(k, v)
				}
				rec := httptest.NewRecorder()
				tc.srv.handler.ServeHTTP(rec, req)
				if rec.Code != tc.want {
					t.Fatalf("%s %s from %s: status %d, want %d: %s", method, path, tc.remote, rec.Code, tc.want, rec.Body)
				}
				if tc.want == http.StatusUnauthorized && rec.Header().Get("WWW-Authenticate") == "" {
					t.Fatal("401 without WWW-Authenticate")
				}
				if tc.want != http.StatusOK && path == "/sign-cfe" {
					var resp apitype.SignResponse
					if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil || resp.CodigoRespuesta != cfe.RespRechazoValidacion {
						t.Fatalf("refusal body %s, want the sign-cfe shape with 01", rec.Body)
					}
				}
			}
		})
	}
}
