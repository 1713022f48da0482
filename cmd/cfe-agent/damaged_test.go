package main_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// TestAgent_DamagedStoreNeverPanics is item 4 of issue 17: a store whose
// data pages were zeroed (a failing disk) made the agent die with a Go panic
// trace. Every command that opens the store must instead exit non-zero with
// the Spanish message naming the file and what to do; after the technician
// moves the file aside, the agent starts on a new one and numbering goes on
// above the numbering journal.
func TestAgent_DamagedStoreNeverPanics(t *testing.T) {
	dataDir := t.TempDir()
	env := agentEnv("CFE_AGENT_DATA_DIR=" + dataDir)
	a := startAgent(t, env, "--listen", "127.0.0.1:0")
	signTickets(t, a.baseURL, "antes", 1, 3)
	a.stop(t)

	path := storeFile(dataDir)
	testtool.ZeroStoreDataPages(t, path) // every page but the two meta pages

	for _, args := range [][]string{
		{"serve", "--listen", "127.0.0.1:0"},
		{"cae", "list"},
		{"cae", "used-elsewhere", "101", "A", "0", "--reason", "prueba"},
	} {
		t.Run(strings.Join(args[:min(2, len(args))], " "), func(t *testing.T) {
			out, code := runCLI(t, env, args...)
			if code == 0 {
				t.Fatalf("%s on a damaged store exited 0:\n%s", args, out)
			}
			for _, bad := range []string{"panic:", "goroutine ", "SIGBUS", "SIGSEGV"} {
				if strings.Contains(out, bad) {
					t.Fatalf("%s on a damaged store printed a Go trace (%q):\n%s", args, bad, out)
				}
			}
			for _, want := range []string{"el archivo de datos " + path + " está dañado", "consérvelo", "restaure una copia de seguridad", "diario de numeración"} {
				if !strings.Contains(out, want) {
					t.Fatalf("%s on a damaged store does not say %q:\n%s", args, want, out)
				}
			}
		})
	}

	// The technician moves the file aside, as the message says: the agent
	// starts on a new store and numbering resumes above the journal.
	if err := os.Rename(path, path+".dañado"); err != nil {
		t.Fatal(err)
	}
	a = startAgent(t, env, "--listen", "127.0.0.1:0")
	signTickets(t, a.baseURL, "nuevo", 4, 1)
	a.stop(t)
}

// TestAgent_StoreDamagedWhileServing: the store's data pages are zeroed
// under a running agent. Signing (the committer's transaction, outside any
// HTTP handler) and a repeated request (a query) answer an error, /health
// turns to error, and the process goes on serving until it is stopped.
func TestAgent_StoreDamagedWhileServing(t *testing.T) {
	dataDir := t.TempDir()
	env := agentEnv("CFE_AGENT_DATA_DIR=" + dataDir)
	a := startAgent(t, env, "--listen", "127.0.0.1:0")
	signTickets(t, a.baseURL, "antes", 1, 2)

	testtool.ZeroStoreDataPages(t, storeFile(dataDir))

	for _, uuid := range []string{"despues-del-dano", "antes-0"} {
		var req map[string]any
		if err := json.Unmarshal(example(t, "e-ticket.json"), &req); err != nil {
			t.Fatal(err)
		}
		req["uuid"] = uuid
		body, _ := json.Marshal(req)
		resp, err := http.Post(a.baseURL+"/sign-cfe", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatalf("POST /sign-cfe %s after the damage: %v (the agent died?)\n%s", uuid, err, a.logs)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var res map[string]any
		if err := json.Unmarshal(b, &res); err != nil {
			t.Fatalf("POST /sign-cfe %s after the damage: HTTP %d %s", uuid, resp.StatusCode, b)
		}
		t.Logf("POST /sign-cfe %s after the damage: HTTP %d %v %v", uuid, resp.StatusCode, res["codigo_respuesta"], res["mensaje_respuesta"])
		if res["codigo_respuesta"] == "00" {
			t.Fatalf("POST /sign-cfe %s signed on a damaged store: %s", uuid, b)
		}
		// The cashier reads what happened, not "reintente": retrying cannot help.
		if msg, _ := res["mensaje_respuesta"].(string); res["codigo_respuesta"] == "99" && !strings.Contains(msg, "está dañado") {
			t.Errorf("POST /sign-cfe %s on a damaged store says %q, want the damaged file's message", uuid, msg)
		}
	}
	code, h := getJSON(t, a.baseURL+"/health")
	if code != http.StatusServiceUnavailable || h["status"] != "error" {
		t.Fatalf("/health on a damaged store: HTTP %d %v", code, h)
	}
	if hb, _ := json.Marshal(h); !strings.Contains(string(hb), "está dañado") {
		t.Errorf("/health does not say the store file is damaged: %s", hb)
	}
	select {
	case err := <-a.done:
		t.Fatalf("the agent exited on a damaged store: %v\n%s", err, a.logs)
	case <-time.After(100 * time.Millisecond):
	}
	a.stop(t)
	for _, bad := range []string{"panic:", "goroutine "} {
		if strings.Contains(a.logs.String(), bad) {
			t.Fatalf("the agent's output has a Go trace (%q):\n%s", bad, a.logs)
		}
	}
}
