package printer

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/internal/testtool/cupsd"
)

// A cupsEnv is a private CUPS server with an emulated IPP Everywhere
// printer and a raw queue (rawQueue) that reaches it: internal/testtool/cupsd
// starts it, and this file keeps the names the printer tests use.
type cupsEnv struct {
	server string // "127.0.0.1:port" of cupsd
	port   int
	ipp    string // the emulated printer's URI
	spool  string // where the emulator keeps the documents it receives
	env    []string
}

// The queues of a cupsEnv: a raw queue hands our PDF to the printer byte
// for byte (so the test can compare it); CUPS filters a driver queue's.
const rawQueue = cupsd.RawQueue

// startCUPS starts the environment (skipped without root or a tool, unless
// CFE_STRICT_TOOLS=1).
func startCUPS(t *testing.T) *cupsEnv {
	t.Helper()
	e := cupsd.Start(t)
	return &cupsEnv{server: e.Server, port: e.Port, ipp: e.IPP, spool: e.Spool, env: e.Vars}
}

// run runs a command with the environment's variables and fails on error.
func (e *cupsEnv) run(t *testing.T, bin string, args ...string) string {
	t.Helper()
	return (&cupsd.Env{Vars: e.env}).Run(t, bin, args...)
}

// ipptool runs ipptool's requests on uri and returns the attributes it
// displays as name → value.
func (e *cupsEnv) ipptool(t *testing.T, uri, test string) map[string]string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "request.test")
	if err := os.WriteFile(f, []byte(test), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(testtool.Require(t, "ipptool"), "-tv", uri, f)
	cmd.Env = e.env
	out, _ := cmd.CombinedOutput()
	attrs := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		// Lines read "        copies (integer) = 2".
		name, value, ok := strings.Cut(strings.TrimSpace(sc.Text()), " = ")
		if !ok {
			continue
		}
		if i := strings.Index(name, " ("); i > 0 {
			attrs[name[:i]] = value
		}
	}
	return attrs
}

func freePort(t *testing.T) int { return cupsd.FreePort(t) }

// waitFor polls cond for up to 15 seconds.
func waitFor(t *testing.T, what string, cond func() bool) { cupsd.WaitFor(t, what, cond) }

func requireTool(t *testing.T, tool string) string { return testtool.Require(t, tool) }
