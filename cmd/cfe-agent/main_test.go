package main_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// agentBin is the cfe-agent binary under test, built once by TestMain; ""
// when it could not be built (see agentBinary).
var agentBin string

func TestMain(m *testing.M) {
	if _, err := exec.LookPath("go"); err != nil && runtime.GOOS == "windows" {
		// A Windows test executable run under Wine (internal/wintest):
		// no go to build the agent with; the tests that run it skip.
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "cfe-agent-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	agentBin = filepath.Join(dir, "cfe-agent")
	witnessBase = dir
	if runtime.GOOS == "windows" {
		agentBin += ".exe"
	}
	if out, err := exec.Command("go", "build", "-o", agentBin, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building cfe-agent: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// agentBinary returns the agent binary TestMain built, or skips the test
// when there is none.
func agentBinary(t testing.TB) string {
	t.Helper()
	if agentBin == "" {
		t.Skip("no cfe-agent binary: go is not installed here (a Windows test executable under Wine)")
	}
	return agentBin
}

// agentEnv is the environment of a child agent: Montevideo time, no profile
// overrides inherited from the developer's shell, and a numbering witness
// of its own (by default it would be the developer's ~/.local/state): beside
// the data directory extra names (CFE_AGENT_DATA_DIR), so that restarts on
// that data directory see the same witness, as on a real machine; in a new
// folder when extra names none. extra may set CFE_AGENT_WITNESS_DIR itself.
func agentEnv(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CFE_AGENT_") && !strings.HasPrefix(kv, "TZ=") {
			env = append(env, kv)
		}
	}
	return append(append(env, "TZ=America/Montevideo", "CFE_AGENT_WITNESS_DIR="+testWitnessDir(extra)), extra...)
}

// witnessBase holds the witness folders agentEnv makes for environments
// without a data directory; TestMain removes it.
var witnessBase string

// testWitnessDir is the witness folder of a child agent's environment: the
// data directory's name with "-testigo" (outside it, removed with the
// test's temporary folders), or a new folder under witnessBase.
func testWitnessDir(env []string) string {
	for _, kv := range env {
		if dir, ok := strings.CutPrefix(kv, "CFE_AGENT_DATA_DIR="); ok && dir != "" {
			return filepath.Clean(dir) + "-testigo"
		}
	}
	base := witnessBase
	if base == "" {
		base = os.TempDir()
	}
	dir, err := os.MkdirTemp(base, "testigo-")
	if err != nil {
		panic(err)
	}
	return dir
}

// runCLI runs a one-shot command and returns its output and exit code.
func runCLI(t testing.TB, env []string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(agentBinary(t), args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return string(out), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

type runningAgent struct {
	cmd     *exec.Cmd
	baseURL string
	logs    *bytes.Buffer
	done    chan error
}

var listeningRE = regexp.MustCompile(`msg="cfe-agent listening" base_url=(\S+)`)

// startAgent runs `cfe-agent serve` and waits until it says where it listens.
func startAgent(t testing.TB, env []string, args ...string) *runningAgent {
	t.Helper()
	cmd := exec.Command(agentBinary(t), append([]string{"serve"}, args...)...)
	cmd.Env = env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	a := &runningAgent{cmd: cmd, logs: &bytes.Buffer{}, done: make(chan error, 1)}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			a.logs.WriteString(line + "\n")
			if m := listeningRE.FindStringSubmatch(line); m != nil {
				found <- m[1]
			}
		}
		a.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-a.done
		}
	})
	select {
	case a.baseURL = <-found:
	case err := <-a.done:
		t.Fatalf("the agent exited before listening (%v):\n%s", err, a.logs)
	case <-time.After(20 * time.Second):
		t.Fatalf("the agent did not start listening:\n%s", a.logs)
	}
	return a
}

// stop sends SIGTERM and expects a clean exit (status 0).
func (a *runningAgent) stop(t testing.TB) {
	t.Helper()
	if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-a.done:
		if err != nil {
			t.Fatalf("the agent did not exit cleanly on SIGTERM: %v\n%s", err, a.logs)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the agent did not exit within 10 s of SIGTERM:\n%s", a.logs)
	}
}

func getJSON(t *testing.T, url string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	return resp.StatusCode, v
}

