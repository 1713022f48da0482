package main_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// readmeShellBlocks returns the ```sh blocks of README.md that call the
// local module with curl.
func readmeShellBlocks(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testtool.RepoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	for _, m := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(string(b), -1) {
		if strings.Contains(m[1], "curl ") && strings.Contains(m[1], "http://127.0.0.1:18787/") {
			blocks = append(blocks, m[1])
		}
	}
	return blocks
}

// TestREADME_CurlExamples runs the README's curl lines, as written but for
// the agent's address, against a real agent: the example e-Ticket signs and
// the /pdf example prints that e-Ticket and saves its PDF.
func TestREADME_CurlExamples(t *testing.T) {
	testtool.Require(t, "curl")
	blocks := readmeShellBlocks(t)
	script := strings.Join(blocks, "\n")
	if !strings.Contains(script, "/sign-cfe") || !strings.Contains(script, "/pdf") {
		t.Fatalf("README.md has no curl example of both /sign-cfe and /pdf:\n%s", script)
	}
	p := startProc(t, procEnv(t, t.TempDir()), "serve", "--listen", "127.0.0.1:0")
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "examples"), 0o700); err != nil {
		t.Fatal(err)
	}
	testtool.CopyFile(t, filepath.Join(testtool.RepoRoot(t), "examples", "e-ticket.json"), filepath.Join(dir, "examples", "e-ticket.json"))
	script = strings.ReplaceAll(script, "http://127.0.0.1:18787", p.baseURL)

	stdout, stderr, code := runClient(t, dir, []string{"sh", "-e", "-c", script})
	if code != 0 {
		t.Fatalf("the README's commands failed (exit %d):\n%s\nstdout:\n%s\nstderr:\n%s", code, script, stdout, stderr)
	}
	if !strings.Contains(stdout, `"codigo_respuesta":"00"`) {
		t.Errorf("the signing example did not answer 00:\n%.600s", stdout)
	}
	if !regexp.MustCompile(`(?m)^HTTP/1\.1 200`).MatchString(stdout) || !strings.Contains(stdout, "X-Cfe-Impresora: archivo") {
		t.Errorf("the /pdf example was not printed:\n%.2000s", stdout)
	}
	b, err := os.ReadFile(filepath.Join(dir, "ticket.pdf"))
	if err != nil || !bytes.HasPrefix(b, []byte("%PDF-")) {
		t.Fatalf("ticket.pdf is not a PDF (%v): %.200q", err, b)
	}
	if text := pdfText(t, b); !strings.Contains(text, "e-Ticket") {
		t.Errorf("ticket.pdf does not show an e-Ticket:\n%.500s", text)
	}
}

// pdfText extracts a PDF's text with pdftotext.
func pdfText(t *testing.T, pdf []byte) string {
	t.Helper()
	bin := testtool.Require(t, "pdftotext")
	f := filepath.Join(t.TempDir(), "doc.pdf")
	if err := os.WriteFile(f, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "-layout", f, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	return string(out)
}
