package main_test

import (
	"bytes"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/text/encoding/charmap"

	"github.com/cfe-agent/cfe-agent/internal/testtool/thermal"
)

// TestAgent_ESCPOSPrinter runs the agent with thermal printers in its
// profile (config.yaml as a technician writes it): doctor checks them over
// the network, and POST /pdf prints the signed e-Ticket in ESC/POS on the
// one that has paper.
func TestAgent_ESCPOSPrinter(t *testing.T) {
	dataDir := t.TempDir()
	env := agentEnv("CFE_AGENT_DATA_DIR=" + dataDir)
	if out, code := runCLI(t, env, "profile", "list"); code != 0 {
		t.Fatalf("profile list: exit %d\n%s", code, out)
	}
	ready, empty := &thermal.Printer{}, &thermal.Printer{PaperEnd: true}
	cfgFile := filepath.Join(dataDir, "config.yaml")
	yaml, err := os.ReadFile(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	printers := "    printers:\n" +
		"      termica:\n        backend: tcp\n        protocol: escpos\n        address: " + ready.Listen(t) + "\n" +
		"        escpos:\n          paper_mm: 58\n          qr: raster\n          drawer_kick: true\n" +
		"      sin-papel:\n        backend: tcp\n        protocol: escpos\n        address: " + empty.Listen(t) + "\n"
	if !bytes.Contains(yaml, []byte("    printers:\n")) {
		t.Fatal("the default config.yaml has no printers")
	}
	yaml = bytes.Replace(yaml, []byte("    printers:\n"), []byte(printers), 1)
	if err := os.WriteFile(cfgFile, yaml, 0o600); err != nil {
		t.Fatal(err)
	}

	out, _ := runCLI(t, env, "doctor")
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^OK   impresora termica: ESC/POS en 127\.0\.0\.1:\d+: lista`),
		regexp.MustCompile(`(?m)^FAIL impresora sin-papel: la impresora en 127\.0\.0\.1:\d+ no tiene papel`),
	} {
		if !want.MatchString(out) {
			t.Errorf("doctor lacks %s:\n%s", want, out)
		}
	}
	if len(ready.Received()) != 0 {
		t.Error("doctor printed on the printer")
	}

	a := startAgent(t, env, "--listen", "127.0.0.1:0")
	signTicket(t, a.baseURL, "venta-termica")
	resp, err := http.Post(a.baseURL+"/pdf", "application/json",
		strings.NewReader(`{"uuid":"venta-termica","impresora":"termica"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !bytes.HasPrefix(body, []byte("%PDF-")) ||
		resp.Header.Get("X-CFE-Formato") != "escpos" {
		t.Fatalf("POST /pdf: %d %v\n%.300s", resp.StatusCode, resp.Header, body)
	}
	got := ready.Received()
	if !bytes.Contains(got, []byte{0x1d, 'v', '0'}) || !bytes.Contains(got, []byte{0x1b, 'p', 0}) {
		t.Error("the profile's options (raster QR, drawer kick) did not reach the printer")
	}
	text := strings.Join(strings.Fields(thermal.Text(t, got, charmap.CodePage858)), " ")
	for _, want := range []string{"e-Ticket", "Serie A Nº 1", "Representacion impresa de prueba sin valor fiscal"} {
		if !strings.Contains(text, want) {
			t.Errorf("the printed receipt lacks %q:\n%s", want, text)
		}
	}
	a.stop(t)
}
