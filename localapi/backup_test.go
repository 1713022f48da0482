package localapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/health"
	"github.com/cfe-agent/cfe-agent/localapi"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
	"github.com/cfe-agent/cfe-agent/localapi/localclient"
)

// countingBackups records the backups it was asked for. The copy itself is
// tested on the real store and agent (store, cmd/cfe-agent TestAgent_Backup*);
// here only the route's rules are.
type countingBackups struct{ calls atomic.Int32 }

func (b *countingBackups) Backup(context.Context) (*apitype.BackupResult, error) {
	b.calls.Add(1)
	return &apitype.BackupResult{Archivo: "/datos/backups/x.db", CFEs: 3}, nil
}

func TestServer_Backup(t *testing.T) {
	const token = "0123456789abcdef0123456789abcdef"
	answers := map[string][]string{} // openapi.json schema → answer files
	dir := t.TempDir()
	for _, tc := range []struct {
		name       string
		noBackups  bool
		headers    map[string]string
		wantStatus int
		wantCalls  int32
	}{
		{"admin token", false, map[string]string{"X-CFE-Admin": token}, http.StatusOK, 1},
		{"no token", false, nil, http.StatusUnauthorized, 0},
		{"wrong token", false, map[string]string{"X-CFE-Admin": token[:31] + "0"}, http.StatusUnauthorized, 0},
		{"LAN bearer token is not the admin token", false, map[string]string{"Authorization": "Bearer " + token}, http.StatusUnauthorized, 0},
		{"a web page", false, map[string]string{"X-CFE-Admin": token, "Sec-Fetch-Site": "cross-site"}, http.StatusForbidden, 0},
		{"no backups configured", true, map[string]string{"X-CFE-Admin": token}, http.StatusServiceUnavailable, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &countingBackups{}
			ts := startServer(t, func(c *localapi.ServerConfig) {
				if !tc.noBackups {
					c.Backups, c.AdminToken = b, token
				}
			})
			headers := map[string]string{"Content-Type": "application/json"}
			for k, v := range tc.headers {
				headers[k] = v
			}
			resp, body := ts.send(t, request{method: http.MethodPost, path: "/backup", headers: headers, body: jsonBody("{}")})
			if resp.StatusCode != tc.wantStatus || b.calls.Load() != tc.wantCalls {
				t.Fatalf("HTTP %d (want %d), %d backups (want %d): %s", resp.StatusCode, tc.wantStatus, b.calls.Load(), tc.wantCalls, body)
			}
			f := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".json")
			if err := os.WriteFile(f, body, 0o600); err != nil {
				t.Fatal(err)
			}
			schema := "PlainError"
			if tc.wantStatus == http.StatusOK {
				schema = "BackupResult"
			}
			answers[schema] = append(answers[schema], f)
			if tc.wantStatus == http.StatusOK {
				var res apitype.BackupResult
				if err := json.Unmarshal(body, &res); err != nil || !res.OK || res.Archivo != "/datos/backups/x.db" {
					t.Fatalf("answer %s (%v)", body, err)
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
	// Every answer matches its schema in openapi.json (independent validator).
	for schema, files := range answers {
		verdicts := validateWithJSONSchema(t, schema, files)
		for _, f := range files {
			if v := verdicts[f]; v != "OK" {
				t.Errorf("%s does not match %s: %q", filepath.Base(f), schema, v)
			}
		}
	}
	t.Run("client", func(t *testing.T) {
		b := &countingBackups{}
		ts := startServer(t, func(c *localapi.ServerConfig) { c.Backups, c.AdminToken = b, token })
		c, err := localclient.New(ts.srv.BaseURL(), localclient.Options{AdminToken: token})
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.Backup(context.Background())
		if err != nil || res.CFEs != 3 {
			t.Fatalf("Backup = %+v, %v", res, err)
		}
		if _, err := ts.client.Backup(context.Background()); err == nil || !strings.Contains(err.Error(), "401") {
			t.Fatalf("without the token: %v", err)
		}
	})
}

func TestServer_StateBackup(t *testing.T) {
	day := 24 * time.Hour
	for _, tc := range []struct {
		name       string
		backup     *health.BackupStatus
		wantStatus string
		wantWarn   string
	}{
		{"not reported", nil, apitype.HealthOK, ""},
		{"manual only, none yet", &health.BackupStatus{}, apitype.HealthOK, ""},
		{"fresh", &health.BackupStatus{Automatic: true, Folder: "/mnt/usb", Period: day, LastAt: now.Add(-time.Hour), LastFile: "/mnt/usb/a.db"}, apitype.HealthOK, ""},
		{"older than its period", &health.BackupStatus{Automatic: true, Folder: "/mnt/usb", Period: day, LastAt: now.Add(-25 * time.Hour)}, apitype.HealthDegraded, "más vieja que su período"},
		{"none yet", &health.BackupStatus{Automatic: true, Folder: "/mnt/usb", Period: day}, apitype.HealthDegraded, "todavía no hay ninguna copia"},
		{"last one failed", &health.BackupStatus{Automatic: true, Folder: "/mnt/usb", Period: day, LastAt: now.Add(-time.Hour),
			LastError: "el disco está lleno", LastErrorAt: now.Add(-time.Minute)}, apitype.HealthDegraded, "falló"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := healthyState()
			st.Backup = tc.backup
			ts := startServer(t, func(c *localapi.ServerConfig) { c.State = fixedState{st: st} })
			rep, err := ts.client.State(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if rep.Status != tc.wantStatus {
				t.Fatalf("status %s, want %s (%q)", rep.Status, tc.wantStatus, rep.Warnings)
			}
			if tc.wantWarn != "" && (len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], tc.wantWarn)) {
				t.Fatalf("warnings %q, want one with %q", rep.Warnings, tc.wantWarn)
			}
			if tc.backup == nil {
				if rep.Backup != nil {
					t.Fatalf("backup reported: %+v", rep.Backup)
				}
				return
			}
			if rep.Backup == nil || rep.Backup.Status != tc.wantStatus || rep.Backup.Automaticas != tc.backup.Automatic {
				t.Fatalf("backup report %+v", rep.Backup)
			}
			if !tc.backup.LastAt.IsZero() && (rep.Backup.Ultima == nil || rep.Backup.Ultima.EdadS != int64(now.Sub(tc.backup.LastAt)/time.Second)) {
				t.Fatalf("last backup %+v", rep.Backup.Ultima)
			}
		})
	}
}
