package importrules

import (
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

const module = "github.com/cfe-agent/cfe-agent/"

// allowed lists, per package, the project packages it may import directly
// (docs/ARCHITECTURE.md, "Dependency rules"). internal/* helpers that are
// leaves (durable, throttle) are allowed where listed. A package missing
// from the table fails the test: a new package states its place here.
var allowed = map[string][]string{
	// The domain: nothing of the project.
	"cfe":       {},
	"assets":    {},
	"autostart": {},
	"logs":      {},
	"service":   {},
	// The use case over cfe's interfaces.
	"issuer": {"cfe"},
	// Adapters: cfe, leaf helpers and assets only, never each other...
	"signer":   {"cfe"},
	"store":    {"cfe", "internal/durable"},
	"pdf":      {"cfe", "assets"},
	"printer":  {"cfe"},
	"hosted":   {"cfe"},
	"profiles": {"cfe", "internal/durable"},
	"localapi": {"cfe", "issuer", "printing", "health", "localapi/apitype", "assets", "internal/throttle"},
	// The local module's wire types: types only, over cfe.
	"localapi/apitype": {"cfe"},
	// The agent's self-assessment: pure functions from plain facts to the
	// state report's wire types.
	"health": {"cfe", "localapi/apitype"},
	// ...with these documented exceptions:
	// escpos draws the receipt model that pdf owns (pdf.Receipt), by design.
	"escpos": {"cfe", "pdf"},
	// printing, the printing use case, drives the renderers and the spooler.
	"printing": {"cfe", "escpos", "pdf", "printer"},
	// The local module's one client: wire types over HTTP, not the server.
	"localapi/localclient": {"cfe", "localapi/apitype"},
	// tray reads the state report's wire types; the agent implements its
	// Agent in-process.
	"tray": {"cfe", "assets", "localapi/apitype"},
	// sandbox is the hosted service's emulator: a second composition root.
	"sandbox": {"cfe", "issuer", "signer", "store", "pdf", "internal/throttle"},
	// Internal helpers.
	"internal/durable":               {},
	"internal/throttle":              {},
	"internal/powercut":              {},
	"internal/wintest":               {}, // tests only: the Windows build under Wine
	"internal/scalefill":             {"cfe", "issuer", "signer", "store"},
	"cfe/internal/xsdgen":            {"assets", "cfe/internal/xsdname"},
	"cfe/internal/xsdname":           {},
	"cfe/xsdvalid":                   {"cfe", "assets", "cfe/internal/xsdname"},
	"cfe/internal/xsdgen/cmd/xsdgen": {"cfe/internal/xsdgen"},
	// The installers' helper (the icons, and the .deb's unit from service.SystemdUnit) and their tests.
	"packaging": {"assets", "service"},
}

// composition roots import what they wire.
var roots = []string{"cmd/cfe-agent", "cmd/cfe-sandbox", "cmd/cfe-load"}

type listed struct {
	ImportPath string
	Imports    []string
}

// TestImportRules: every project package imports only what the table allows
// (tests and test helpers under internal/testtool are not checked).
func TestImportRules(t *testing.T) {
	t.Parallel()
	testtool.Require(t, "go")
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	seen := 0
	for {
		var p listed
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(p.ImportPath, module)
		if slices.Contains(roots, name) || strings.HasPrefix(name, "internal/testtool") || name == "internal/importrules" {
			continue
		}
		seen++
		ok, known := allowed[name]
		if !known {
			t.Errorf("package %s is not in the dependency table: give it its place in docs/ARCHITECTURE.md and here", name)
			continue
		}
		for _, imp := range p.Imports {
			dep, project := strings.CutPrefix(imp, module)
			if project && !slices.Contains(ok, dep) {
				t.Errorf("%s imports %s, which docs/ARCHITECTURE.md's rules do not allow", name, dep)
			}
		}
	}
	if seen < 15 {
		t.Fatalf("checked only %d packages: has go list's output changed?", seen)
	}
}

// TestImportRules_cfeIsTheDomain: cfe's whole dependency tree holds no
// project package (go list -deps, not only direct imports).
func TestImportRules_cfeIsTheDomain(t *testing.T) {
	t.Parallel()
	testtool.Require(t, "go")
	out, err := exec.Command("go", "list", "-deps", module+"cfe").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, module) && dep != module+"cfe" {
			t.Errorf("cfe depends on %s", dep)
		}
	}
}

// TestImportRules_readersLinkNoServer: the tray and the local module's client
// read the wire types without linking the server or its router (go list
// -deps, so an indirect path fails too).
func TestImportRules_readersLinkNoServer(t *testing.T) {
	t.Parallel()
	testtool.Require(t, "go")
	forbidden := []string{module + "localapi", "github.com/gorilla/mux"}
	for _, pkg := range []string{"tray", "localapi/localclient", "localapi/apitype", "health"} {
		t.Run(pkg, func(t *testing.T) {
			out, err := exec.Command("go", "list", "-deps", module+pkg).Output()
			if err != nil {
				t.Fatalf("go list: %v", err)
			}
			deps := strings.Fields(string(out))
			if !slices.Contains(deps, module+pkg) {
				t.Fatalf("go list -deps %s does not list the package itself: has its output changed?", pkg)
			}
			for _, f := range forbidden {
				if slices.Contains(deps, f) {
					t.Errorf("%s depends on %s", pkg, f)
				}
			}
		})
	}
}
