package main_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
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
	examples, err := filepath.Glob(filepath.Join(testtool.RepoRoot(t), "examples", "*.json"))
	if err != nil || len(examples) == 0 {
		t.Fatalf("no examples (%v)", err)
	}
	for _, f := range examples {
		testtool.CopyFile(t, f, filepath.Join(dir, "examples", filepath.Base(f)))
	}
	script = strings.ReplaceAll(script, "http://127.0.0.1:18787", p.baseURL)

	stdout, stderr, code := runClient(t, dir, []string{"sh", "-e", "-c", script})
	if code != 0 {
		t.Fatalf("the README's commands failed (exit %d):\n%s\nstdout:\n%s\nstderr:\n%s", code, script, stdout, stderr)
	}
	if !strings.Contains(stdout, `"codigo_respuesta":"00"`) {
		t.Errorf("the signing example did not answer 00:\n%.600s", stdout)
	}
	// The Quick start's claims: the example is at shelf prices, 2 × 152,50
	// charged 305,00, and the same request again returns the same answer.
	first := regexp.MustCompile(`(?m)^\{.*"codigo_respuesta":"00".*\}$`).FindString(stdout)
	var signed apitype.SignResponse
	if err := json.Unmarshal([]byte(first), &signed); err != nil {
		t.Fatalf("the signing example's answer is not one JSON line (%v):\n%.600s", err, stdout)
	}
	if !strings.Contains(signed.DatosQR, ",305.00,") || signed.MensajeRespuesta != "e-Ticket A-1 firmado" {
		t.Errorf("the README's example is not the e-Ticket of 305,00 it describes: %q, QR %s", signed.MensajeRespuesta, signed.DatosQR)
	}
	again, err := p.client().SignCFE(context.Background(), example(t, "e-ticket-precios-con-iva.json"))
	if err != nil || again.Numero != signed.Numero || again.XMLFirmado != signed.XMLFirmado {
		t.Errorf("the same uuid again did not return the same answer: number %d, want %d (%v)", again.Numero, signed.Numero, err)
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

// readme returns README.md.
func readme(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testtool.RepoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestREADME_TopCommands: the README opens with its two commands, before
// any section — the agent on its embedded default and the tests as CI runs
// them — and its test command is what CI runs: .ci/run installs packages and
// then runs "make ci" and nothing else, and make ci's recipe holds every step
// CI runs (vet, lint, cross-builds, packages, fuzz, make test) with missing
// tools failing. The quick start comes before the shop install, the Go
// version is go.mod's, and the README stays short (details in docs/).
func TestREADME_TopCommands(t *testing.T) {
	t.Parallel()
	text := readme(t)
	root := testtool.RepoRoot(t)
	firstSection := strings.Index(text, "\n## ")
	block := regexp.MustCompile("(?s)```sh\n(.*?)```").FindStringSubmatchIndex(text)
	if block == nil || block[0] > firstSection {
		t.Fatal("the README does not open with a sh block of commands before its first section")
	}
	var cmds []string
	for _, line := range strings.Split(text[block[2]:block[3]], "\n") {
		if cmd, _, _ := strings.Cut(line, "#"); strings.TrimSpace(cmd) != "" {
			cmds = append(cmds, strings.TrimSpace(cmd))
		}
	}
	if len(cmds) != 2 || !strings.HasSuffix(cmds[0], "go run ./cmd/cfe-agent") || cmds[1] != "make ci" {
		t.Errorf("the README's first commands are %q, want the agent (go run ./cmd/cfe-agent) and make ci", cmds)
	}

	// .ci/run: the packages, then make ci and nothing else.
	ci, err := os.ReadFile(filepath.Join(root, ".ci", "run"))
	if err != nil {
		t.Fatal(err)
	}
	// The install command ends on the line that sends its output to
	// /dev/null; what follows must be make ci alone (PATH and
	// CFE_STRICT_TOOLS=1 aside).
	install := strings.Index(string(ci), "apt-get install")
	end := strings.Index(string(ci)[max(install, 0):], ">/dev/null\n")
	if install < 0 || end < 0 {
		t.Fatal(".ci/run installs no packages")
	}
	var after []string
	for _, line := range strings.Split(string(ci)[install+end+len(">/dev/null\n"):], "\n") {
		line = strings.TrimSpace(line)
		if line != "" && !strings.HasPrefix(line, "#") && !strings.HasPrefix(line, "export PATH=") && line != "export CFE_STRICT_TOOLS=1" {
			after = append(after, line)
		}
	}
	if len(after) != 1 || after[0] != "make ci" {
		t.Errorf(".ci/run runs %q after its packages, want make ci alone", after)
	}

	// make ci's recipe, as make would run it.
	out, err := exec.Command(testtool.Require(t, "make"), "-C", root, "-n", "ci").CombinedOutput()
	if err != nil {
		t.Fatalf("make -n ci: %v\n%s", err, out)
	}
	recipe := string(out)
	at := 0
	for _, step := range []string{"go vet ./...", "golangci-lint run ./...", "GOOS=$os GOARCH=$arch", "scripts/dist.sh",
		"scripts/fuzz.sh 8", "go test -race -count=1 ./..."} {
		i := strings.Index(recipe[at:], step)
		if i < 0 {
			t.Fatalf("make ci does not run %q (in CI's order):\n%s", step, recipe)
		}
		at += i + len(step)
	}
	mk, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mk), "ci: export CFE_STRICT_TOOLS := 1") {
		t.Error("make ci does not make missing test tools fail (CFE_STRICT_TOOLS=1)")
	}

	if q, inst := strings.Index(text, "\n## Quick start"), strings.Index(text, "\n## Installing in a shop"); q < 0 || inst < 0 || q > inst {
		t.Errorf("the quick start (at %d) does not come before the shop install (at %d)", q, inst)
	}
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goVersion := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(mod)
	if goVersion == nil {
		t.Fatal("go.mod has no go directive")
	}
	for _, m := range regexp.MustCompile(`Go (\d+\.\d+(?:\.\d+)?)`).FindAllStringSubmatch(text, -1) {
		if m[1] != string(goVersion[1]) {
			t.Errorf("the README says Go %s, go.mod says go %s", m[1], goVersion[1])
		}
	}
	if !strings.Contains(text, "Go "+string(goVersion[1])) {
		t.Errorf("the README does not name go.mod's Go version %s", goVersion[1])
	}
	if n := strings.Count(text, "\n"); n > 200 {
		t.Errorf("the README is %d lines: keep it under 200 (details go to docs/)", n)
	}
}

// TestREADME_PrintersExample: the GET /printers example of the docs shows
// the profile a fresh agent reports, the embedded default's (sandbox).
func TestREADME_PrintersExample(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(testtool.RepoRoot(t), "docs", "local-api.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?s)## .GET /printers.*?"ok": true, "profile": "([^"]+)"`).FindSubmatch(b)
	if m == nil {
		t.Fatal("docs/local-api.md has no GET /printers example")
	}
	p := startProc(t, procEnv(t, t.TempDir()), "serve", "--listen", "127.0.0.1:0")
	var got struct {
		Profile string `json:"profile"`
	}
	resp, err := http.Get(p.baseURL + "/printers")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if string(m[1]) != got.Profile {
		t.Errorf("the /printers example shows the profile %q, a fresh agent reports %q", m[1], got.Profile)
	}
}
