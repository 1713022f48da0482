package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// run executes the command line args and returns its output.
func run(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out testtool.SyncBuffer
	cmd := newRootCommand(context.Background())
	cmd.SetArgs(args)
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	err := cmd.Execute()
	return out.String(), err
}

var listening = regexp.MustCompile(`listening on (http://\S+)`)

func TestCommands(t *testing.T) {
	dir := t.TempDir()
	if out, err := run(t, "company", "add", "--data-dir", dir, "--ruc", "211111110015", "--razon-social", "Alfa S.A.",
		"--fecha-emisor", "2015-03-02", "--web-url", "https://www.alfa.com.uy/cfe", "--constancia-iva-al-dia=false"); err != nil || !strings.Contains(out, "added") {
		t.Fatalf("company add: %v\n%s", err, out)
	}
	// Errors name the flags to correct, not the seed file's fields.
	if _, err := run(t, "company", "add", "--data-dir", dir, "--ruc", "211111110016", "--razon-social", "X"); err == nil ||
		!strings.HasPrefix(err.Error(), "--ruc: ") {
		t.Errorf("a RUC with a wrong check digit: error %v, want one naming --ruc", err)
	}
	if _, err := run(t, "company", "add", "--data-dir", dir, "--ruc", "212222220011", "--razon-social", "Beta S.R.L.",
		"--fecha-emisor", "2015-03-02", "--resolucion", "798/2012"); err == nil || !strings.HasPrefix(err.Error(), "--resolucion: ") {
		t.Errorf("a Fecha emisor with a resolution: error %v, want one naming --resolucion", err)
	}
	if _, err := run(t, "company", "add", "--data-dir", dir, "--ruc", "212222220011", "--razon-social", "Beta S.R.L.",
		"--fecha-emisor", "02/03/2015", "--web-url", "www.beta.com.uy"); err == nil ||
		!strings.Contains(err.Error(), "--fecha-emisor: ") || !strings.Contains(err.Error(), "--web-url: ") || strings.Contains(err.Error(), "webUrl") {
		t.Errorf("a date in another format and a web site without scheme: error %v, want lines naming --fecha-emisor and --web-url", err)
	}
	out, err := run(t, "user", "add", "--data-dir", dir, "--username", "ana", "--empresa", "211111110015")
	if err != nil {
		t.Fatalf("user add: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`password: (\S+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no generated password in %q", out)
	}
	if _, err := run(t, "user", "add", "--data-dir", dir, "--username", "ANA", "--password", "x"); err == nil {
		t.Error("a second user with the same normalized name was accepted")
	}
	seed := filepath.Join(dir, "seed.json")
	os.WriteFile(seed, []byte(`{"apiKeys":[{"empresa":"211111110015","nombre":"caja","key":"xx_test_cli-known-key-000000000001"}]}`), 0o600)

	// Serve until the context ends; the server reports its address.
	ctx, cancel := context.WithCancel(context.Background())
	var out2 testtool.SyncBuffer
	cmd := newRootCommand(ctx)
	cmd.SetArgs([]string{"--data-dir", dir, "--listen", "127.0.0.1:0", "--seed", seed, "--demo-password", "demo-1"})
	cmd.SetOut(&out2)
	done := make(chan error, 1)
	go func() { done <- cmd.Execute() }()
	var url string
	for deadline := time.Now().Add(20 * time.Second); url == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := listening.FindStringSubmatch(out2.String()); m != nil {
			url = m[1]
		}
	}
	if url == "" {
		cancel()
		t.Fatalf("the server did not start: %s", out2.String())
	}
	for _, login := range [][2]string{{"ana", m[1]}, {"demo", "demo-1"}} {
		body, _ := json.Marshal(map[string]string{"username": login[0], "secret": login[1]})
		res, err := http.Post(url+"/api/auth/login", "application/json", bytes.NewReader(body))
		if err != nil || res.StatusCode != http.StatusOK {
			t.Errorf("login %s: %v %v", login[0], err, res.Status)
		}
		res.Body.Close()
	}
	req, _ := http.NewRequest("GET", url+"/api/v1/usuario/empresas", nil)
	req.Header.Set("X-API-Key", "xx_test_cli-known-key-000000000001")
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != http.StatusOK {
		t.Errorf("seeded key: %v %v", err, res.Status)
	} else {
		res.Body.Close()
	}
	// The envelope of no CFE is refused in the interface's error shape (it
	// once answered every CFE of the company).
	req, _ = http.NewRequest("POST", url+"/api/v1/cfeemitido/generarSobreAutoridad", strings.NewReader(`{"ids": []}`))
	req.Header.Set("X-API-Key", "xx_test_cli-known-key-000000000001")
	req.Header.Set("Content-Type", "application/json")
	if res, err := http.DefaultClient.Do(req); err != nil {
		t.Errorf("generarSobreAutoridad: %v", err)
	} else {
		var b struct {
			Error, Code, RequestID string
			Details                []struct{ Campo, Mensaje string }
		}
		err := json.NewDecoder(res.Body).Decode(&b)
		res.Body.Close()
		if err != nil || res.StatusCode != http.StatusBadRequest || b.Code != "invalid" || len(b.Details) != 1 || b.Details[0].Campo != "ids" ||
			!strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
			t.Errorf(`generarSobreAutoridad {"ids": []}: %s %+v (%v), want 400 invalid naming ids`, res.Status, b, err)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serve: %v", err)
	}
	if _, err := run(t, "--data-dir", dir, "--environment", "test"); err == nil {
		t.Error("an unknown environment was accepted")
	}
}
