package main_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// witnessFile is where the default sandbox profile's numbering witness lives
// under the witness folder agentEnv gives the agent of dataDir.
func witnessFile(dataDir string) string {
	return filepath.Join(filepath.Clean(dataDir)+"-testigo", "sandbox", "219999830019", "sandbox.json")
}

// copyDataDir copies the whole data directory from to a new folder to, as a
// technician backs it up (store, journal, configuration, logs).
func copyDataDir(t *testing.T, from, to string) {
	t.Helper()
	if err := os.RemoveAll(to); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(to, os.DirFS(from)); err != nil {
		t.Fatal(err)
	}
}

// TestAgent_OldCopyOfTheDataDirectory is issue 28's copy-back, over the real
// agent with the sandbox as hosted service: A-1..A-50 are signed and
// delivered, the data directory is copied (store and journal together, as a
// backup), A-51..A-100 are signed and delivered, and the copy is put back.
// Started with the hosted service unreachable, the agent finds the copy
// behind this machine's numbering witness (outside the data directory): it
// signs nothing (05, no number consumed), /health answers 503 naming the
// witness's marks and doctor fails. With the service back, numbering resumes
// at A-101 and the service holds A-1..A-101 once each. Put back once more, a
// technician settles it offline with the witness's number.
func TestAgent_OldCopyOfTheDataDirectory(t *testing.T) {
	sb := startSandbox(t)
	dataDir := filepath.Join(t.TempDir(), "datos")
	env := agentEnv("CFE_AGENT_DATA_DIR="+dataDir, "CFE_AGENT_HOSTED_URL="+sb.URL(), "CFE_AGENT_HOSTED_API_KEY="+agentKey)
	down := agentEnv("CFE_AGENT_DATA_DIR="+dataDir, "CFE_AGENT_HOSTED_URL=http://127.0.0.1:1", "CFE_AGENT_HOSTED_API_KEY="+agentKey)

	a := startAgent(t, env, "--listen", "127.0.0.1:0")
	signTickets(t, a.baseURL, "primeros", 1, 50)
	waitDelivered(t, a)
	a.stop(t)
	backup := filepath.Join(t.TempDir(), "copia")
	copyDataDir(t, dataDir, backup)

	a = startAgent(t, env, "--listen", "127.0.0.1:0")
	signTickets(t, a.baseURL, "segundos", 51, 50)
	waitDelivered(t, a)
	a.stop(t)
	if _, err := os.Stat(witnessFile(dataDir)); err != nil {
		t.Fatalf("no numbering witness outside the data directory: %v", err)
	}

	held := func(t *testing.T, mark int) {
		t.Helper()
		copyDataDir(t, backup, dataDir)
		a := startAgent(t, down, "--listen", "127.0.0.1:0")
		reason := fmt.Sprintf("e-Ticket serie A: los datos llegan al 50 y este equipo usó hasta el %d", mark)
		code, health := getJSON(t, a.baseURL+"/health")
		warnings := fmt.Sprint(health["warnings"])
		if code != http.StatusServiceUnavailable || health["status"] != "error" ||
			!strings.Contains(warnings, "la carpeta de datos es una copia anterior") || !strings.Contains(warnings, reason) ||
			!strings.Contains(warnings, witnessFile(dataDir)) {
			t.Fatalf("/health with an older copy put back = %d %v", code, health)
		}
		_, state := getJSON(t, a.baseURL+"/state")
		if n, _ := state["numeracion"].(map[string]any); n == nil || n["en_espera"] != true {
			t.Fatalf("/state numeracion = %v", state["numeracion"])
		}
		for i := range 2 {
			res := signTicket(t, a.baseURL, fmt.Sprint("rechazado-", i))
			msg := fmt.Sprint(res["mensaje_respuesta"])
			if res["codigo_respuesta"] != "05" || res["numero"] != nil && res["numero"] != float64(0) ||
				!strings.Contains(msg, reason) || !strings.Contains(msg, fmt.Sprintf("cfe-agent cae used-elsewhere 101 A %d", mark)) {
				t.Fatalf("sign-cfe with an older copy put back = %v", res)
			}
		}
		a.stop(t)
		if !strings.Contains(a.logs.String(), "older copy than the numbering witness") {
			t.Errorf("the agent's log does not say why it holds:\n%s", a.logs)
		}
		out, code := runCLI(t, down, "doctor")
		if code == 0 || !strings.Contains(out, "FAIL numeración: la carpeta de datos es una copia anterior") ||
			!strings.Contains(out, "FAIL testigo de numeración: "+witnessFile(dataDir)) {
			t.Errorf("doctor with an older copy put back: exit %d\n%s", code, out)
		}
	}

	t.Run("the service is unreachable: nothing signed until it answers", func(t *testing.T) {
		held(t, 100)
		// Nothing was consumed by the refusals, and the service, once back,
		// says A-100: the next is A-101, never A-51.
		a := startAgent(t, env, "--listen", "127.0.0.1:0")
		if code, health := getJSON(t, a.baseURL+"/health"); code != http.StatusOK {
			t.Fatalf("/health once the service answered = %d %v", code, health)
		}
		signTickets(t, a.baseURL, "de-vuelta", 101, 1)
		waitDelivered(t, a)
		a.stop(t)
		out, code := runCLI(t, env, "doctor")
		if !strings.Contains(out, "OK   testigo de numeración: "+witnessFile(dataDir)) || !strings.Contains(out, "e-Ticket serie A hasta el 101") {
			t.Errorf("doctor once settled: exit %d\n%s", code, out)
		}

		var got []struct {
			Nro int64 `json:"nro"`
		}
		getInto(t, sb.URL()+"/api/v1/cfeemitido/buscar?tipoFiltro=101", http.Header{"X-Api-Key": {agentKey}}, &got)
		seen := map[int64]int{}
		for _, c := range got {
			seen[c.Nro]++
		}
		for n := int64(1); n <= 101; n++ {
			if seen[n] != 1 {
				t.Errorf("the service holds A-%d %d times, want once", n, seen[n])
			}
		}
		if len(got) != 101 {
			t.Errorf("the service holds %d e-Tickets, want 101", len(got))
		}
	})

	t.Run("a technician settles it offline with the witness's number", func(t *testing.T) {
		held(t, 101)
		out, code := runCLI(t, down, "cae", "used-elsewhere", "101", "A", "60", "--reason", "me parece que llegó al 60")
		if code == 0 || !strings.Contains(out, "ya usó hasta el 101") {
			t.Fatalf("used-elsewhere below the witness's number: exit %d\n%s", code, out)
		}
		out, code = runCLI(t, down, "cae", "used-elsewhere", "101", "A", "101", "--reason", "el testigo registra hasta el 101")
		if code != 0 || !strings.Contains(out, "el agente sigue desde el 102") {
			t.Fatalf("used-elsewhere with the witness's number: exit %d\n%s", code, out)
		}
		a := startAgent(t, down, "--listen", "127.0.0.1:0")
		if code, health := getJSON(t, a.baseURL+"/health"); code == http.StatusServiceUnavailable {
			t.Fatalf("/health once settled = %d %v", code, health)
		}
		signTickets(t, a.baseURL, "sin-servicio", 102, 1)
		a.stop(t)
	})
}
