package main_test

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// sandboxBin is the cfe-sandbox binary, built once, beside the agent's, by
// the first test that runs it.
var sandboxBin = sync.OnceValues(func() (string, error) {
	if agentBin == "" {
		return "", fmt.Errorf("no agent binary either")
	}
	bin := filepath.Join(filepath.Dir(agentBin), "cfe-sandbox")
	if out, err := exec.Command("go", "build", "-o", bin, "../cfe-sandbox").CombinedOutput(); err != nil {
		return "", fmt.Errorf("building cfe-sandbox: %w\n%s", err, out)
	}
	return bin, nil
})

var sandboxListeningRE = regexp.MustCompile(`listening on (http://\S+)`)

// startSandboxProc runs the real cfe-sandbox binary on a free loopback port
// with the e2e key for the demo company (the default profile's RUC), and
// returns its URL. It stops at the end of the test. extra are more flags;
// without them it sends nothing to DGI.
func startSandboxProc(t *testing.T, extra ...string) string {
	t.Helper()
	agentBinary(t) // skips where no binary can be built
	bin, err := sandboxBin()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	seed := filepath.Join(dir, "seed.json")
	if err := os.WriteFile(seed, []byte(`{"apiKeys":[{"empresa":"219999830019","nombre":"caja e2e","key":"`+agentKey+`"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	var out testtool.SyncBuffer
	if len(extra) == 0 {
		extra = []string{"--dgi-url", "no"}
	}
	cmd := exec.Command(bin, append([]string{"--data-dir", filepath.Join(dir, "datos"), "--listen", "127.0.0.1:0", "--seed", seed,
		"--demo-password", "demo-password"}, extra...)...)
	cmd.Stdout, cmd.Stderr = &out, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	// Each write of its output is looked at; its exit ends the wait.
	text, ok := out.Await(done, 30*time.Second, sandboxListeningRE.MatchString)
	if !ok {
		select {
		case <-done:
			t.Fatalf("cfe-sandbox exited before listening:\n%s", text)
		default:
			t.Fatalf("cfe-sandbox did not listen within 30 s:\n%s", text)
		}
	}
	return sandboxListeningRE.FindStringSubmatch(text)[1]
}

// closedURL is a loopback URL nothing listens on: the hosted service down.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + l.Addr().String()
	l.Close()
	return u
}

// quarantineState is the part of /state this test reads.
type quarantineState struct {
	Status string `json:"status"`
	Outbox struct {
		Pending     int `json:"pending"`
		Quarantined int `json:"quarantined"`
		Quarantine  []struct {
			UUID   string `json:"uuid"`
			Nombre string `json:"nombre"`
			Serie  string `json:"serie"`
			Numero int64  `json:"numero"`
			Motivo string `json:"motivo"`
		} `json:"quarantine"`
	} `json:"outbox"`
}

// waitOutbox polls /state until the outbox holds pending and quarantined
// CFEs, and returns that state.
func waitOutbox(t *testing.T, a *runningAgent, pending, quarantined int) quarantineState {
	t.Helper()
	var st quarantineState
	if !testtool.WaitUntil(t, 30*time.Second, func() bool {
		st = quarantineState{}
		getInto(t, a.baseURL+"/state", nil, &st)
		return st.Outbox.Pending == pending && st.Outbox.Quarantined == quarantined
	}) {
		t.Fatalf("outbox %+v, want %d pending and %d quarantined:\n%s", st.Outbox, pending, quarantined, a.logs)
	}
	return st
}

// serviceHolds lists the e-Tickets the sandbox at url holds, in arrival
// order.
func serviceHolds(t *testing.T, url string) []struct {
	UUID string `json:"uuid"`
	Nro  int64  `json:"nro"`
} {
	t.Helper()
	var got []struct {
		UUID string `json:"uuid"`
		Nro  int64  `json:"nro"`
	}
	getInto(t, url+"/api/v1/cfeemitido/buscar?tipoFiltro=101", http.Header{"X-Api-Key": {agentKey}}, &got)
	return got
}

// postPDF asks the agent for a CFE's PDF and returns the status and body.
func postPDF(t *testing.T, baseURL, uuid string) (int, string) {
	t.Helper()
	resp, err := http.Post(baseURL+"/pdf", "application/json", bytes.NewReader([]byte(`{"uuid":"`+uuid+`","impresora":"ninguna"}`)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestAgent_UnreadableCFE is issue 28 item 3 over the real binaries: 20
// e-Tickets signed with the hosted service down, a backup taken, the agent
// stopped and one bit flipped in the stored XML of A-8. Started with the
// real cfe-sandbox up, the agent delivers the 19 others in order; /health
// is degraded naming A-8, /state lists it, /pdf of it says it is damaged
// and how to recover it, doctor fails naming it and the command.
// «cfe-agent recuperar» (through the running agent, from the agent's own
// backup) puts it back: it is delivered and /health is ok again. Then a
// delivered CFE damaged the same way is recovered from the service's copy.
func TestAgent_UnreadableCFE(t *testing.T) {
	t.Parallel()
	service := startSandboxProc(t)
	dataDir := t.TempDir()
	down := agentEnv("CFE_AGENT_DATA_DIR="+dataDir, "CFE_AGENT_HOSTED_URL="+closedURL(t), "CFE_AGENT_HOSTED_API_KEY="+agentKey)
	up := agentEnv("CFE_AGENT_DATA_DIR="+dataDir, "CFE_AGENT_HOSTED_URL="+service, "CFE_AGENT_HOSTED_API_KEY="+agentKey)

	a := startAgent(t, down, "--listen", "127.0.0.1:0")
	signTickets(t, a.baseURL, "caja", 1, 20) // caja-0..caja-19 are A-1..A-20
	waitOutbox(t, a, 20, 0)
	if out, code := runCLI(t, down, "backup"); code != 0 {
		t.Fatalf("cfe-agent backup: exit %d\n%s", code, out)
	}
	a.stop(t)
	testtool.DamageStoredCFE(t, storeFile(dataDir), "caja-7", testtool.StoredXML)

	a = startAgent(t, up, "--listen", "127.0.0.1:0")
	st := waitOutbox(t, a, 0, 1)
	var want []int64
	for n := int64(1); n <= 20; n++ {
		if n != 8 {
			want = append(want, n)
		}
	}
	var got []int64
	for _, c := range serviceHolds(t, service) {
		got = append(got, c.Nro)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("the service received %v, want A-1..A-20 but A-8, in order", got)
	}
	if q := st.Outbox.Quarantine; len(q) != 1 || q[0].UUID != "caja-7" || q[0].Nombre != "e-Ticket" || q[0].Serie != "A" ||
		q[0].Numero != 8 || !strings.Contains(q[0].Motivo, "XML firmado") {
		t.Fatalf("/state quarantine %+v, want A-8 (caja-7) with its reason", q)
	}
	code, health := getJSON(t, a.baseURL+"/health")
	warnings := fmt.Sprint(health["warnings"])
	if code != http.StatusOK || health["status"] != "degraded" || !strings.Contains(warnings, "el comprobante e-Ticket A-8 está dañado") ||
		!strings.Contains(warnings, "«cfe-agent recuperar caja-7»") {
		t.Fatalf("/health = %d %v, want degraded naming e-Ticket A-8 and the command", code, health)
	}
	if code, body := postPDF(t, a.baseURL, "caja-7"); code != http.StatusServiceUnavailable ||
		!strings.Contains(body, "e-Ticket A-8") || !strings.Contains(body, "está dañado") || !strings.Contains(body, "cfe-agent recuperar caja-7") {
		t.Fatalf("POST /pdf of A-8 = %d %s, want 503 saying it is damaged and how to recover it", code, body)
	}
	out, code := runCLI(t, up, "doctor")
	if code == 0 || !strings.Contains(out, "FAIL comprobante dañado: e-Ticket A-8 (uuid caja-7)") || !strings.Contains(out, "«cfe-agent recuperar caja-7»") {
		t.Fatalf("doctor: exit %d\n%s\nwant a FAIL naming e-Ticket A-8 and how to recover it", code, out)
	}

	// A copy that does not exist, and the service, which never received
	// nothing changes, and the command says why for each.
	out, code = runCLI(t, up, "recuperar", "caja-7", "--copia", filepath.Join(t.TempDir(), "no-existe.db"))
	if code == 0 || !strings.Contains(out, "ninguna copia tiene intacto el comprobante caja-7") ||
		!strings.Contains(out, "no-existe.db") || !strings.Contains(out, "el servicio en la nube no tiene el comprobante") {
		t.Fatalf("recuperar from nowhere: exit %d\n%s", code, out)
	}
	// The agent's own backup holds it.
	out, code = runCLI(t, up, "recuperar", "caja-7")
	if code != 0 || !strings.Contains(out, "recuperado: e-Ticket A-8 (uuid caja-7), de la copia de seguridad "+filepath.Join(dataDir, "backups")) ||
		!strings.Contains(out, "el agente lo envía ahora") {
		t.Fatalf("recuperar: exit %d\n%s", code, out)
	}
	waitOutbox(t, a, 0, 0)
	holds := serviceHolds(t, service)
	if len(holds) != 20 || holds[19].UUID != "caja-7" || holds[19].Nro != 8 {
		t.Fatalf("after the recovery the service holds %+v, want 20 with A-8 last", holds)
	}
	if code, health := getJSON(t, a.baseURL+"/health"); code != http.StatusOK || health["status"] != "ok" {
		t.Fatalf("/health after the recovery = %d %v, want ok", code, health)
	}
	original := signTicket(t, a.baseURL, "caja-2") // a replay: A-3's stored answer, its signed XML whole
	if original["numero"] != float64(3) {
		t.Fatalf("replay of caja-2 = %v", original)
	}
	a.stop(t)
	if n := strings.Count(a.logs.String(), "a signed CFE cannot be read back"); n != 1 { // read once the agent has exited
		t.Errorf("the agent's log says %d times that it held a CFE, want once:\n%s", n, a.logs)
	}

	// A delivered CFE damaged the same way: not in the outbox, so
	// nothing is held, but reading it says it is damaged; the service's
	// copy puts it back.
	testtool.DamageStoredCFE(t, storeFile(dataDir), "caja-2", testtool.StoredXML)
	a = startAgent(t, up, "--listen", "127.0.0.1:0")
	if code, body := postPDF(t, a.baseURL, "caja-2"); code != http.StatusServiceUnavailable || !strings.Contains(body, "e-Ticket A-3") {
		t.Fatalf("POST /pdf of the damaged A-3 = %d %s", code, body)
	}
	out, code = runCLI(t, up, "recuperar", "caja-2", "--copia", filepath.Join(t.TempDir(), "no-existe.db"))
	if code != 0 || !strings.Contains(out, "recuperado: e-Ticket A-3 (uuid caja-2), de la copia del servicio en la nube") {
		t.Fatalf("recuperar from the service: exit %d\n%s", code, out)
	}
	again := signTicket(t, a.baseURL, "caja-2")
	if again["xml_firmado"] != original["xml_firmado"] || again["numero"] != float64(3) {
		t.Fatalf("A-3 after its recovery from the service is not the document signed:\n%v\nwant\n%v", again["xml_firmado"], original["xml_firmado"])
	}
	if out, code := runCLI(t, up, "recuperar", "caja-2"); code == 0 || !strings.Contains(out, "no hay nada que recuperar") {
		t.Errorf("recuperar of a CFE that reads: exit %d\n%s", code, out)
	}
	a.stop(t)
	var n int
	for _, c := range serviceHolds(t, service) {
		if c.UUID == "caja-2" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("the service holds A-3 %d times", n)
	}
}
