package main_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/profiles"
)

var (
	dgiListeningRE = regexp.MustCompile(`cfe-sandbox dgi escuchando en (http://\S+)`)
	dgiAdminRE     = regexp.MustCompile(`administración en (http://\S+)/admin/estado`)
)

// startDGIEmulatorProc runs the real `cfe-sandbox dgi` on free loopback
// ports, verdicts at once, and returns its services' URL, its admin URL and
// the certificate file its answers are signed with.
func startDGIEmulatorProc(t *testing.T) (url, admin, cert string) {
	t.Helper()
	agentBinary(t)
	bin, err := sandboxBin()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var out testtool.SyncBuffer
	cmd := exec.Command(bin, "dgi", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--data-dir", dir, "--procesamiento", "-1s")
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
	var m, a []string
	listening := testtool.WaitUntil(t, 30*time.Second, func() bool {
		m, a = dgiListeningRE.FindStringSubmatch(out.String()), dgiAdminRE.FindStringSubmatch(out.String())
		if m != nil && a != nil {
			return true
		}
		select {
		case <-done:
			t.Fatalf("cfe-sandbox dgi exited before listening:\n%s", out.String())
		default:
		}
		return false
	})
	if !listening {
		t.Fatalf("cfe-sandbox dgi did not listen within 30 s:\n%s", out.String())
	}
	return m[1], a[1], filepath.Join(dir, "dgi-cert.pem")
}

// dgiState is the part of /state this test reads.
type dgiState struct {
	Status   string         `json:"status"`
	Warnings []string       `json:"warnings"`
	DGI      map[string]int `json:"dgi"`
}

// TestAgent_DGIDirectMode, over the real binaries: an agent whose profile
// says dgi.modo: directo (the emulator's URLs, its certificate file) sends
// what it signs to `cfe-sandbox dgi`; the CFE the emulator rejects (its
// admin knob) reaches /state's dgi block and a degraded warning naming it,
// the code and what to do, on /state, on the status page and in doctor;
// every CFE
// reached DGI in exactly one envelope.
func TestAgent_DGIDirectMode(t *testing.T) {
	t.Parallel()
	url, admin, cert := startDGIEmulatorProc(t)
	post := func(path, body string) {
		t.Helper()
		resp, err := http.Post(admin+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: HTTP %d: %s", path, resp.StatusCode, b)
		}
	}
	post("/admin/rechazos", `{"tipoCFE":101,"serie":"A","nro":2,"codigo":"E04","detalle":"firma alterada"}`)

	dataDir := directModeDataDir(t, url, cert)
	env := procEnv(t, dataDir)
	p := startProc(t, env, "serve", "--listen", "127.0.0.1:0")
	p.waitLine("sending signed CFEs to DGI directly")
	for _, u := range []string{"dgi-1", "dgi-2", "dgi-3"} {
		p.signExample(u)
	}
	// DGI's verdicts reach /state, health, the page and doctor (through the
	// running agent).
	assertDGIRejection(t, p, env, "E04", "envío directo")
	// Exactly one envelope carried each CFE.
	resp, err := http.Get(admin + "/admin/cfes")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var counts struct {
		CFEs []struct {
			Nro    int64  `json:"nro"`
			Sobres int    `json:"sobres"`
			Estado string `json:"estado"`
		} `json:"cfes"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&counts); err != nil {
		t.Fatal(err)
	}
	if len(counts.CFEs) != 3 {
		t.Fatalf("DGI holds %d CFEs, want 3: %+v", len(counts.CFEs), counts.CFEs)
	}
	for _, c := range counts.CFEs {
		if c.Sobres != 1 {
			t.Errorf("CFE %d went in %d envelopes, want exactly 1", c.Nro, c.Sobres)
		}
	}
}

// TestAgent_DGIProviderMode, over the real binaries: provider mode end to
// end — the agent (default dgi.modo: proveedor) delivers what it signs to
// the real cfe-sandbox, which, as the provider, sends it to the real
// `cfe-sandbox dgi` (--dgi-url, --dgi-certificado); the emulator rejects
// one chosen CFE; the agent reads DGI's verdicts back from the service and
// shows them as direct mode does: /state's dgi block, a degraded warning
// naming the CFE, the code and what to do, the status page and doctor.
func TestAgent_DGIProviderMode(t *testing.T) {
	t.Parallel()
	url, admin, cert := startDGIEmulatorProc(t)
	resp, err := http.Post(admin+"/admin/rechazos", "application/json",
		strings.NewReader(`{"tipoCFE":101,"serie":"A","nro":2,"codigo":"E05","detalle":"rechazo elegido"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("reject knob: HTTP %d", resp.StatusCode)
	}
	service := startSandboxProc(t, "--dgi-url", url, "--dgi-certificado", cert)

	dataDir := dgiDataDir(t, "      consulta_proveedor: 200ms\n")
	env := procEnv(t, dataDir, "CFE_AGENT_HOSTED_URL="+service, "CFE_AGENT_HOSTED_API_KEY="+agentKey)
	p := startProc(t, env, "serve", "--listen", "127.0.0.1:0")
	for _, u := range []string{"prov-1", "prov-2", "prov-3"} {
		p.signExample(u)
	}
	assertDGIRejection(t, p, env, "E05", "por el proveedor")
}

// assertDGIRejection waits until /state's dgi block has DGI's verdicts on the
// three CFEs p signed, e-Ticket A-2 rejected with code, then checks exactly
// its six counts, the degraded warning naming A-2, the code and what to do,
// the status page, and doctor's lines under label ("envío directo", "por el
// proveedor").
func assertDGIRejection(t *testing.T, p *agentProc, env []string, code, label string) {
	t.Helper()
	var st dgiState
	var last []byte
	if !testtool.WaitUntil(t, time.Minute, func() bool {
		_, last = getAccept(t, p.baseURL+"/state", "application/json")
		st = dgiState{}
		if err := json.Unmarshal(last, &st); err != nil {
			t.Fatalf("/state: %v: %s", err, last)
		}
		return st.DGI["aceptados"]+st.DGI["rechazados"] == 3
	}) {
		t.Fatalf("DGI's verdicts never reached /state: %s", last)
	}
	want := map[string]int{"enviados": 3, "aceptados": 2, "rechazados": 1, "observados": 0, "pendientes": 0, "desconocidos": 0}
	if len(st.DGI) != len(want) {
		t.Errorf("dgi block %v, want exactly %v", st.DGI, want)
	}
	for k, v := range want {
		if got, ok := st.DGI[k]; !ok || got != v {
			t.Errorf("dgi.%s = %d (present %v), want %d", k, got, ok, v)
		}
	}
	var warning string
	for _, w := range st.Warnings {
		if strings.Contains(w, "e-Ticket A-2") {
			warning = w
		}
	}
	if st.Status != "degraded" || !strings.Contains(warning, code) || !strings.Contains(warning, "emita un comprobante nuevo") {
		t.Fatalf("status %s, warnings %q: want degraded naming e-Ticket A-2, %s and what to do", st.Status, st.Warnings, code)
	}
	_, page := getAccept(t, p.baseURL+"/", "text/html")
	if !bytes.Contains(page, []byte("e-Ticket A-2")) || !bytes.Contains(page, []byte(code)) {
		t.Errorf("the status page does not show the rejection:\n%s", page)
	}
	out, _ := runCLI(t, env, "doctor")
	if !strings.Contains(out, "WARN DGI ("+label+"): 3 enviados, 2 aceptados, 1 rechazados, 0 observados, 0 pendientes, 0 sin respuesta") ||
		!regexp.MustCompile(`(?m)^WARN DGI \(`+regexp.QuoteMeta(label)+`\): DGI rechazó el comprobante e-Ticket A-2 .*`+code).MatchString(out) {
		t.Errorf("doctor does not report the DGI state and the rejection:\n%s", out)
	}
}

// directModeDataDir returns a new data directory whose default profile
// speaks to DGI directly: the emulator at url (`cfe-sandbox dgi`), with the
// company certificate cert.
func directModeDataDir(t *testing.T, url, cert string) string {
	t.Helper()
	return dgiDataDir(t, "      modo: directo\n      url_recepcion: "+url+"/ePrueba/ws_eprueba\n"+
		"      url_consultas: "+url+"/ePrueba/ws_consultasPrueba\n      certificado: "+cert+"\n")
}

// dgiDataDir returns a new data directory whose default profile has the
// dgi block with the given lines (indented under it).
func dgiDataDir(t *testing.T, lines string) string {
	t.Helper()
	dataDir := t.TempDir()
	if _, _, err := profiles.EnsureDefaultWith(dataDir, profiles.Overrides{}); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(dataDir, profiles.FileName), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString("    dgi:\n" + lines)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	return dataDir
}