func signCFE(t *testing.T, baseURL string, body []byte) map[string]any {
	t.Helper()
	resp, err := http.Post(baseURL+"/sign-cfe", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /sign-cfe: HTTP %d %s (%v)", resp.StatusCode, b, err)
	}
	return v
}

func example(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testtool.RepoRoot(t), "examples", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAgent_FirstRunSignsOutOfTheBox is the newcomer's path: an empty data
// directory, the embedded sandbox default, the README's example request.
func TestAgent_FirstRunSignsOutOfTheBox(t *testing.T) {
	dataDir := t.TempDir()
	env := agentEnv("CFE_AGENT_DATA_DIR=" + dataDir)
	a := startAgent(t, env, "--listen", "127.0.0.1:0")
	if !strings.HasPrefix(a.baseURL, "http://127.0.0.1:") || strings.HasSuffix(a.baseURL, ":0") {
		t.Fatalf("base_url %q does not carry the real port", a.baseURL)
	}
	code, health := getJSON(t, a.baseURL+"/health")
	if code != 200 || health["ok"] != true || health["base_url"] != a.baseURL {
		t.Fatalf("/health = %d %v", code, health)
	}
	res := signCFE(t, a.baseURL, example(t, "e-ticket.json"))
	if res["codigo_respuesta"] != "00" || res["numero"] != float64(1) || res["serie"] != "A" {
		t.Fatalf("sign-cfe = %v", res)
	}
	xml := []byte(res["xml_firmado"].(string))
	testtool.MustValidateXSD(t, testtool.XSD(t, "CFEDGI.xsd"), xml)
	if out, ok := testtool.XMLSecVerify(t, xml, ""); !ok {
		t.Fatalf("xmlsec1 rejects the signed CFE:\n%s", out)
	}
	// The same request again is answered from the store: same number.
	if again := signCFE(t, a.baseURL, example(t, "e-ticket.json")); again["numero"] != res["numero"] || again["xml_firmado"] != res["xml_firmado"] {
		t.Fatalf("a retry got a different answer: %v", again["numero"])
	}
	_, state := getJSON(t, a.baseURL+"/state")
	outbox, _ := state["outbox"].(map[string]any)
	if state["profile"] != "sandbox" || state["environment"] != "sandbox" || outbox["pending"] != float64(1) {
		t.Fatalf("/state = %v", state)
	}
	_, root := getJSON(t, a.baseURL+"/")
	if root["base_url"] != a.baseURL {
		t.Fatalf("GET / base_url = %v", root["base_url"])
	}

	// doctor asks the running agent.
	if out, code := runCLI(t, env, "doctor"); code != 0 || !strings.Contains(out, "el agente está en ejecución en "+a.baseURL) {
		t.Fatalf("doctor with the agent running: exit %d\n%s", code, out)
	}

	// A second agent on the same data refuses to start, plainly.
	out, code2 := runCLI(t, env, "serve", "--listen", "127.0.0.1:0")
	if code2 == 0 || !strings.Contains(out, "ya hay un agente ejecutándose con estos datos") {
		t.Fatalf("second agent: exit %d\n%s", code2, out)
	}
	a.stop(t)

	// The signed CFE passes cfe-agent verify with the profile's (self-signed
	// test) certificate pinned, and fails without: no accredited CA issued
	// it. A tampered copy fails.
	f := filepath.Join(t.TempDir(), "cfe.xml")
	os.WriteFile(f, xml, 0o600)
	if out, code := runCLI(t, env, "verify", "--profile-cert", f); code != 0 || !strings.HasPrefix(out, "OK") || !strings.Contains(out, "certificado aceptado por --profile-cert") {
		t.Fatalf("verify --profile-cert of the signed CFE: exit %d\n%s", code, out)
	}
	if out, code := runCLI(t, env, "verify", f); code != 1 || !strings.Contains(out, "cadena no confiable: el certificado") || !strings.Contains(out, "es autofirmado") {
		t.Fatalf("verify of the sandbox CFE without the profile's certificate: exit %d\n%s", code, out)
	}
	bad := filepath.Join(t.TempDir(), "tampered.xml")
	os.WriteFile(bad, bytes.Replace(xml, []byte("<NomItem>Pan flauta"), []byte("<NomItem>Pan Flauta"), 1), 0o600)
	if out, code := runCLI(t, env, "verify", "--profile-cert", f, bad); code != 1 || !strings.Contains(out, "FAIL "+bad) {
		t.Fatalf("verify of a tampered CFE: exit %d\n%s", code, out)
	}
}

func TestAgent_WrongTimeZoneSignsNothing(t *testing.T) {
	env := append(agentEnv("CFE_AGENT_DATA_DIR="+t.TempDir()), "TZ=UTC")
	a := startAgent(t, env, "--listen", "127.0.0.1:0")
	if code, h := getJSON(t, a.baseURL+"/health"); code != 503 || h["ok"] != false {
		t.Fatalf("/health with TZ=UTC = %d %v", code, h)
	}
	res := signCFE(t, a.baseURL, example(t, "e-ticket.json"))
	if res["codigo_respuesta"] != "96" || !strings.Contains(res["mensaje_respuesta"].(string), "America/Montevideo") {
		t.Fatalf("sign-cfe with TZ=UTC = %v", res)
	}
	_, state := getJSON(t, a.baseURL+"/state")
	if outbox := state["outbox"].(map[string]any); outbox["pending"] != float64(0) {
		t.Fatalf("a rejected request left something to deliver: %v", outbox)
	}
	a.stop(t)
}

func TestAgent_ProfileCommands(t *testing.T) {
	dataDir := t.TempDir()
	env := agentEnv("CFE_AGENT_DATA_DIR="+dataDir, "CFE_AGENT_HOSTED_URL=http://127.0.0.1:18788",
		"CFE_AGENT_HOSTED_API_KEY=xx_test_ClaveSecretaQueNoDebeVerse", "CFE_AGENT_COMPANY_WEB_URL=https://www.otra.com.uy/cfe")
	out, code := runCLI(t, env, "profile", "list")
	if code != 0 || !strings.Contains(out, "* sandbox") || !strings.Contains(out, "219999830019") {
		t.Fatalf("profile list: exit %d\n%s", code, out)
	}
	out, code = runCLI(t, env, "profile", "show")
	if code != 0 || strings.Contains(out, "ClaveSecreta") || !strings.Contains(out, "***") {
		t.Fatalf("profile show leaks or hides nothing: exit %d\n%s", code, out)
	}
	// The footer's data: the default's test values, and an override.
	for _, want := range []string{`fecha_emisor: "2012-10-01"`, "web_url: https://www.otra.com.uy/cfe", "constancia_iva_al_dia: true"} {
		if !strings.Contains(out, want) {
			t.Errorf("profile show lacks %q:\n%s", want, out)
		}
	}
	if out, code = runCLI(t, env, "profile", "use", "otro"); code == 0 || !strings.Contains(out, "otro") {
		t.Fatalf("profile use of a missing profile: exit %d\n%s", code, out)
	}
	out, code = runCLI(t, env, "cae", "list")
	if code != 0 || strings.Count(out, "sandbox") != 42 {
		t.Fatalf("cae list: want the 42 sandbox ranges (21 electronic, 21 contingency), exit %d\n%s", code, out)
	}
	// Migration: the previous billing software used e-Tickets A 1 to 25.
	if out, code = runCLI(t, env, "cae", "used-elsewhere", "101", "A", "25"); code == 0 || !strings.Contains(out, "motivo") {
		t.Fatalf("cae used-elsewhere without a reason: exit %d\n%s", code, out)
	}
	out, code = runCLI(t, env, "cae", "used-elsewhere", "101", "A", "25", "--reason", "sistema anterior")
	if code != 0 || !strings.Contains(out, "el agente sigue desde el 26") {
		t.Fatalf("cae used-elsewhere: exit %d\n%s", code, out)
	}
	out, code = runCLI(t, env, "cae", "list")
	m := regexp.MustCompile(`(?m)^101\s+A\s+1\s+(\d+)\s+(\d+)\s+(\d+)\s`).FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("cae list after used-elsewhere: exit %d\n%s", code, out)
	}
	if hasta, usados, restan := atoi(t, m[1]), atoi(t, m[2]), atoi(t, m[3]); usados != 0 || restan != hasta-25 {
		t.Errorf("e-Ticket A range after 1-25 were used elsewhere: %d used, %d left of %d; want 0 and %d", usados, restan, hasta, hasta-25)
	}
	// DGI's sample CAE belongs to another RUC (and expired in 2018): refused.
	sample := filepath.Join(testtool.SharedDir(t), "dgi", "samples", "CAE_215071660012_90160134272_e-Factura.xml")
	if out, code = runCLI(t, env, "cae", "import", sample); code == 0 || !strings.Contains(out, "215071660012") {
		t.Fatalf("cae import of another company's CAE: exit %d\n%s", code, out)
	}
}

