package main_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/store"
)

// storeFile and journalFile are where the default sandbox profile keeps its
// store and its numbering journal under dataDir.
func storeFile(dataDir string) string {
	return filepath.Join(dataDir, "store", "sandbox", "sandbox.db")
}

func journalFile(dataDir string) string {
	return filepath.Join(dataDir, "numbering", "sandbox", "sandbox", "journal.json")
}

// signTicket signs the example e-Ticket under uuid and returns the answer.
func signTicket(t *testing.T, baseURL, uuid string) map[string]any {
	t.Helper()
	var req map[string]any
	if err := json.Unmarshal(example(t, "e-ticket.json"), &req); err != nil {
		t.Fatal(err)
	}
	req["uuid"] = uuid
	body, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	return signCFE(t, baseURL, body)
}

// signTickets signs n e-Tickets and checks they got the numbers from..from+n-1
// of serie A.
func signTickets(t *testing.T, baseURL, prefix string, from, n int) {
	t.Helper()
	for i := range n {
		res := signTicket(t, baseURL, fmt.Sprintf("%s-%d", prefix, i))
		if res["codigo_respuesta"] != "00" || res["serie"] != "A" || res["numero"] != float64(from+i) {
			t.Fatalf("sign-cfe %s-%d = %v %v %v %v, want A-%d", prefix, i, res["codigo_respuesta"], res["mensaje_respuesta"],
				res["serie"], res["numero"], from+i)
		}
	}
}

// TestAgent_LostStoreNeverSignsANumberTwice is reproduction 2 of issue 14:
// are signed; the store file is then deleted, truncated or
// replaced by an older copy, and the agent restarted. It must never sign
// A-1..A-5 again: the numbering journal (outside the store's folder) tells
// it where numbering stands.
func TestAgent_LostStoreNeverSignsANumberTwice(t *testing.T) {
	t.Parallel()
	// fiveSigned returns an agent environment whose store holds A-1..A-5, the
	// agent stopped cleanly, and a copy of the store taken after A-3.
	fiveSigned := func(t *testing.T) (env []string, dataDir, afterA3 string) {
		dataDir = t.TempDir()
		env = agentEnv("CFE_AGENT_DATA_DIR=" + dataDir)
		a := startAgent(t, env, "--listen", "127.0.0.1:0")
		signTickets(t, a.baseURL, "antes", 1, 3)
		a.stop(t)
		afterA3 = filepath.Join(t.TempDir(), "copia-A-3.db")
		testtool.CopyFile(t, storeFile(dataDir), afterA3)
		a = startAgent(t, env, "--listen", "127.0.0.1:0")
		signTickets(t, a.baseURL, "despues", 4, 2)
		a.stop(t)
		return env, dataDir, afterA3
	}

	t.Run("deleted", func(t *testing.T) {
		env, dataDir, _ := fiveSigned(t)
		if err := os.Remove(storeFile(dataDir)); err != nil {
			t.Fatal(err)
		}
		a := startAgent(t, env, "--listen", "127.0.0.1:0")
		signTickets(t, a.baseURL, "nuevo", 6, 1)
		a.stop(t)
		logs, err := filepath.Glob(filepath.Join(dataDir, "logs", "*.log"))
		if err != nil || len(logs) == 0 {
			t.Fatalf("no agent log in %s: %v", dataDir, err)
		}
		var all []byte
		for _, f := range logs {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, b...)
		}
		if !strings.Contains(string(all), "numbering resumed above the numbering journal") || !strings.Contains(string(all), "raised to 5") {
			t.Errorf("the log does not say that numbering resumed above the journal:\n%s", all)
		}
	})
	t.Run("truncated to 0 bytes", func(t *testing.T) {
		env, dataDir, _ := fiveSigned(t)
		if err := os.Truncate(storeFile(dataDir), 0); err != nil {
			t.Fatal(err)
		}
		a := startAgent(t, env, "--listen", "127.0.0.1:0")
		signTickets(t, a.baseURL, "nuevo", 6, 1)
		a.stop(t)
	})
	t.Run("truncated to a partial size", func(t *testing.T) {
		env, dataDir, _ := fiveSigned(t)
		if err := os.Truncate(storeFile(dataDir), 3*int64(os.Getpagesize())); err != nil {
			t.Fatal(err)
		}
		out, code := runCLI(t, env, "serve", "--listen", "127.0.0.1:0")
		if code == 0 || !strings.Contains(out, "está truncado") || !strings.Contains(out, "Muévalo a otro lugar") {
			t.Fatalf("serve on a truncated store: exit %d\n%s", code, out)
		}
		// The technician moves the file aside, as the message says.
		if err := os.Rename(storeFile(dataDir), storeFile(dataDir)+".truncado"); err != nil {
			t.Fatal(err)
		}
		a := startAgent(t, env, "--listen", "127.0.0.1:0")
		signTickets(t, a.baseURL, "nuevo", 6, 1)
		a.stop(t)
	})
	t.Run("old backup restored", func(t *testing.T) {
		env, dataDir, afterA3 := fiveSigned(t)
		testtool.CopyFile(t, afterA3, storeFile(dataDir))
		a := startAgent(t, env, "--listen", "127.0.0.1:0")
		signTickets(t, a.baseURL, "restaurado", 6, 2)
		a.stop(t)
	})
	t.Run("killed, then deleted", func(t *testing.T) {
		dataDir := t.TempDir()
		env := agentEnv("CFE_AGENT_DATA_DIR=" + dataDir)
		a := startAgent(t, env, "--listen", "127.0.0.1:0")
		signTickets(t, a.baseURL, "antes", 1, 5)
		if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-a.done
		if err := os.Remove(storeFile(dataDir)); err != nil {
			t.Fatal(err)
		}
		a = startAgent(t, env, "--listen", "127.0.0.1:0")
		// Killed, the agent left the journal's block reserved (A-1..A-200,
		// store.DefaultJournalBlock): numbering resumes above it; A-6..A-200
		// are to be reported to DGI as annulled (docs/numbering.md).
		res := signTicket(t, a.baseURL, "nuevo")
		if want := store.DefaultJournalBlock + 1; res["codigo_respuesta"] != "00" || res["numero"] != float64(want) {
			t.Fatalf("after a kill and the loss of the store: %v %v, want A-%d", res["codigo_respuesta"], res["numero"], want)
		}
		a.stop(t)
	})
}

