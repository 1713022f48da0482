package main_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
)

// headerRE is the status page's header.
var headerRE = regexp.MustCompile(`(?s)<header>.*?</header>`)

// TestStatusPage_testMode checks that the sandbox profile's status page
// says MODO PRUEBA in its header, and that the same data directory's
// profile switched to production does not.
func TestStatusPage_testMode(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	env := procEnv(t, dataDir)
	p := startProc(t, env, "serve", "--listen", "127.0.0.1:0")
	_, page := getAccept(t, p.baseURL+"/", "text/html")
	header := headerRE.Find(page)
	if !bytes.Contains(header, []byte(`<strong id="modo-prueba" class="test-mode"`)) || !bytes.Contains(header, []byte(">MODO PRUEBA</strong>")) {
		t.Errorf("the sandbox page's header does not say MODO PRUEBA:\n%s", header)
	}
	if code := p.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("exit status %d", code)
	}

	cfgFile := filepath.Join(dataDir, "config.yaml")
	cfg, err := os.ReadFile(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	prod := bytes.Replace(cfg, []byte("environment: sandbox"), []byte("environment: produccion"), 1)
	if bytes.Equal(prod, cfg) {
		t.Fatal("the default config.yaml has no environment: sandbox")
	}
	if err := os.WriteFile(cfgFile, prod, 0o600); err != nil {
		t.Fatal(err)
	}
	p = startProc(t, env, "serve", "--listen", "127.0.0.1:0")
	_, page = getAccept(t, p.baseURL+"/", "text/html")
	if !bytes.Contains(page, []byte("<header>")) || bytes.Contains(page, []byte("MODO PRUEBA")) {
		t.Errorf("the production page says MODO PRUEBA, or has no header:\n%s", headerRE.Find(page))
	}
	if code := p.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("exit status %d", code)
	}
}