func TestAgent_Doctor(t *testing.T) {
	dataDir := t.TempDir()
	out, code := runCLI(t, agentEnv("CFE_AGENT_DATA_DIR="+dataDir), "doctor")
	for _, want := range []string{"OK   zona horaria: America/Montevideo (-03:00)", "OK   certificado:", "OK   CAE 101:",
		"OK   impresora archivo: guarda los PDF en " + filepath.Join(dataDir, "impresiones"),
		"OK   pie impreso: Fecha emisor 01/10/2012; e-Tickets verificables en https://www.ejemplo.com.uy/comprobantes"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output lacks %q", want)
		}
	}
	if code != 0 {
		t.Errorf("doctor exit %d on a healthy sandbox", code)
	}
	// A CUPS queue is checked on the CUPS server: here none answers on
	// localhost:631, or one answers without that queue.
	cfgFile := filepath.Join(dataDir, "config.yaml")
	yaml, err := os.ReadFile(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	yaml = bytes.Replace(yaml, []byte("    printers:\n"), []byte("    printers:\n      caja:\n        backend: cups\n        queue: Caja_Inexistente\n"), 1)
	// A profile without the footer's data: doctor warns, the footer being
	// incomplete (the e-Tickets point to www.dgi.gub.uy).
	for _, key := range []string{"      fecha_emisor: ", "      web_url: "} {
		if !bytes.Contains(yaml, []byte(key)) {
			t.Fatalf("the default config.yaml has no %q", key)
		}
		yaml = regexp.MustCompile(`(?m)^`+key+`.*\n`).ReplaceAll(yaml, nil)
	}
	if err := os.WriteFile(cfgFile, yaml, 0o600); err != nil {
		t.Fatal(err)
	}
	out, code = runCLI(t, agentEnv("CFE_AGENT_DATA_DIR="+dataDir), "doctor")
	if code != 1 || !regexp.MustCompile(`(?m)^FAIL impresora caja: .*"Caja_Inexistente"`).MatchString(out) ||
		!strings.Contains(out, "OK   impresora archivo:") {
		t.Errorf("doctor with a CUPS queue that is not there: exit %d\n%s", code, out)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`(?m)^WARN pie impreso: el perfil no indica company.fecha_emisor ni company.resolucion`),
		regexp.MustCompile(`(?m)^WARN pie impreso: el perfil no indica company.web_url: los e-Tickets \(101, 102, 103, 131, 132, 133\)`),
	} {
		if !want.MatchString(out) {
			t.Errorf("doctor on a profile without the footer's data lacks %s", want)
		}
	}
	out, code = runCLI(t, append(agentEnv("CFE_AGENT_DATA_DIR="+dataDir), "TZ=UTC"), "doctor")
	if code != 1 || !strings.Contains(out, "FAIL zona horaria:") {
		t.Errorf("doctor with TZ=UTC: exit %d\n%s", code, out)
	}
	if t.Failed() {
		t.Log(out)
	}
}

