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
	"sync"
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

// announcer keeps what the command prints and sends the server's URL on ready
// once the command says it listens: the test waits on that, not on a clock.
type announcer struct {
	testtool.SyncBuffer
	ready chan string
	once  sync.Once
}

func (a *announcer) Write(p []byte) (int, error) {
	n, err := a.SyncBuffer.Write(p)
	if m := listening.FindStringSubmatch(a.String()); m != nil {
		a.once.Do(func() { a.ready <- m[1] })
	}
	return n, err
}

// client gives the test's requests a deadline.
var client = &http.Client{Timeout: time.Minute}

func TestCommands(t *testing.T) {
	t.Parallel()
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
	out2 := &announcer{ready: make(chan string, 1)}
	cmd := newRootCommand(ctx)
	cmd.SetArgs([]string{"--data-dir", dir, "--listen", "127.0.0.1:0", "--seed", seed, "--demo-password", "demo-1"})
	cmd.SetOut(out2)
	done := make(chan error, 1)
	go func() { done <- cmd.Execute() }()
	var url string
	select {
	case url = <-out2.ready:
	case err := <-done:
		cancel()
		t.Fatalf("the server stopped before listening: %v\n%s", err, out2.String())
	case <-time.After(time.Minute):
		cancel()
		t.Fatalf("the server did not start within a minute: %s", out2.String())
	}
	for _, login := range [][2]string{{"ana", m[1]}, {"demo", "demo-1"}} {
		body, _ := json.Marshal(map[string]string{"username": login[0], "secret": login[1]})
		res, err := client.Post(url+"/api/auth/login", "application/json", bytes.NewReader(body))
		if err != nil || res.StatusCode != http.StatusOK {
			t.Errorf("login %s: %v %v", login[0], err, res.Status)
		}
		res.Body.Close()
	}
	req, _ := http.NewRequest("GET", url+"/api/v1/usuario/empresas", nil)
	req.Header.Set("X-API-Key", "xx_test_cli-known-key-000000000001")
	if res, err := client.Do(req); err != nil || res.StatusCode != http.StatusOK {
		t.Errorf("seeded key: %v %v", err, res.Status)
	} else {
		res.Body.Close()
	}
	// The envelope of no CFE is refused in the interface's error shape (it
	// once answered every CFE of the company).
	req, _ = http.NewRequest("POST", url+"/api/v1/cfeemitido/generarSobreAutoridad", strings.NewReader(`{"ids": []}`))
	req.Header.Set("X-API-Key", "xx_test_cli-known-key-000000000001")
	req.Header.Set("Content-Type", "application/json")
	if res, err := client.Do(req); err != nil {
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
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve: %v", err)
		}
	case <-time.After(time.Minute):
		t.Error("the server did not stop within a minute of its context's end")
	}
	if _, err := run(t, "--data-dir", dir, "--environment", "test"); err == nil {
		t.Error("an unknown environment was accepted")
	}
}
