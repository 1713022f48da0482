package wintest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/internal/testtool/wine"
)

// The tests hold the cached Wine prefix one at a time (wine.New waits for
// it), and build what they run before they take it: while one test runs
// Windows programs, the others build. cfe-agent.exe is built once for all
// of them (make windows writes one .syso in the repository: two builds at
// once would write it together) into agentDir, which TestMain removes.
var (
	agentOnce sync.Once
	agentDir  string
	agentExe  string
	agentErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if agentDir != "" {
		os.RemoveAll(agentDir)
	}
	os.Exit(code)
}

// shippedAgent returns cfe-agent.exe as it ships (wine.BuildAgent, version
// wine-test), built by the first caller.
func shippedAgent(t *testing.T) string {
	t.Helper()
	testtool.Require(t, "make")
	root := testtool.RepoRoot(t)
	agentOnce.Do(func() {
		if agentDir, agentErr = os.MkdirTemp("", "cfe-wintest-agent-"); agentErr == nil {
			agentExe, agentErr = wine.BuildAgentIn(agentDir, root, "wine-test")
		}
	})
	if agentErr != nil {
		t.Fatal(agentErr)
	}
	return agentExe
}

// commandTime bounds a one-shot Windows command of the tests (render,
// taskkill, wineboot -e): Wine may hang where Windows would not.
const commandTime = 2 * time.Minute

// pipesAfterExit is how long an agent's output is still read after the
// agent ended (see start).
const pipesAfterExit = 5 * time.Second

