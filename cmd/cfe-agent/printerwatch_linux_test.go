package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/internal/testtool/thermal"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// withDefaultThermal writes the default configuration into dataDir with a
// thermal printer at addr, "termica", as the default printer.
func withDefaultThermal(t *testing.T, dataDir, addr string) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testtool.RepoRoot(t), "profiles", "default.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := bytes.Replace(raw, []byte("    printers:\n"),
		[]byte("    printers:\n      termica:\n        backend: tcp\n        protocol: escpos\n        address: "+addr+"\n"), 1)
	cfg = bytes.Replace(cfg, []byte("default_printer: archivo"), []byte("default_printer: termica"), 1)
	if !bytes.Contains(cfg, []byte("default_printer: termica")) || !bytes.Contains(cfg, []byte("      termica:\n")) {
		t.Fatal("profiles/default.yaml changed shape: update withDefaultThermal")
	}
	if err := os.WriteFile(filepath.Join(dataDir, "config.yaml"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
}

// printersOf reads GET /printers.
func printersOf(t *testing.T, baseURL string) apitype.PrintersReport {
	t.Helper()
	_, body := getAccept(t, baseURL+"/printers", "application/json")
	var rep apitype.PrintersReport
	if err := json.Unmarshal(body, &rep); err != nil {
		t.Fatalf("GET /printers: %v\n%s", err, body)
	}
	return rep
}

// lastCheckOf is the last_check of the alias in a /printers listing.
func lastCheckOf(rep apitype.PrintersReport, alias string) *apitype.PrinterCheck {
	for _, a := range rep.Aliases {
		if a.Name == alias {
			return a.LastCheck
		}
	}
	return nil
}

// TestAgent_defaultPrinterWatched runs the agent, with its tray on a
// StatusNotifier host, whose default printer is the thermal test printer
// on TCP: asked between jobs, it shows in /printers as ready; switched off,
// /health is no longer ok within a minute and names it, the tray turns
// amber with the reason, /printers has the last known state and when; a
// POST /pdf that then fails is notified as an error.
func TestAgent_defaultPrinterWatched(t *testing.T) {
	t.Parallel()
	addr := startBus(t)
	w := startWatcher(t, addr)
	notes := startNotifications(t, addr)
	pr := &thermal.Printer{}
	prAddr, switchOff := pr.ListenStoppable(t)
	dataDir := t.TempDir()
	withDefaultThermal(t, dataDir, prAddr)
	p := startProc(t, procEnv(t, dataDir, "DBUS_SESSION_BUS_ADDRESS="+addr), "--listen", "127.0.0.1:0")
	item := waitRegistered(t, w, p, "printer watch")
	conn := busConn(t, addr)

	// The first check is made at once: ready, asked with DLE EOT.
	var lc *apitype.PrinterCheck
	if !testtool.WaitUntil(t, 20*time.Second, func() bool { lc = lastCheckOf(printersOf(t, p.baseURL), "termica"); return lc != nil }) {
		t.Fatal("/printers never showed a check of termica")
	}
	if !lc.OK || lc.Source != apitype.PrinterCheckIdle || lc.At.IsZero() || pr.Queries() < 3 || len(pr.Received()) != 0 {
		t.Fatalf("first check %+v (%d status queries, %d bytes printed), want ready, asked between jobs, nothing printed",
			lc, pr.Queries(), len(pr.Received()))
	}
	if st, err := p.client().State(context.Background()); err != nil || st.Status != apitype.HealthOK || st.Printer == nil || !st.Printer.OK {
		t.Fatalf("/state with the printer ready: %+v, %v", st, err)
	}

	switchOff()
	off := time.Now()
	var h map[string]any
	if !testtool.WaitUntil(t, time.Minute, func() bool { _, h = getJSON(t, p.baseURL+"/health"); return h["status"] != "ok" }) {
		t.Fatalf("/health still %v a minute after the default printer stopped", h)
	}
	t.Logf("/health turned %v %.1f s after the printer stopped", h["status"], time.Since(off).Seconds())
	want := "la impresora predeterminada «termica» no está lista: no se pudo conectar con la impresora en " + prAddr
	warnings, _ := json.Marshal(h["warnings"])
	if h["status"] != "degraded" || !strings.Contains(string(warnings), want) {
		t.Errorf("/health %v, want degraded with %q", h, want)
	}
	lc = lastCheckOf(printersOf(t, p.baseURL), "termica")
	if lc == nil || lc.OK || !strings.Contains(lc.Reason, "no se pudo conectar") || !lc.At.After(off) || lc.Source != apitype.PrinterCheckIdle {
		t.Errorf("/printers' last check %+v, want not ready since the switch-off", lc)
	}

	// The tray: amber, its reason naming the printer.
	m := waitMenu(t, conn, item, "the printer's reason", func(m menuItem) bool {
		_, ok := m.find("Atención: la impresora predeterminada")
		return ok
	})
	if text := reasonText(t, m); !strings.HasPrefix(text, "Atención: "+want) {
		t.Errorf("the menu's reason %q", text)
	}
	var r, g, b byte
	if !testtool.WaitUntil(t, 20*time.Second, func() bool {
		r, g, b = iconPixel(t, conn, item, 5, 16)
		return r > g && g > 0x80 && b < 0x40
	}) {
		t.Errorf("the icon is not amber: %d,%d,%d", r, g, b)
	}

	// A sale printed on the dead printer fails, and the tray says so as an
	// error.
	signTicket(t, p.baseURL, "venta-sin-impresora")
	resp, err := http.Post(p.baseURL+"/pdf", "application/json", strings.NewReader(`{"uuid":"venta-sin-impresora","impresora":"termica"}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway { // the printer failed: 502, as for any printer
		t.Fatalf("POST /pdf to a dead printer: %d %s", resp.StatusCode, body)
	}
	n := notes.wait(t, "No se pudo imprimir")
	if n.Icon != "dialog-error" || n.Urgency != 1 || !strings.Contains(n.Body, "«termica»") || !strings.Contains(n.Body, "no se pudo conectar") {
		t.Errorf("failed print notification %+v, want an error icon naming termica and why", n)
	}
	if st, err := p.client().State(context.Background()); err != nil || st.Printer == nil || st.Printer.Source != apitype.PrinterCheckJob || st.Printer.OK {
		t.Errorf("/state after the failed job: %+v, %v", st.Printer, err)
	}

	// The tray's reprint fails too: an error notification of its own, and
	// not a second "No se pudo imprimir" for the same failure.
	m = waitMenu(t, conn, item, "reprint enabled", func(m menuItem) bool {
		r, ok := m.find("Reimprimir último comprobante")
		return ok && r.bool("enabled", true)
	})
	reprint, _ := m.find("Reimprimir último comprobante")
	click(t, conn, item, reprint.ID)
	n = notes.wait(t, "No se pudo reimprimir")
	if n.Icon != "dialog-error" || n.Urgency != 1 || !strings.Contains(n.Body, "no se pudo conectar") {
		t.Errorf("failed reprint notification %+v, want an error icon and why", n)
	}
	waitRefreshes(t, addr, 2)
	if got := notes.with("No se pudo imprimir"); len(got) != 1 {
		t.Errorf("%d «No se pudo imprimir» notifications, want 1 (the reprint says its own)", len(got))
	}
	if code := p.stop(syscall.SIGTERM); code != 0 {
		t.Fatalf("exit status %d", code)
	}
}
