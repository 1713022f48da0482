package app

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// TestRunner_PrintDamaged: the tray's reprint (runner.Print, in-process) of
// a CFE whose stored XML is damaged answers the Spanish error saying so and
// how to recover it, which the tray shows as it is; the status page's
// report still reads.
func TestRunner_PrintDamaged(t *testing.T) {
	t.Setenv("TZ", "America/Montevideo") // the signing rule's zone
	r := openTestRunner(t)
	body, err := os.ReadFile(filepath.Join(testtool.RepoRoot(t), "examples", "e-ticket.json"))
	if err != nil {
		t.Fatal(err)
	}
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	req["uuid"] = "reimpresion-1"
	body, _ = json.Marshal(req)
	resp, err := http.Post(r.cur.srv.BaseURL()+"/sign-cfe", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var signed map[string]any
	err = json.NewDecoder(resp.Body).Decode(&signed)
	resp.Body.Close()
	if err != nil || signed["codigo_respuesta"] != "00" {
		t.Fatalf("signing: %v %v", signed, err)
	}

	r.mu.Lock()
	path := r.cur.a.Config.StorePath(r.cfg.DataDir, r.cur.a.Name)
	r.close()
	r.mu.Unlock()
	testtool.DamageStoredCFE(t, path, "reimpresion-1", testtool.StoredXML)
	r.mu.Lock()
	err = r.open(context.Background())
	r.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}

	err = r.Print(context.Background(), "reimpresion-1", "caja")
	if msg := cfe.ErrorMessage(err); !strings.Contains(msg, "está dañado") || !strings.Contains(msg, "«cfe-agent recuperar reimpresion-1»") {
		t.Fatalf("reprint of a damaged CFE: %v, want the message saying it is damaged and how to recover it", err)
	}
	rep, err := r.State(context.Background())
	if err != nil || rep.Status == "error" || len(rep.Receipts.Recent) != 1 || rep.Receipts.Recent[0].UUID != "reimpresion-1" {
		t.Fatalf("the report with a damaged CFE: %+v, %v", rep, err)
	}
}
