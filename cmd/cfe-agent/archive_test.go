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
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/store"
)

// cfe-agent archive moves only delivered CFEs; once moved, the agent still
// reprints them (POST /pdf) and writes their envelope byte for byte.
func TestArchive_MovesDeliveredAndStillFinds(t *testing.T) {
	dataDir := t.TempDir()
	env := agentEnv("CFE_AGENT_DATA_DIR=" + dataDir)
	a := startAgent(t, env, "--listen", "127.0.0.1:0")
	ticket := signCFE(t, a.baseURL, example(t, "e-ticket.json"))
	factura := signCFE(t, a.baseURL, example(t, "e-factura.json"))
	a.stop(t)
	now := time.Now().In(cfe.Montevideo)
	today := now.Format(time.DateOnly)
	tomorrow := now.AddDate(0, 0, 1).Format(time.DateOnly)

	if out, code := runCLI(t, env, "archive", "--antes", "2026-13-01"); code == 0 || !strings.Contains(out, "no es una fecha") {
		t.Errorf("a wrong date: exit %d\n%s", code, out)
	}
	// Not delivered yet: nothing moves.
	out, code := runCLI(t, env, "archive", "--antes", tomorrow)
	if code != 0 || !strings.Contains(out, "0 CFE firmados antes del "+tomorrow+" movidos") || !strings.Contains(out, "sin entregar") {
		t.Fatalf("archive before delivery: exit %d\n%s", code, out)
	}
	// The hosted service accepts both (as the outbox would record it).
	db, err := store.Open(storeFile(dataDir), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range []map[string]any{ticket, factura} {
		if err := db.MarkDelivered(context.Background(), c["uuid"].(string), int64(100+i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	out, code = runCLI(t, env, "archive", "--antes", tomorrow)
	archive := "sandbox-archive-" + now.Format("2006") + ".db"
	if code != 0 || !strings.Contains(out, "2 CFE firmados antes del "+tomorrow+" movidos") || !strings.Contains(out, "2 CFE en "+archive) {
		t.Fatalf("archive: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(storeFile(dataDir)), archive)); err != nil {
		t.Fatal(err)
	}

	// An envelope of today still holds both, byte for byte.
	f := filepath.Join(t.TempDir(), "sobre.xml")
	if out, code := runCLI(t, env, "envelope", "--desde", today, "-o", f); code != 0 || !strings.Contains(out, "con 2 CFE") {
		t.Fatalf("envelope after archiving: exit %d\n%s", code, out)
	}
	e, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	env2, err := cfe.ParseEnvelope(e)
	if err != nil || len(env2.CFEs) != 2 || !bytes.Equal(env2.CFEs[0].XML, []byte(ticket["xml_firmado"].(string))) ||
		!bytes.Equal(env2.CFEs[1].XML, []byte(factura["xml_firmado"].(string))) {
		t.Fatalf("the envelope's CFEs are not the archived ones byte for byte (%v)", err)
	}

	// The agent reprints an archived CFE.
	a = startAgent(t, env, "--listen", "127.0.0.1:0")
	defer a.stop(t)
	body, _ := json.Marshal(map[string]any{"uuid": ticket["uuid"], "impresora": "archivo"})
	resp, err := http.Post(a.baseURL+"/pdf", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !bytes.HasPrefix(doc, []byte("%PDF")) {
		t.Fatalf("POST /pdf of an archived CFE: HTTP %d %.200s", resp.StatusCode, doc)
	}
}
