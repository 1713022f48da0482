package main_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/assets"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/localapi/localclient"
	"github.com/cfe-agent/cfe-agent/tray"
)

// warningsOf returns the report's warnings, one per line.
func warningsOf(rep map[string]any) string {
	var b strings.Builder
	ws, _ := rep["warnings"].([]any)
	for _, w := range ws {
		fmt.Fprintln(&b, w)
	}
	return b.String()
}

// trayAssess is what the tray shows for the agent at baseURL.
func trayAssess(t *testing.T, baseURL string) tray.Assessment {
	t.Helper()
	c, err := localclient.New(baseURL, localclient.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return tray.Assess(c.State(context.Background()))
}

// TestAgent_DiskFull runs the agent on a 256 MB tmpfs data directory (the
// store, its numbering journal and the configuration all live there) and
// fills it: /health turns to error with the reason (and the tray red), a
// signing request is answered 99 in Spanish and consumes nothing; once space
// is freed /health stays in error until the same request is signed, with
// the first number, and then it is ok again (the tray too).
func TestAgent_DiskFull(t *testing.T) {
	dataDir := testtool.MountTmpfs(t, "256m")
	storeDir := filepath.Dir(storeFile(dataDir))
	env := agentEnv("CFE_AGENT_DATA_DIR=" + dataDir)
	a := startAgent(t, env, "--listen", "127.0.0.1:0")

	code, health := getJSON(t, a.baseURL+"/health")
	if code != 200 || health["status"] != "ok" {
		t.Fatalf("/health on an empty 256 MB disk = %d %v", code, health)
	}

	filler := testtool.FillDisk(t, dataDir)
	code, health = getJSON(t, a.baseURL+"/health")
	if code != 503 || health["status"] != "error" || health["ok"] != false ||
		!strings.Contains(warningsOf(health), "libres de 256,0 MB en el disco de los datos ("+storeDir+"): no alcanza para guardar comprobantes; libere espacio") {
		t.Fatalf("/health on a full disk = %d %v", code, health)
	}

	req := example(t, "e-ticket.json")
	res := signCFE(t, a.baseURL, req)
	msg, _ := res["mensaje_respuesta"].(string)
	if res["codigo_respuesta"] != "99" || !strings.HasPrefix(msg, "no se pudo guardar el comprobante: el disco está lleno ("+storeDir+")") ||
		!strings.Contains(msg, "No se firmó ni se consumió ningún número") || strings.Contains(msg, "no space left") {
		t.Fatalf("sign-cfe on a full disk = %v", res)
	}
	_, state := getJSON(t, a.baseURL+"/state")
	storage, _ := state["storage"].(map[string]any)
	if storage["last_write_error"] != "el disco está lleno" || storage["last_write_error_at"] == nil ||
		storage["dir"] != storeDir || storage["total_bytes"] != float64(256<<20) ||
		!strings.Contains(warningsOf(state), "no se pudo guardar el último comprobante (") {
		t.Fatalf("/state on a full disk: storage %v, warnings:\n%s", storage, warningsOf(state))
	}

	// The tray, which reads /state, turns red with the same reasons.
	if as := trayAssess(t, a.baseURL); as.State != assets.IconError ||
		!strings.Contains(as.Reason, "el disco está lleno; los comprobantes no se firman hasta que se pueda escribir en "+storeDir) {
		t.Fatalf("tray on a full disk: %+v", as)
	}

	// doctor, asking the running agent, fails on the disk.
	if out, code := runCLI(t, env, "doctor"); code != 1 ||
		!strings.Contains(out, "FAIL disco: no se pudo guardar el último comprobante (") || !strings.Contains(out, "; quedan 0 KB libres de 256,0 MB") {
		t.Fatalf("doctor on a full disk: exit %d\n%s", code, out)
	}

	// Space is back, but the last commit failed: still an error, with that
	// reason only, until a commit succeeds.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	code, health = getJSON(t, a.baseURL+"/health")
	if w := warningsOf(health); code != 503 || health["status"] != "error" ||
		!strings.Contains(w, "no se pudo guardar el último comprobante (") || !strings.Contains(w, "el disco está lleno; los comprobantes no se firman") ||
		strings.Contains(w, "libres de") {
		t.Fatalf("/health with space freed, before a commit = %d %v", code, health)
	}

	res = signCFE(t, a.baseURL, req)
	if res["codigo_respuesta"] != "00" || res["numero"] != float64(1) {
		t.Fatalf("sign-cfe with space freed = %v", res)
	}
	code, health = getJSON(t, a.baseURL+"/health")
	if code != 200 || health["status"] != "ok" || len(health["warnings"].([]any)) != 0 {
		t.Fatalf("/health after a successful commit = %d %v", code, health)
	}
	if as := trayAssess(t, a.baseURL); as.State != assets.IconOK || as.Reason != "" {
		t.Fatalf("tray after a successful commit: %+v", as)
	}
	if out, _ := runCLI(t, env, "doctor"); !strings.Contains(out, "OK   disco: ") || !strings.Contains(out, " MB libres en "+storeDir) {
		t.Fatalf("doctor after a successful commit:\n%s", out)
	}
	_, state = getJSON(t, a.baseURL+"/state")
	storage, _ = state["storage"].(map[string]any)
	if _, ok := storage["last_write_error"]; ok || storage["free_bytes"].(float64) < 200<<20 {
		t.Fatalf("/state after a successful commit: storage %v", storage)
	}

	// An agent stopped and started again on a full disk starts (it only
	// reads its configuration and store), reports the disk, and signs the
	// next number once space is freed.
	filler = testtool.FillDisk(t, dataDir)
	a.stop(t)
	a = startAgent(t, env, "--listen", "127.0.0.1:0")
	code, health = getJSON(t, a.baseURL+"/health")
	if code != 503 || health["status"] != "error" || !strings.Contains(warningsOf(health), "no alcanza para guardar comprobantes") {
		t.Fatalf("/health of an agent started on a full disk = %d %v", code, health)
	}
	second := strings.Replace(string(req), `"uuid": "3f2b8c1e-`, `"uuid": "af2b8c1e-`, 1)
	if second == string(req) {
		t.Fatal("the example request has no uuid to change")
	}
	if res = signCFE(t, a.baseURL, []byte(second)); res["codigo_respuesta"] != "99" ||
		!strings.HasPrefix(res["mensaje_respuesta"].(string), "no se pudo guardar el comprobante: el disco está lleno") {
		t.Fatalf("sign-cfe after a restart on a full disk = %v", res)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	if res = signCFE(t, a.baseURL, []byte(second)); res["codigo_respuesta"] != "00" || res["numero"] != float64(2) {
		t.Fatalf("sign-cfe after the restart with space freed = %v", res)
	}
	a.stop(t)
}