// within returns a context that ends after d, or with the test.
func within(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

// httpClient is the tests' client of the agents' modules: an agent that
// stops answering fails the request after a minute instead of hanging it.
var httpClient = &http.Client{Timeout: time.Minute}

// listeningRE is the agent's log line once its module listens.
var listeningRE = regexp.MustCompile(`msg="cfe-agent listening" base_url=(\S+)`)

// agent is a running cfe-agent, Windows (under Wine) or Linux.
type agent struct {
	t       *testing.T
	cmd     *exec.Cmd
	log     *testtool.SyncBuffer
	done    chan struct{}
	baseURL string
}

// start runs cmd and waits until the agent listens.
func start(t *testing.T, cmd *exec.Cmd) *agent {
	t.Helper()
	a := &agent{t: t, cmd: cmd, log: &testtool.SyncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = a.log, a.log
	// The session's desktop process (explorer.exe /desktop), which Wine
	// starts with the first GUI program, inherits that program's output and
	// keeps it open after the program ends: Wait stops copying it once the
	// agent has been gone for pipesAfterExit, or it would wait for the
	// session's end.
	cmd.WaitDelay = pipesAfterExit
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = cmd.Wait()
		close(a.done)
	}()
	t.Cleanup(func() {
		select {
		case <-a.done:
		default:
			_ = cmd.Process.Kill()
			<-a.done
		}
		if t.Failed() {
			t.Logf("agent output:\n%s", a.log.String())
		}
	})
	deadline := time.After(60 * time.Second)
	for {
		if m := listeningRE.FindStringSubmatch(a.log.String()); m != nil {
			a.baseURL = m[1]
			return a
		}
		select {
		case <-a.done:
			t.Fatalf("the agent exited before listening (%v):\n%s", cmd.ProcessState, a.log.String())
		case <-deadline:
			t.Fatalf("the agent did not listen within 60 s:\n%s", a.log.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// exited reports whether the process has ended within d.
func (a *agent) exited(d time.Duration) bool {
	select {
	case <-a.done:
		return true
	case <-time.After(d):
		return false
	}
}

// call sends a request to the agent's module and decodes the JSON answer.
func (a *agent) call(method, path string, body []byte, out any) int {
	a.t.Helper()
	req, err := http.NewRequest(method, a.baseURL+path, bytes.NewReader(body))
	if err != nil {
		a.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := httpClient.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		a.t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		a.t.Fatalf("%s %s answered %d, not JSON: %v\n%s", method, path, resp.StatusCode, err, b)
	}
	return resp.StatusCode
}

// signResult is the part of a /sign-cfe answer the test checks.
type signResult struct {
	Codigo    string `json:"codigo_respuesta"`
	Mensaje   string `json:"mensaje_respuesta"`
	Serie     string `json:"serie"`
	Numero    int64  `json:"numero"`
	TmstFirma string `json:"tmst_firma"`
	XML       string `json:"xml_firmado"`
}

// sign posts examples/e-ticket.json under uuid.
func (a *agent) sign(uuid string) signResult {
	a.t.Helper()
	body, err := os.ReadFile(filepath.Join(testtool.RepoRoot(a.t), "examples", "e-ticket.json"))
	if err != nil {
		a.t.Fatal(err)
	}
	body = regexp.MustCompile(`"uuid": "[^"]+"`).ReplaceAll(body, []byte(`"uuid": "`+uuid+`"`))
	var res signResult
	a.call(http.MethodPost, "/sign-cfe", body, &res)
	return res
}

// health is the part of GET /health the test checks.
type health struct {
	OK      bool   `json:"ok"`
	Version string `json:"version"`
	Zona    struct {
		OK      bool   `json:"ok"`
		Nombre  string `json:"nombre"`
		Desfase string `json:"desfase"`
	} `json:"zona_horaria"`
}

// pdfText is pdftotext's text of a PDF file.
func pdfText(t *testing.T, path string) string {
	t.Helper()
	bin := testtool.Require(t, "pdftotext")
	out, err := exec.Command(bin, "-enc", "UTF-8", path, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext %s: %v", path, err)
	}
	return string(out)
}

// TestWine_Agent runs the shipped form of cfe-agent.exe (make windows) under
// Wine: serve with a Windows data directory, sign, render, stop it the
// Windows way (taskkill without /f, the end of the session) and see it close
// cleanly; then the Linux build reopens the same data directory with nothing
// lost.
func TestWine_Agent(t *testing.T) {
	t.Parallel()
	wine.Available(t)
	testtool.Require(t, "xmlsec1")
	testtool.Require(t, "xmllint")
	testtool.Require(t, "pdftotext")
	exe := shippedAgent(t) // make windows: the shipped link flags and resources
	linuxBin := filepath.Join(t.TempDir(), "cfe-agent")
	build := exec.Command("go", "build", "-o", linuxBin, "./cmd/cfe-agent")
	build.Dir = testtool.RepoRoot(t)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	prefix := wine.New(t)
	dataDir := t.TempDir()
	winData := prefix.WindowsPath(dataDir)
	// Wine hands the Linux environment to the Windows program: TZ sets both
	// Wine's clock zone and the agent's (machinezone.Read reads TZ first).
	// Wine's registry zone for -03:00 is "Argentina Standard Time" (its first
	// match), which the agent would refuse; TZ is what a test can set.
	montevideo := "TZ=America/Montevideo"
	// The numbering witness's default folder, %LOCALAPPDATA%\cfe-agent\witness,
	// is in the cached prefix: the agents on this test's data directory get
	// a folder of their own, and the default one is emptied before and after
	// (the agent without --data-dir and the service use it).
	own := "CFE_AGENT_WITNESS_DIR=" + prefix.WindowsPath(t.TempDir())
	defaultWitness := emptyDefaultWitness(t, prefix)

	const uuid = "6f1c2a8e-3b7d-4e2a-9c51-8d0e4f7a2b19"
	var first signResult
	t.Run("serve signs an e-Ticket with a Windows data directory", func(t *testing.T) {
		cmd := prefix.Command(context.Background(), exe, "--data-dir", winData, "serve", "--listen", "127.0.0.1:0")
		cmd.Env = prefix.Env(montevideo, own)
		a := start(t, cmd)
		var h health
		if code := a.call(http.MethodGet, "/health", nil, &h); code != http.StatusOK || !h.OK {
			t.Fatalf("/health answered %d %+v", code, h)
		}
		if h.Version != "wine-test" || !h.Zona.OK || h.Zona.Desfase != "-03:00" {
			t.Fatalf("/health of the Windows build: %+v, want version wine-test and zone -03:00", h)
		}
		first = a.sign(uuid)
		if first.Codigo != "00" || first.Numero < 1 || !strings.HasSuffix(first.TmstFirma, "-03:00") {
			t.Fatalf("sign-cfe: %+v", first)
		}
		if !strings.Contains(a.log.String(), `file=`+winData+`\certs\`) {
			t.Errorf("the agent did not write its certificate under the Windows data directory %s:\n%s", winData, a.log.String())
		}
		if _, err := os.Stat(filepath.Join(dataDir, "config.yaml")); err != nil {
			t.Errorf("no config.yaml in the data directory given as %s: %v", winData, err)
		}

		xml := []byte(first.XML)
		if out, ok := testtool.XMLSecVerify(t, xml, ""); !ok {
			t.Errorf("xmlsec1 --verify rejects the XML signed under Wine:\n%s", out)
		}
		testtool.MustValidateXSD(t, testtool.XSD(t, "CFEDGI.xsd"), xml)

		// The PDF is rendered by the Windows executable, from files named
		// with Windows paths, while the agent runs.
		xmlFile := filepath.Join(t.TempDir(), "ticket.xml")
		if err := os.WriteFile(xmlFile, xml, 0o600); err != nil {
			t.Fatal(err)
		}
		pdfFile := filepath.Join(filepath.Dir(xmlFile), "ticket.pdf")
		render := prefix.Command(within(t, commandTime), exe, "--data-dir", winData,
			"render", prefix.WindowsPath(xmlFile), "-o", prefix.WindowsPath(pdfFile))
		render.Env = prefix.Env(montevideo, own)
		if out, err := render.CombinedOutput(); err != nil {
			t.Fatalf("cfe-agent.exe render (given %s): %v\n%s", commandTime, err, out)
		}
		testtool.MustContain(t, "the PDF rendered by cfe-agent.exe", pdfText(t, pdfFile),
			fmt.Sprintf("Serie %s Nº %d", first.Serie, first.Numero),
			"Representacion impresa de prueba sin valor fiscal")

		// taskkill without /f posts WM_CLOSE to the agent's hidden stop
		// window (internal/winstop), as an installer or
		// Task Manager's "End task" would.
		runFile := filepath.Join(dataDir, "run", "sandbox.json")
		taskkill := prefix.Command(within(t, commandTime), "taskkill", "/pid", strconv.Itoa(windowsPID(t, runFile)))
		a.stopGracefully(taskkill, runFile, "WM_CLOSE")
	})
	if first.Codigo != "00" {
		t.FailNow()
	}

	t.Run("the Linux build reopens the data directory with nothing lost", func(t *testing.T) {
		cmd := exec.Command(linuxBin, "--data-dir", dataDir, "serve", "--listen", "127.0.0.1:0")
		cmd.Env = append(cleanEnv(), montevideo, "HOME="+t.TempDir())
		a := start(t, cmd)
		var h health
		if code := a.call(http.MethodGet, "/health", nil, &h); code != http.StatusOK || !h.OK {
			t.Fatalf("/health after the Windows agent stopped: %d %+v", code, h)
		}
		again := a.sign(uuid)
		if again.Codigo != "00" || again.Numero != first.Numero || again.XML != first.XML {
			t.Errorf("the uuid signed under Wine, asked again on Linux: %s %s-%d (want the same CFE %s-%d)",
				again.Codigo, again.Serie, again.Numero, first.Serie, first.Numero)
		}
		next := a.sign("0d9e4b7c-5a21-4f3e-8b6d-2c7a9e1f4d03")
		if next.Codigo != "00" || next.Serie != first.Serie || next.Numero != first.Numero+1 {
			t.Errorf("a new sale after the reopen: %s %s-%d, want %s-%d", next.Codigo, next.Serie, next.Numero, first.Serie, first.Numero+1)
		}
		if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if !a.exited(20*time.Second) || a.cmd.ProcessState.ExitCode() != 0 {
			t.Fatalf("the Linux agent did not stop cleanly on SIGTERM (%v)", a.cmd.ProcessState)
		}
	})

	t.Run("without --data-dir the data directory is %APPDATA%\\cfe-agent", func(t *testing.T) {
		dir := filepath.Join(prefix.AppData(), "cfe-agent")
		// The prefix is cached between runs: start and end without it.
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.RemoveAll(dir) })
		cmd := prefix.Command(context.Background(), exe, "serve", "--listen", "127.0.0.1:0")
		cmd.Env = prefix.Env(montevideo)
		a := start(t, cmd)
		var h health
		if code := a.call(http.MethodGet, "/health", nil, &h); code != http.StatusOK || !h.OK {
			t.Fatalf("/health: %d %+v", code, h)
		}
		if _, err := os.Stat(filepath.Join(dir, "config.yaml")); err != nil {
			t.Errorf("the agent started without --data-dir wrote no config.yaml in %%APPDATA%%\\cfe-agent (%s): %v", dir, err)
		}
		if !regexp.MustCompile(`file=C:\\users\\[^\\]+\\AppData\\Roaming\\cfe-agent\\certs\\`).MatchString(a.log.String()) {
			t.Errorf("the agent's log names no certificate under C:\\users\\…\\AppData\\Roaming\\cfe-agent:\n%s", a.log.String())
		}
		// The end of the session (log-off, shutdown): wineboot -e sends
		// WM_QUERYENDSESSION and WM_ENDSESSION to every top-level window.
		endSession := prefix.Command(within(t, commandTime), "wineboot", "-e")
		a.stopGracefully(endSession, filepath.Join(dir, "run", "sandbox.json"), "Windows is ending the session")
		// Its numbering witness is in %LOCALAPPDATA%, outside the roaming
		// data directory.
		if _, err := os.Stat(filepath.Join(defaultWitness, "sandbox", "219999830019", "sandbox.json")); err != nil {
			t.Errorf("the agent wrote no numbering witness in %%LOCALAPPDATA%%\\cfe-agent\\witness: %v", err)
		}
	})

	t.Run("a machine zone other than Montevideo answers 96", func(t *testing.T) {
		cmd := prefix.Command(context.Background(), exe, "--data-dir", winData, "serve", "--listen", "127.0.0.1:0")
		cmd.Env = prefix.Env("TZ=UTC", own)
		a := start(t, cmd)
		res := a.sign("3a5c7e9b-1d2f-4a6b-8c0d-e1f2a3b4c5d6")
		if res.Codigo != "96" || res.Numero != 0 {
			t.Errorf("signing with the zone UTC under Wine: %s %s-%d %q, want 96 and no number", res.Codigo, res.Serie, res.Numero, res.Mensaje)
		}
		runFile := filepath.Join(dataDir, "run", "sandbox.json")
		taskkill := prefix.Command(within(t, commandTime), "taskkill", "/pid", strconv.Itoa(windowsPID(t, runFile)))
		a.stopGracefully(taskkill, runFile, "WM_CLOSE")
	})

	t.Run("as a service it is Running only once its module answers", func(t *testing.T) {
		addr := listenOnFreePort(t, dataDir)
		keepSession(t, prefix)
		service := serviceCommand(t, prefix, exe, winData)
		// The prefix is cached: a service left by an interrupted run
		// would start with every Wine session.
		_, _ = service("uninstall")
		t.Cleanup(func() { _, _ = service("uninstall") })
		if out, err := service("install"); err != nil {
			t.Fatalf("service install: %v\n%s", err, out)
		}
		// install starts the service; start waits until the manager says
		// Running, which the agent reports once Main.Open has returned.
		if out, err := service("start"); err != nil {
			t.Fatalf("service start: %v\n%s", err, out)
		}
		resp, err := httpClient.Get("http://" + addr + "/health")
		if err != nil {
			logs, _ := filepath.Glob(filepath.Join(dataDir, "logs", "*"))
			var tail []byte
			for _, f := range logs {
				b, _ := os.ReadFile(f)
				tail = append(tail, b...)
			}
			if len(tail) > 3000 {
				tail = tail[len(tail)-3000:]
			}
			t.Fatalf("the service is Running but its module does not answer: %v\nthe agent's log ends:\n%s", err, tail)
		}
		var h health
		err = json.NewDecoder(resp.Body).Decode(&h)
		resp.Body.Close()
		if err != nil || h.Version != "wine-test" {
			t.Errorf("/health of the service: %+v, %v", h, err)
		}
		if out, err := service("stop"); err != nil {
			t.Fatalf("service stop: %v\n%s", err, out)
		}
		if _, err := os.Stat(filepath.Join(dataDir, "run", "sandbox.json")); err == nil {
			t.Error("the stopped service left its run file")
		}
		if out, err := service("uninstall"); err != nil {
			t.Fatalf("service uninstall: %v\n%s", err, out)
		}
	})
}

// emptyDefaultWitness removes the default numbering witness folder of the
// cached prefix's user (%LOCALAPPDATA%\cfe-agent\witness) now and when the
// test ends, and returns its Linux path: agents of earlier runs must not
// compare this run's data directories with their numbers.
func emptyDefaultWitness(t *testing.T, prefix *wine.Prefix) string {
	t.Helper()
	dir := filepath.Join(prefix.LocalAppData(), "cfe-agent", "witness")
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// keepSession keeps the prefix's Wine session up until the test ends: a
// console waiting for a key. Wine ends the service processes once no other
// Windows program runs in the prefix (each service command exits at once),
// and the next Windows program then starts a new session, which starts every
// installed automatic service.
func keepSession(t *testing.T, prefix *wine.Prefix) {
	t.Helper()
	keep := prefix.Command(context.Background(), "cmd", "/c", "pause")
	hold, err := keep.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := keep.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		hold.Close()
		ended := make(chan struct{})
		go func() { _ = keep.Wait(); close(ended) }()
		select {
		case <-ended:
		case <-time.After(commandTime):
			t.Errorf("cmd /c pause did not end within %s of its input's end: killed", commandTime)
			_ = keep.Process.Kill()
			<-ended
		}
	})
}

// listenOnFreePort moves the listen address of dataDir's config.yaml from
// the profile's fixed port (18787, which may be taken on a CI machine) to a
// free one, and returns it: a service started on dataDir listens there.
func listenOnFreePort(t *testing.T, dataDir string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cfgPath := filepath.Join(dataDir, "config.yaml")
	cfg, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	moved := strings.Replace(string(cfg), "listen: 127.0.0.1:18787", "listen: "+addr, 1)
	if moved == string(cfg) {
		t.Fatalf("config.yaml has no listen: 127.0.0.1:18787 to move:\n%s", cfg)
	}
	if err := os.WriteFile(cfgPath, []byte(moved), 0o600); err != nil {
		t.Fatal(err)
	}
	return addr
}

// windowsPID is the process id the agent wrote in its run file: under Wine
// the Windows one, which differs from the Linux process's.
func windowsPID(t *testing.T, runFile string) int {
	t.Helper()
	b, err := os.ReadFile(runFile)
	if err != nil {
		t.Fatalf("the agent's run file: %v", err)
	}
	var info struct {
		PID int `json:"pid"`
	}
	if err := json.Unmarshal(b, &info); err != nil || info.PID <= 0 {
		t.Fatalf("the agent's run file %s names no pid (%v): %s", runFile, err, b)
	}
	return info.PID
}

// stopGracefully runs stop, a Windows way of asking the agent under Wine to
// end (never a forced kill), and checks the clean stop: the agent logs
// "shutting down" with a reason containing reason, removes its run file and
// exits 0.
func (a *agent) stopGracefully(stop *exec.Cmd, runFile, reason string) {
	t := a.t
	t.Helper()
	out, err := stop.CombinedOutput()
	if err != nil {
		t.Fatalf("%s (given %s): %v\n%s", strings.Join(stop.Args[1:], " "), commandTime, err, out)
	}
	if !a.exited(30 * time.Second) {
		t.Fatalf("the agent did not stop within 30 s of %s (%s)", strings.Join(stop.Args[1:], " "), strings.TrimSpace(string(out)))
	}
	if code := a.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("the agent stopped by %s exited %d, want 0", strings.Join(stop.Args[1:], " "), code)
	}
	if _, err := os.Stat(runFile); err == nil {
		t.Errorf("the agent stopped by %s left its run file", strings.Join(stop.Args[1:], " "))
	}
	if !regexp.MustCompile(`msg="shutting down" reason="[^"]*` + regexp.QuoteMeta(reason)).MatchString(a.log.String()) {
		t.Errorf("the agent stopped by %s did not log \"shutting down\" for %q:\n%s", strings.Join(stop.Args[1:], " "), reason, a.log.String())
	}
}

// cleanEnv is the test's environment without the agent's settings, which the
// developer's shell may hold.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CFE_AGENT_") && !strings.HasPrefix(kv, "TZ=") {
			env = append(env, kv)
		}
	}
	return env
}

// serviceCommand returns a function that runs `cfe-agent.exe --data-dir
// winData service ARGS...` in prefix, with a Montevideo zone and a minute's
// limit, and returns its output. The output goes to a file, not a pipe:
// Wine's system processes (services.exe), started by the first of these
// commands, inherit its handles and would hold a pipe open for the session.
func serviceCommand(t *testing.T, prefix *wine.Prefix, exe, winData string) func(args ...string) (string, error) {
	outFile := filepath.Join(t.TempDir(), "service.out")
	return func(args ...string) (string, error) {
		f, err := os.Create(outFile)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := prefix.Command(ctx, exe, append([]string{"--data-dir", winData, "service"}, args...)...)
		cmd.Env = prefix.Env("TZ=America/Montevideo")
		cmd.Stdout, cmd.Stderr = f, f
		err = cmd.Run()
		out, _ := os.ReadFile(outFile)
		return string(out), err
	}
}