// TestAgent_PrintsAndRenders: the agent prints what it signed on the default
// profile's directory printer, and render and printers work on their own.
func TestAgent_PrintsAndRenders(t *testing.T) {
	pdftotext := testtool.Require(t, "pdftotext")
	dataDir := t.TempDir()
	env := agentEnv("CFE_AGENT_DATA_DIR=" + dataDir)
	a := startAgent(t, env, "--listen", "127.0.0.1:0")
	res := signCFE(t, a.baseURL, example(t, "e-ticket.json"))
	if res["codigo_respuesta"] != "00" {
		t.Fatalf("sign-cfe = %v", res)
	}
	body, _ := json.Marshal(map[string]any{"uuid": res["uuid"], "impresora": "archivo"})
	resp, err := http.Post(a.baseURL+"/pdf", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/pdf" {
		t.Fatalf("POST /pdf: HTTP %d %s", resp.StatusCode, doc)
	}
	files, _ := filepath.Glob(filepath.Join(dataDir, "impresiones", "*.pdf"))
	if len(files) != 1 {
		t.Fatalf("impresiones holds %v, want the one PDF printed", files)
	}
	if printed, err := os.ReadFile(files[0]); err != nil || !bytes.Equal(printed, doc) {
		t.Fatalf("the file printed is not the PDF answered (%v)", err)
	}
	text, err := exec.Command(pdftotext, "-enc", "UTF-8", files[0], "-").Output()
	if err != nil || !strings.Contains(string(text), "Representacion impresa de prueba sin valor fiscal") ||
		!strings.Contains(string(text), fmt.Sprintf("Serie %s Nº %v", res["serie"], res["numero"])) {
		t.Fatalf("pdftotext of the printed PDF (%v):\n%s", err, text)
	}
	// The default profile's footer data (test values of default.yaml).
	footer := []string{"Fecha emisor: 01/10/2012", "Puede verificar comprobante en www.ejemplo.com.uy/comprobantes", "IVA al día"}
	mustContainAll(t, "the printed e-Ticket", string(text), footer...)
	a.stop(t)

	// render gives the profile's own CFE the same footer, with the
	// constancia turned off by the environment.
	signedXML := filepath.Join(t.TempDir(), "ticket.xml")
	if err := os.WriteFile(signedXML, []byte(res["xml_firmado"].(string)), 0o600); err != nil {
		t.Fatal(err)
	}
	own := filepath.Join(t.TempDir(), "ticket.pdf")
	if msg, code := runCLI(t, append(env, "CFE_AGENT_PRINT_CONSTANCIA_IVA_AL_DIA=false"), "render", "--variant", "Rollo58",
		signedXML, "-o", own); code != 0 || strings.Contains(msg, "RUC") {
		t.Fatalf("render of the agent's e-Ticket: exit %d\n%s", code, msg)
	}
	text, err = exec.Command(pdftotext, "-enc", "UTF-8", own, "-").Output()
	if err != nil {
		t.Fatal(err)
	}
	mustContainAll(t, "the rendered e-Ticket", string(text), footer[:2]...)
	if strings.Contains(string(text), "IVA al día") {
		t.Errorf("render printed the constancia that the profile turned off:\n%s", text)
	}

	// Without the test watermark a print passes for a fiscal document: a
	// sandbox profile cannot render one, and nothing is written.
	noMark := filepath.Join(t.TempDir(), "sin-marca.pdf")
	if msg, code := runCLI(t, env, "render", "--production", signedXML, "-o", noMark); code == 0 ||
		!strings.Contains(msg, "--production solo vale") || !strings.Contains(msg, "entorno sandbox") {
		t.Fatalf("render --production on a sandbox profile: exit %d\n%s", code, msg)
	}
	if _, err := os.Stat(noMark); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("render --production refused but wrote %s (%v)", noMark, err)
	}

	// render reads DGI's own signed sample, with no agent running.
	sample := filepath.Join(testtool.SharedDir(t), "dgi", "samples", "extracted-cfe", "Sob_Ej_Mod_19072016__CFE_111_A1.xml")
	out := filepath.Join(t.TempDir(), "factura.pdf")
	if msg, code := runCLI(t, env, "render", "--variant", "Rollo", sample, "-o", out); code != 0 || !strings.Contains(msg, "Rollo") {
		t.Fatalf("render: exit %d\n%s", code, msg)
	}
	text, err = exec.Command(pdftotext, "-enc", "UTF-8", out, "-").Output()
	if err != nil || !strings.Contains(string(text), "e-Factura") || !strings.Contains(string(text), "Serie A Nº 1") {
		t.Fatalf("pdftotext of the rendered sample (%v):\n%s", err, text)
	}
	// DGI's samples are of its test RUC, the default profile's: they get its
	// footer data. A profile of another company does not lend it its own.
	mustContainAll(t, "the rendered sample", string(text), "Fecha emisor: 01/10/2012",
		"Puede verificar comprobante en www.dgi.gub.uy")
	cfgFile := filepath.Join(dataDir, "config.yaml")
	cfgText, err := os.ReadFile(cfgFile)
	if err != nil {
		t.Fatal(err)
	}
	other := bytes.Replace(cfgText, []byte(`ruc: "219999830019"`), []byte(`ruc: "214844360018"`), 1)
	if bytes.Equal(other, cfgText) {
		t.Fatal("the default config.yaml has no RUC 219999830019")
	}
	if err := os.WriteFile(cfgFile, other, 0o600); err != nil {
		t.Fatal(err)
	}
	msg, code := runCLI(t, env, "render", sample, "-o", out)
	if code != 0 || !strings.Contains(msg, "el RUC emisor 219999830019 no es el del perfil") {
		t.Fatalf("render of another company's CFE: exit %d\n%s", code, msg)
	}
	if text, err = exec.Command(pdftotext, "-enc", "UTF-8", out, "-").Output(); err != nil || strings.Contains(string(text), "Fecha emisor") {
		t.Errorf("another company's CFE printed the profile's Fecha emisor (%v):\n%s", err, text)
	}
	// A production profile renders its company's CFEs without the
	// watermark on request, and still refuses to for another company's.
	prod := bytes.Replace(cfgText, []byte("environment: sandbox"), []byte("environment: produccion"), 1)
	if bytes.Equal(prod, cfgText) {
		t.Fatal("the default config.yaml has no environment: sandbox")
	}
	if err := os.WriteFile(cfgFile, prod, 0o600); err != nil {
		t.Fatal(err)
	}
	if msg, code := runCLI(t, env, "render", "--production", signedXML, "-o", out); code != 0 {
		t.Fatalf("render --production on a production profile: exit %d\n%s", code, msg)
	}
	if text, err = exec.Command(pdftotext, "-enc", "UTF-8", out, "-").Output(); err != nil ||
		strings.Contains(string(text), "sin valor fiscal") || !strings.Contains(string(text), fmt.Sprintf("Serie %s Nº %v", res["serie"], res["numero"])) {
		t.Errorf("render --production on a production profile (%v):\n%s", err, text)
	}
	// DGI's sample has the profile's RUC but DGI's signature, as the
	// company's own test CFEs would have their test certificate's.
	if msg, code := runCLI(t, env, "render", "--production", sample, "-o", noMark); code == 0 ||
		!strings.Contains(msg, "firmados con el certificado del perfil") {
		t.Fatalf("render --production of a CFE signed with another certificate: exit %d\n%s", code, msg)
	}
	if _, err := os.Stat(noMark); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("render --production refused but wrote %s (%v)", noMark, err)
	}
	if err := os.WriteFile(cfgFile, bytes.Replace(prod, []byte(`ruc: "219999830019"`), []byte(`ruc: "214844360018"`), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	if msg, code := runCLI(t, env, "render", "--production", sample, "-o", out); code == 0 ||
		!strings.Contains(msg, "el CFE no es de la empresa del perfil") {
		t.Fatalf("render --production of another company's CFE: exit %d\n%s", code, msg)
	}
	// A file that is no CFE reports why, not a foreign RUC.
	notCFE := filepath.Join(t.TempDir(), "no-cfe.xml")
	if err := os.WriteFile(notCFE, []byte(`<CFE version="1.0" xmlns="http://cfe.dgi.gub.uy"><Otro/></CFE>`), 0o600); err != nil {
		t.Fatal(err)
	}
	if msg, code := runCLI(t, env, "render", "--production", notCFE, "-o", out); code == 0 ||
		strings.Contains(msg, "no es de la empresa") || !strings.Contains(msg, "es obligatorio") {
		t.Fatalf("render --production of a file that is no CFE: exit %d\n%s", code, msg)
	}
	if err := os.WriteFile(cfgFile, cfgText, 0o600); err != nil {
		t.Fatal(err)
	}
	if msg, code := runCLI(t, env, "render", "--variant", "Inexistente", sample, "-o", out); code == 0 ||
		!strings.Contains(msg, "Inexistente") {
		t.Fatalf("render with an unknown template: exit %d\n%s", code, msg)
	}

	msg, code = runCLI(t, env, "printers")
	if code != 0 || !regexp.MustCompile(`archivo\s+dir\s+`+regexp.QuoteMeta(filepath.Join(dataDir, "impresiones"))).MatchString(msg) {
		t.Fatalf("printers: exit %d\n%s", code, msg)
	}
}

// mustContainAll fails for each of want that text lacks; runs of white space
// count as one space, so that text wrapped over lines still matches.
func mustContainAll(t *testing.T, what, text string, want ...string) {
	t.Helper()
	flat := strings.Join(strings.Fields(text), " ")
	for _, w := range want {
		if !strings.Contains(flat, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, text)
		}
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
