package main_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// clientEnv is the environment of a client snippet: the test's, without
// proxy settings that would send loopback requests elsewhere.
func clientEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !strings.HasSuffix(strings.ToLower(k), "_proxy") {
			env = append(env, kv)
		}
	}
	return env
}

// runClient runs a client snippet's command in dir and returns its output
// and exit status.
func runClient(t *testing.T, dir string, argv []string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = clientEnv()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%v did not finish within 3 minutes", argv)
	}
	code = cmd.ProcessState.ExitCode()
	if err != nil && code < 0 {
		t.Fatalf("%v: %v", argv, err)
	}
	return out.String(), errOut.String(), code
}

var clientUUIDRE = regexp.MustCompile(`(?m)^uuid ([0-9a-fA-F-]{36})\s*$`)

// TestClients_SignAndPrint runs each client snippet of examples/clients
// against a real agent: it must sign an e-Ticket (codigo_respuesta 00, the
// uuid it reports is in the agent's last receipts, charged 305,00 for
// 2 × 152,50 at shelf prices), print it on the profile's
// folder printer and save the PDF; and it must exit non-zero when the
// printer does not exist.
func TestClients_SignAndPrint(t *testing.T) {
	clients := filepath.Join(testtool.RepoRoot(t), "examples", "clients")
	p := startProc(t, procEnv(t, t.TempDir()), "serve", "--listen", "127.0.0.1:0")

	cases := []struct {
		name  string
		tools []string
		build func(t *testing.T, dir string) []string // the command, after any compile step
	}{
		{"python", []string{"python3"}, func(t *testing.T, _ string) []string {
			return []string{"python3", filepath.Join(clients, "firmar_e_ticket.py")}
		}},
		{"node", []string{"node"}, func(t *testing.T, _ string) []string {
			return []string{"node", filepath.Join(clients, "firmar-e-ticket.mjs")}
		}},
		{"java", []string{"javac", "java"}, func(t *testing.T, dir string) []string {
			out, err := exec.Command("javac", "-Xlint:all", "-Werror", "-d", dir, filepath.Join(clients, "FirmarETicket.java")).CombinedOutput()
			if err != nil {
				t.Fatalf("javac: %v\n%s", err, out)
			}
			return []string{"java", "-cp", dir, "FirmarETicket"}
		}},
		{"php", []string{"php"}, func(t *testing.T, _ string) []string {
			return []string{"php", filepath.Join(clients, "firmar_e_ticket.php")}
		}},
		{"csharp", []string{"mcs", "mono"}, func(t *testing.T, dir string) []string {
			exe := filepath.Join(dir, "FirmarETicket.exe")
			out, err := exec.Command("mcs", "-warnaserror+", "-out:"+exe, filepath.Join(clients, "FirmarETicket.cs")).CombinedOutput()
			if err != nil {
				t.Fatalf("mcs: %v\n%s", err, out)
			}
			return []string{"mono", exe}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, tool := range c.tools {
				testtool.Require(t, tool)
			}
			dir := t.TempDir()
			argv := c.build(t, dir)
			pdf := filepath.Join(dir, "ticket.pdf")
			stdout, stderr, code := runClient(t, dir, append(argv, p.baseURL, pdf, "archivo"))
			if code != 0 || !strings.Contains(stdout, "codigo_respuesta 00") {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			m := clientUUIDRE.FindStringSubmatch(stdout)
			if m == nil {
				t.Fatalf("the snippet did not report the uuid it signed:\n%s", stdout)
			}
			b, err := os.ReadFile(pdf)
			if err != nil || !bytes.HasPrefix(b, []byte("%PDF-")) || !bytes.Contains(b, []byte("%%EOF")) {
				t.Fatalf("%s is not a PDF (%v): %.40q", pdf, err, b)
			}
			st, err := p.client().State(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, r := range st.Receipts.Recent {
				if r.UUID == m[1] && r.TipoCFE == 101 {
					found = true
					// The snippets send shelf prices (montoBruto 1): 2 × 152,50 is 305,00.
					if r.Total.StringFixed(2) != "305.00" {
						t.Errorf("the snippet's e-Ticket totals %s, want 305.00 (2 × 152,50, IVA included)", r.Total.StringFixed(2))
					}
				}
			}
			if !found {
				t.Errorf("the agent's last receipts lack the e-Ticket %s the snippet signed", m[1])
			}

			stdout, stderr, code = runClient(t, dir, append(argv, p.baseURL, filepath.Join(dir, "otro.pdf"), "no-existe"))
			if code == 0 || !strings.Contains(stderr, "no se pudo imprimir") {
				t.Errorf("with an unknown printer: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
			}
			if _, err := os.Stat(filepath.Join(dir, "otro.pdf")); err == nil {
				t.Error("with an unknown printer the snippet still saved a PDF")
			}
		})
	}
}
