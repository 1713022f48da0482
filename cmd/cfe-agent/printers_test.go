package main_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/internal/testtool/cupsd"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
	"github.com/cfe-agent/cfe-agent/localapi/localclient"
)

// TestAgent_Printers: GET /printers over real HTTP lists the profile's
// aliases and the queues of a private CUPS server (with an emulated IPP
// printer), with the state CUPS reports.
func TestAgent_Printers(t *testing.T) {
	e := cupsd.Start(t)
	lpadmin := testtool.Require(t, "lpadmin")
	e.Run(t, lpadmin, "-h", e.Server, "-p", "deposito", "-v", e.IPP, "-m", "raw", "-E", "-D", "Depósito", "-L", "Fondo")
	e.Run(t, testtool.Require(t, "cupsdisable"), "-h", e.Server, "-r", "Sin papel", "deposito")
	e.Run(t, lpadmin, "-h", e.Server, "-d", cupsd.RawQueue)

	dataDir := t.TempDir()
	env := agentEnv("CFE_AGENT_DATA_DIR="+dataDir, "CUPS_SERVER="+e.Server)
	if out, code := runCLI(t, env, "profile", "list"); code != 0 {
		t.Fatalf("profile list: %s", out)
	}
	cfgFile := filepath.Join(dataDir, "config.yaml")
	cfg, err := os.ReadFile(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	cfg = bytes.Replace(cfg, []byte("    printers:\n"), []byte("    printers:\n"+
		"      caja:\n        backend: cups\n        queue: "+cupsd.RawQueue+"\n"+
		"      cocina:\n        backend: lp\n        queue: deposito\n"+
		"      vieja:\n        backend: cups\n        queue: Caja_Retirada\n"+
		"      termica:\n        backend: tcp\n        protocol: escpos\n        address: 192.0.2.10:9100\n"), 1)
	cfg = bytes.Replace(cfg, []byte("    default_printer: archivo\n"), []byte("    default_printer: caja\n"), 1)
	if err := os.WriteFile(cfgFile, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	a := startAgent(t, env, "--listen", "127.0.0.1:0")

	// The default printer, caja, is asked at once (the CUPS queue's state):
	// the listing says when and what it found.
	var got apitype.PrintersReport
	if !testtool.WaitUntil(t, 20*time.Second, func() bool {
		resp, err := http.Get(a.baseURL + "/printers")
		if err != nil {
			t.Fatal(err)
		}
		got = apitype.PrintersReport{}
		err = json.NewDecoder(resp.Body).Decode(&got)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /printers: HTTP %d, %v", resp.StatusCode, err)
		}
		return len(got.Aliases) == 5 && got.Aliases[1].LastCheck != nil
	}) {
		t.Fatalf("GET /printers never showed the default printer's check: %+v", got.Aliases)
	}
	if lc := got.Aliases[1].LastCheck; !lc.OK || lc.Source != apitype.PrinterCheckIdle || lc.At.IsZero() {
		t.Errorf("caja's last check %+v, want ready, from the check between jobs", lc)
	}
	for i, al := range got.Aliases {
		if i != 1 && al.LastCheck != nil {
			t.Errorf("%s was checked: %+v (only the default printer is watched)", al.Name, al.LastCheck)
		}
		got.Aliases[i].LastCheck = nil
	}
	want := apitype.PrintersReport{OK: true, Profile: "default",
		Aliases: []apitype.PrinterAlias{
			{Name: "archivo", Backend: "dir", Target: filepath.Join(dataDir, "impresiones"), Protocol: "pdf"},
			{Name: "caja", Backend: "cups", Target: cupsd.RawQueue, Protocol: "pdf", Default: true, State: "idle"},
			{Name: "cocina", Backend: "lp", Target: "deposito", Protocol: "pdf", State: "stopped", Reason: "Sin papel"},
			{Name: "termica", Backend: "tcp", Target: "192.0.2.10:9100", Protocol: "escpos"},
			{Name: "vieja", Backend: "cups", Target: "Caja_Retirada", Protocol: "pdf", State: "not_found"},
		},
		System: apitype.SystemPrinters{Source: "cups", Printers: []apitype.SystemPrinter{
			{Name: "deposito", Description: "Depósito", Location: "Fondo", State: "stopped", Reason: "Sin papel",
				AcceptingJobs: true},
			{Name: cupsd.RawQueue, State: "idle", AcceptingJobs: true, Default: true},
		}},
	}
	if !reflect.DeepEqual(got.Aliases, want.Aliases) {
		t.Errorf("aliases:\n got %+v\nwant %+v", got.Aliases, want.Aliases)
	}
	sys := map[string]apitype.SystemPrinter{}
	for _, p := range got.System.Printers {
		sys[p.Name] = p
	}
	if got.System.Source != "cups" || got.System.Error != "" || len(sys) != 2 {
		t.Errorf("system: %+v, want the 2 queues of CUPS", got.System)
	}
	for _, w := range want.System.Printers {
		if sys[w.Name].State != w.State || sys[w.Name].Reason != w.Reason || sys[w.Name].AcceptingJobs != w.AcceptingJobs ||
			sys[w.Name].Default != w.Default || sys[w.Name].Location != w.Location {
			t.Errorf("system printer %s = %+v, want %+v", w.Name, sys[w.Name], w)
		}
	}
	if sys["deposito"].Description != "Depósito" {
		t.Errorf("deposito's description %q, want Depósito", sys["deposito"].Description)
	}

	// The command line shows the same, in Spanish.
	out, code := runCLI(t, env, "printers")
	if code != 0 || !regexp.MustCompile(`(?m)^\s+deposito\s+detenida \(Sin papel\)\s+sí\s+Depósito`).MatchString(out) ||
		!regexp.MustCompile(`(?m)^\s+`+cupsd.RawQueue+`\s+inactiva\s+sí\s.*\(predeterminada\)`).MatchString(out) {
		t.Errorf("cfe-agent printers: exit %d\n%s", code, out)
	}

	// profile add offers the same printers and takes one of CUPS's queues.
	now := time.Now()
	add := []string{"profile", "add", "esquina", "--no-interactivo", "--ruc", "219999830019",
		"--razon-social", "ALMACÉN LA ESQUINA S.R.L.", "--codigo-sucursal", "1", "--domicilio", "Rivera 1234",
		"--ciudad", "Montevideo", "--departamento", "Montevideo", "--fecha-emisor", "2020-03-01",
		"--certificado", certFile(t, "219999830019", now.Add(-time.Hour), now.AddDate(1, 0, 0)),
		"--clave-certificado", "clave", "--aceptar-cadena-no-confiable"}
	if out, code := runCLI(t, env, append(add, "--impresora", "Caja_Retirada")...); code == 0 ||
		!strings.Contains(out, "--impresora: el equipo no tiene una impresora «Caja_Retirada»") {
		t.Errorf("profile add with a printer CUPS lacks: exit %d\n%s", code, out)
	}
	if out, code := runCLI(t, env, append(add, "--impresora", "deposito")...); code != 0 ||
		!strings.Contains(out, "- deposito (detenida: Sin papel)") {
		t.Errorf("profile add with a CUPS queue: exit %d\n%s", code, out)
	}
	out, _ = runCLI(t, env, "profile", "show", "esquina")
	mustContainAll(t, "profile show esquina", out, "caja: backend: cups queue: deposito", "default_printer: caja")

	// The same rules as every route: another site's page gets nothing.
	req, _ := http.NewRequest(http.MethodGet, a.baseURL+"/printers", nil)
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	if resp, err := http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("cross-site GET /printers: HTTP %d, want 403", resp.StatusCode)
		}
	}

	// The default printer's queue stopped: within a minute /health is no
	// longer ok and names it, with CUPS's reason.
	e.Run(t, testtool.Require(t, "cupsdisable"), "-h", e.Server, "-r", "Sin papel", cupsd.RawQueue)
	var h map[string]any
	if !testtool.WaitUntil(t, time.Minute, func() bool { _, h = getJSON(t, a.baseURL+"/health"); return h["status"] != "ok" }) {
		t.Fatalf("/health still %v a minute after the default printer's queue stopped", h)
	}
	warnings, _ := json.Marshal(h["warnings"])
	if want := "la impresora predeterminada «caja» no está lista: la cola «" + cupsd.RawQueue + "» de CUPS está detenida (Sin papel)"; h["status"] != "degraded" || !strings.Contains(string(warnings), want) {
		t.Errorf("/health %v, want degraded with %q", h, want)
	}

	// Without CUPS the aliases are still listed, and the listing says why
	// the system's printers are missing.
	a.stop(t)
	down := agentEnv("CFE_AGENT_DATA_DIR="+dataDir, "CUPS_SERVER=127.0.0.1:"+itoa(int64(cupsd.FreePort(t))))
	a = startAgent(t, down, "--listen", "127.0.0.1:0")
	c, err := localclient.New(a.baseURL, localclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := c.Printers(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Aliases) != 5 || rep.Aliases[1].State != "" || len(rep.System.Printers) != 0 ||
		rep.System.Error == "" {
		t.Errorf("without CUPS: %+v", rep)
	}
}
