package localapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/localapi"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
	"github.com/cfe-agent/cfe-agent/localapi/localclient"
)

// recordingRepairs records the recoveries it was asked for and answers err,
// or the CFE. The recovery itself is tested on the real store and agent
// (store TestDB_Repair_*, cmd/cfe-agent TestAgent_UnreadableCFE); here only
// the route's rules are.
type recordingRepairs struct {
	mu   sync.Mutex
	got  []apitype.RecoverRequest
	fail error
}

func (r *recordingRepairs) Recover(_ context.Context, req apitype.RecoverRequest) (*apitype.RecoverResult, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, req)
	if r.fail != nil {
		return nil, r.fail
	}
	return &apitype.RecoverResult{UUID: req.UUID, TipoCFE: cfe.ETicket, Nombre: "e-Ticket", Serie: "A", Numero: 8,
		Origen: "/datos/backups/x.db", EnCola: true, Descartadas: []string{"/otra.db: no tiene el comprobante"}}, nil
}

func TestServer_Recover(t *testing.T) {
	const token = "0123456789abcdef0123456789abcdef"
	answers := map[string][]string{} // openapi.json schema → answer files
	dir := t.TempDir()
	admin := map[string]string{"X-CFE-Admin": token}
	for _, tc := range []struct {
		name       string
		noRepairs  bool
		fail       error
		headers    map[string]string
		body       string
		wantStatus int
		wantCalls  int
	}{
		{"admin token", false, nil, admin, `{"uuid":"caja-0008","copias":["/datos/x.db"],"sin_servicio":true}`, http.StatusOK, 1},
		{"no token", false, nil, nil, `{"uuid":"caja-0008"}`, http.StatusUnauthorized, 0},
		{"wrong token", false, nil, map[string]string{"X-CFE-Admin": token[:31] + "0"}, `{"uuid":"caja-0008"}`, http.StatusUnauthorized, 0},
		{"a web page", false, nil, map[string]string{"X-CFE-Admin": token, "Sec-Fetch-Site": "cross-site"}, `{"uuid":"caja-0008"}`, http.StatusForbidden, 0},
		{"no recovery here", true, nil, admin, `{"uuid":"caja-0008"}`, http.StatusServiceUnavailable, 0},
		{"no uuid", false, nil, admin, `{"copias":[]}`, http.StatusBadRequest, 0},
		{"an unknown field", false, nil, admin, `{"uuid":"caja-0008","archivo":"/x"}`, http.StatusBadRequest, 0},
		{"no copy holds it", false, cfe.Errorf(cfe.ECONFLICT, "ninguna copia tiene intacto el comprobante"), admin, `{"uuid":"caja-0008"}`, http.StatusConflict, 1},
		{"unknown uuid", false, cfe.Errorf(cfe.ENOTFOUND, "no existe"), admin, `{"uuid":"otro"}`, http.StatusNotFound, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rp := &recordingRepairs{fail: tc.fail}
			ts := startServer(t, func(c *localapi.ServerConfig) {
				if !tc.noRepairs {
					c.Repairs, c.AdminToken = rp, token
				}
			})
			headers := map[string]string{"Content-Type": "application/json"}
			for k, v := range tc.headers {
				headers[k] = v
			}
			resp, body := ts.send(t, request{method: http.MethodPost, path: "/recuperar", headers: headers, body: jsonBody(tc.body)})
			if resp.StatusCode != tc.wantStatus || len(rp.got) != tc.wantCalls {
				t.Fatalf("HTTP %d (want %d), %d calls (want %d): %s", resp.StatusCode, tc.wantStatus, len(rp.got), tc.wantCalls, body)
			}
			f := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".json")
			if err := os.WriteFile(f, body, 0o600); err != nil {
				t.Fatal(err)
			}
			schema := "PlainError"
			if tc.wantStatus == http.StatusOK {
				schema = "RecoverResult"
			}
			answers[schema] = append(answers[schema], f)
			if tc.wantStatus == http.StatusOK {
				var res apitype.RecoverResult
				if err := json.Unmarshal(body, &res); err != nil || !res.OK || res.UUID != "caja-0008" || !res.EnCola {
					t.Fatalf("answer %s (%v)", body, err)
				}
				if g := rp.got[0]; g.UUID != "caja-0008" || len(g.Copias) != 1 || g.Copias[0] != "/datos/x.db" || !g.SinServicio {
					t.Fatalf("the agent was asked %+v", g)
				}
				return
			}
			if m := decodeObject(t, body); m["error"] == "" || m["error"] == nil {
				t.Fatalf("no Spanish error in %s", body)
			}
			if strings.Contains(ts.logs.String(), token) {
				t.Fatal("the admin token reached the log")
			}
		})
	}
	for schema, files := range answers {
		verdicts := validateWithJSONSchema(t, schema, files)
		for _, f := range files {
			if v := verdicts[f]; v != "OK" {
				t.Errorf("%s does not match %s: %q", filepath.Base(f), schema, v)
			}
		}
	}
	t.Run("client", func(t *testing.T) {
		rp := &recordingRepairs{}
		ts := startServer(t, func(c *localapi.ServerConfig) { c.Repairs, c.AdminToken = rp, token })
		c, err := localclient.New(ts.srv.BaseURL(), localclient.Options{AdminToken: token})
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.Recover(context.Background(), apitype.RecoverRequest{UUID: "caja-0008"})
		if err != nil || res.Numero != 8 || res.Origen != "/datos/backups/x.db" {
			t.Fatalf("Recover = %+v, %v", res, err)
		}
		if _, err := ts.client.Recover(context.Background(), apitype.RecoverRequest{UUID: "caja-0008"}); err == nil || !strings.Contains(err.Error(), "401") {
			t.Fatalf("without the token: %v", err)
		}
	})
}
