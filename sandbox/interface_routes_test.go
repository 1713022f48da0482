package sandbox_test

import (
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// interfaceEndpoint is one row of the interface's endpoint tables.
type interfaceEndpoint struct{ method, path string }

// hostedEndpoints reads the hosted service's endpoints from the interface's
// §4 tables (seed-interface.md), leaving out §4.6, the local module.
func hostedEndpoints(t *testing.T) []interfaceEndpoint {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(testtool.SharedDir(t), "docs", "seed-interface.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`^\| (GET|POST|PUT|PATCH|DELETE) \| (/[^ |]*) \|`)
	var out []interfaceEndpoint
	in := false
	for _, line := range strings.Split(string(raw), "\n") {
		switch {
		case strings.HasPrefix(line, "## 4."):
			in = true
		case strings.HasPrefix(line, "### 4.6"), strings.HasPrefix(line, "## 5."):
			in = false
		}
		if m := row.FindStringSubmatch(line); in && m != nil {
			out = append(out, interfaceEndpoint{m[1], m[2]})
		}
	}
	if len(out) < 30 {
		t.Fatalf("read only %d endpoints from the interface's §4: has its table format changed?", len(out))
	}
	return out
}

// TestRoutes_InterfaceComplete: every endpoint of the interface's §4.1–§4.5
// exists in the sandbox (no "la ruta no existe"), and docs/sandbox.md
// documents each.
func TestRoutes_InterfaceComplete(t *testing.T) {
	t.Parallel()
	e := start(t)
	doc, err := os.ReadFile(filepath.Join(testtool.RepoRoot(t), "docs", "sandbox.md"))
	if err != nil {
		t.Fatal(err)
	}
	placeholder := regexp.MustCompile(`\{[^}]+\}`)
	for _, ep := range hostedEndpoints(t) {
		t.Run(ep.method+" "+ep.path, func(t *testing.T) {
			path := placeholder.ReplaceAllString(ep.path, "1")
			for _, auth := range [][]string{nil, {"X-API-Key", keyAlfa}} {
				r := e.do(ep.method, path, nil, auth...)
				if r.status == http.StatusNotFound && strings.Contains(string(r.body), "la ruta no existe") {
					t.Errorf("%s %s (auth %v) answers %d %s", ep.method, path, auth != nil, r.status, r.body)
				}
			}
			if !strings.Contains(string(doc), ep.method+" "+ep.path) {
				t.Errorf("docs/sandbox.md does not document %s %s", ep.method, ep.path)
			}
		})
	}
}