// TestAgent_LostDataAsksTheService: with a hosted service, an agent whose
// store and journal are both gone (a new data directory after a disk was
// lost) refuses to sign until the service says where numbering stands; while
// the service cannot be reached, /health says why and POST /sign-cfe answers
// 05 consuming nothing, until a technician runs "cae used-elsewhere".
func TestAgent_LostDataAsksTheService(t *testing.T) {
	t.Parallel()
	sb := startSandbox(t)
	dataDir := t.TempDir()
	env := agentEnv("CFE_AGENT_DATA_DIR="+dataDir, "CFE_AGENT_HOSTED_URL="+sb.URL(), "CFE_AGENT_HOSTED_API_KEY="+agentKey)
	a := startAgent(t, env, "--listen", "127.0.0.1:0")
	signTickets(t, a.baseURL, "antes", 1, 5)
	waitDelivered(t, a)
	a.stop(t)

	lose := func() {
		t.Helper()
		for _, f := range []string{storeFile(dataDir), journalFile(dataDir)} {
			if err := os.Remove(f); err != nil {
				t.Fatal(err)
			}
		}
	}

	t.Run("the service answers", func(t *testing.T) {
		lose()
		a := startAgent(t, env, "--listen", "127.0.0.1:0")
		if code, health := getJSON(t, a.baseURL+"/health"); code != http.StatusOK {
			t.Fatalf("/health = %d %v", code, health)
		}
		signTickets(t, a.baseURL, "despues", 6, 1)
		waitDelivered(t, a)
		a.stop(t)
	})

	t.Run("the service is unreachable", func(t *testing.T) {
		lose()
		down := agentEnv("CFE_AGENT_DATA_DIR="+dataDir, "CFE_AGENT_HOSTED_URL=http://127.0.0.1:1", "CFE_AGENT_HOSTED_API_KEY="+agentKey)
		a := startAgent(t, down, "--listen", "127.0.0.1:0")
		code, health := getJSON(t, a.baseURL+"/health")
		warnings := fmt.Sprint(health["warnings"])
		if code != http.StatusServiceUnavailable || health["status"] != "error" ||
			!strings.Contains(warnings, "no se puede firmar: no se sabe por qué número sigue la numeración") ||
			!strings.Contains(warnings, "cfe-agent cae used-elsewhere") {
			t.Fatalf("/health while numbering is held = %d %v", code, health)
		}
		_, state := getJSON(t, a.baseURL+"/state")
		if n, _ := state["numeracion"].(map[string]any); n == nil || n["en_espera"] != true {
			t.Fatalf("/state numeracion = %v", state["numeracion"])
		}
		for range 2 {
			res := signTicket(t, a.baseURL, "rechazado")
			if res["codigo_respuesta"] != "05" || !strings.Contains(fmt.Sprint(res["mensaje_respuesta"]), "no se sabe por qué número sigue la numeración") {
				t.Fatalf("sign-cfe while held = %v", res)
			}
		}
		a.stop(t)
		out, _ := runCLI(t, down, "doctor")
		if !strings.Contains(out, "FAIL numeración") || !strings.Contains(out, "no se sabe por qué número sigue la numeración") {
			t.Errorf("doctor does not report the hold:\n%s", out)
		}

		// The technician knows the last e-Ticket was A-6 (the service had it).
		out, code = runCLI(t, down, "cae", "used-elsewhere", "101", "A", "6", "--reason", "último número según el servicio en línea")
		if code != 0 {
			t.Fatalf("cae used-elsewhere: exit %d\n%s", code, out)
		}
		out, code = runCLI(t, down, "cae", "used-elsewhere", "111", "A", "0", "--reason", "las e-Facturas no se usan en esta caja")
		if code != 0 || !strings.Contains(out, "confirmado: ningún número de e-Factura serie A se usó fuera del agente") {
			t.Fatalf("cae used-elsewhere 111 A 0: exit %d\n%s", code, out)
		}
		a = startAgent(t, down, "--listen", "127.0.0.1:0")
		// Nothing was consumed by the refusals: the next number is A-7.
		signTickets(t, a.baseURL, "confirmado", 7, 1)
		_, health = getJSON(t, a.baseURL+"/health")
		if w := fmt.Sprint(health["warnings"]); !strings.Contains(w, "ya confirmadas: e-Ticket serie A, e-Factura serie A") {
			t.Errorf("/health after settling e-Ticket serie A: %v", w)
		}
		a.stop(t)

		// Back online, the service settles every other serie at the next start.
		a = startAgent(t, env, "--listen", "127.0.0.1:0")
		if code, health := getJSON(t, a.baseURL+"/health"); code != http.StatusOK {
			t.Fatalf("/health once the service answered = %d %v", code, health)
		}
		signTickets(t, a.baseURL, "en-linea", 8, 1)
		a.stop(t)
	})
}

// waitDelivered waits until the agent's outbox is empty.
func waitDelivered(t *testing.T, a *runningAgent) {
	t.Helper()
	var state struct {
		Outbox struct {
			Pending int `json:"pending"`
		} `json:"outbox"`
	}
	if !testtool.WaitUntil(t, 20*time.Second, func() bool {
		getInto(t, a.baseURL+"/state", nil, &state)
		return state.Outbox.Pending == 0
	}) {
		t.Fatalf("%d CFEs not delivered:\n%s", state.Outbox.Pending, a.logs)
	}
}

// TestAgent_RestoredBackupBehindTheService: a copy of the store taken after
// A-3 is put back after were signed, delivered to the sandbox,
// and the agent killed (so its journal holds no exact counters and cannot
// tell the copy from the intact file). The check the agent makes of the
// hosted service before serving finds A-5: the agent signs A-6, never A-4
// or A-5 again, and the service ends up with once each.
func TestAgent_RestoredBackupBehindTheService(t *testing.T) {
	t.Parallel()
	sb := startSandbox(t)
	dataDir := t.TempDir()
	env := agentEnv("CFE_AGENT_DATA_DIR="+dataDir, "CFE_AGENT_HOSTED_URL="+sb.URL(), "CFE_AGENT_HOSTED_API_KEY="+agentKey)
	a := startAgent(t, env, "--listen", "127.0.0.1:0")
	signTickets(t, a.baseURL, "antes", 1, 3)
	waitDelivered(t, a)
	a.stop(t)
	backup := filepath.Join(t.TempDir(), "copia-A-3.db")
	testtool.CopyFile(t, storeFile(dataDir), backup)

	a = startAgent(t, env, "--listen", "127.0.0.1:0")
	signTickets(t, a.baseURL, "despues", 4, 2)
	waitDelivered(t, a)
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-a.done
	testtool.CopyFile(t, backup, storeFile(dataDir))

	a = startAgent(t, env, "--listen", "127.0.0.1:0")
	// The agent's log file (read from disk: the pipe's buffer is still being
	// written) says where it learnt it.
	logFile, err := os.ReadFile(filepath.Join(dataDir, "logs", "cfe-agent.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(logFile), `msg="the hosted service's last number" type=101 serie=A number=5`) {
		t.Errorf("the agent's log does not say it learnt A-5 from the service before serving:\n%s", logFile)
	}
	signTickets(t, a.baseURL, "restaurado", 6, 1)
	waitDelivered(t, a)
	a.stop(t)

	var got []struct {
		Nro int64 `json:"nro"`
	}
	getInto(t, sb.URL()+"/api/v1/cfeemitido/buscar?tipoFiltro=101", http.Header{"X-Api-Key": {agentKey}}, &got)
	seen := map[int64]int{}
	for _, c := range got {
		seen[c.Nro]++
	}
	for n := int64(1); n <= 6; n++ {
		if seen[n] != 1 {
			t.Errorf("the service holds A-%d %d times, want once (all: %+v)", n, seen[n], got)
		}
	}
	if len(got) != 6 {
		t.Errorf("the service holds %d e-Tickets, want 6", len(got))
	}
}
