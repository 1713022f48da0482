package importrules

import (
	"encoding/json"
	"errors"
	"io"
	"os"
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
	"signer":  {"cfe"},
	"store":   {"cfe", "durable"},
	"pdf":     {"cfe", "assets"},
	"printer": {"cfe"},
	"hosted":  {"cfe", "internal/httpcode"},
	// The DGI client checks DGI's answers against DGI's XSDs (the ACKs) with
	// the project's validator over the embedded schemas, and reads the
	// company's credentials and DGI's signature profile from signer.
	"dgi": {"cfe", "signer", "cfe/xsdvalid", "assets"},
	// Direct mode's sender, a use case like hosted's deliverer: it drives
	// the DGI client (its port DGI) over the store (its port Store), and
	// checks envelopes with signer before it records them.
	"dgisend":  {"cfe", "dgi", "signer"},
	"profiles": {"cfe", "durable"},
	"localapi": {"cfe", "issuer", "printing", "localapi/apitype", "assets", "internal/throttle", "internal/httpcode"},
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
	// verifier, the verification use case (cfe-agent verify), checks any
	// issuer's signed files with the signer, DGI's schemas (cfe/xsdvalid)
	// and the accredited CAs the binary carries (assets); it needs no agent.
	"verifier": {"cfe", "cfe/xsdvalid", "signer", "assets"},
	// profile add's use case checks the answers with the signer (certificate,
	// CAE files) and the spooler (the machine's printers) and writes the
	// profile through profiles.
	"internal/profilesetup": {"cfe", "printer", "profiles", "signer"},
	// The local module's one client: wire types over HTTP, not the server.
	"localapi/localclient": {"cfe", "localapi/apitype", "internal/httpcode"},
	// tray reads the state report's wire types; the agent implements its
	// Agent in-process.
	"tray": {"cfe", "assets", "localapi/apitype"},
	// sandbox is the hosted service's emulator: a second composition root,
	// which wires its rooms (docs/sandbox.md, "Rooms"). The rooms import
	// downward only, never the root: data and web at the bottom (the shared
	// records and the HTTP conventions), auth above them, issuing above auth
	// (it composes issuer, signer, store and pdf), and reports, mail and dgi
	// above issuing, each reaching another room's parts through interfaces
	// of its own that the root fills; account needs only web. auth is the
	// emulator's one user of internal/throttle. As the provider, the root
	// runs DGI's emulator in-process (sandbox/dgi/emulator) and makes each
	// company's DGI client (dgi, with the company's credentials: signer);
	// the dgi room sends with the agent's own sender (dgisend) over its
	// records.
	"sandbox":         {"cfe", "dgi", "dgisend", "signer", "sandbox/account", "sandbox/auth", "sandbox/data", "sandbox/dgi", "sandbox/dgi/emulator", "sandbox/issuing", "sandbox/mail", "sandbox/reports", "sandbox/web"},
	"sandbox/data":    {"cfe"},
	"sandbox/web":     {"cfe", "internal/httpcode"},
	"sandbox/auth":    {"cfe", "sandbox/data", "sandbox/web", "internal/throttle"},
	"sandbox/issuing": {"cfe", "issuer", "signer", "store", "pdf", "sandbox/auth", "sandbox/data", "sandbox/web"},
	"sandbox/reports": {"cfe", "sandbox/auth", "sandbox/data", "sandbox/issuing", "sandbox/web"},
	"sandbox/mail":    {"cfe", "sandbox/auth", "sandbox/data", "sandbox/web"},
	"sandbox/dgi":     {"cfe", "signer", "dgi", "dgisend", "sandbox/auth", "sandbox/data", "sandbox/issuing", "sandbox/web"},
	"sandbox/account": {"cfe", "sandbox/web"},
	// DGI's own services, emulated (cfe-sandbox dgi): the other side of the
	// DGI client's wire format, DGI's checks of envelopes and CFEs over cfe,
	// signer and DGI's schemas; no record shared with the other rooms.
	"sandbox/dgi/emulator": {"cfe", "signer", "dgi", "cfe/xsdvalid", "assets"},
	// Internal helpers.
	"durable": {},
	// httpcode is the HTTP edge of cfe's codes (code → status for servers,
	// status → code for clients): cfe itself imports no net/http.
	"internal/httpcode": {"cfe"},
	// The OS side of the issuer's zone check: it fills issuer.ZoneStatus
	// (the port the issuer declares) from TZ, /etc/localtime or the
	// registry; the issuer itself reads nothing of the OS.
	"internal/machinezone": {"issuer"},
	// The agent's OS plumbing, which cmd/cfe-agent calls: one agent per data
	// directory (the lock, the holder's process id, what a second start does;
	// its errors are cfe.Errors); Windows' stop messages as the run context's
	// cancellation (the service, service.IsService, is stopped by its manager
	// instead); the Windows agent's standard handles; the garbage-collector
	// settings of a signing process (which the issue path's benchmarks apply
	// too).
	"internal/instance":              {"cfe"},
	"internal/winstop":               {"service"},
	"internal/console":               {},
	"internal/gctune":                {},
	"internal/throttle":              {},
	"internal/powercut":              {},
	"internal/wintest":               {}, // tests only: the Windows build under Wine
	"internal/scalefill":             {"cfe", "issuer", "signer", "store"},
	"cfe/internal/xsdgen":            {"assets", "cfe/internal/xsdname"},
	"cfe/internal/xsdname":           {},
	"cfe/xsdvalid":                   {"cfe", "assets", "cfe/internal/xsdname"},
	"cfe/internal/xsdgen/cmd/xsdgen": {"cfe/internal/xsdgen"},
	// The application: the agent's composition and its use cases, between
	// the command line (cmd/cfe-agent, the only package that imports it)
	// and the domain and adapters below it. It implements the ports the
	// driving adapters declare (localapi's interfaces, tray.Agent: tray for
	// its Settings type) and never imports the HTTP server, whose module cmd
	// builds for it (TestImportRules_appLinksNoServer).
	// Its use cases of the technician's commands (doctor, restore,
	// recuperar, cert, cae, envelope, render…) drive the same adapters, the
	// doctor checks the certificate's chain with verifier's trust, and the
	// service and autostart use cases resolve, by the profiles' rules, what
	// those OS adapters install.
	// On Windows, starting the service first checks that no tray agent holds
	// its data directory (internal/instance).
	"app": {"autostart", "cfe", "dgi", "dgisend", "escpos", "health", "hosted", "durable", "internal/instance", "internal/machinezone", "issuer",
		"localapi/apitype", "localapi/localclient", "logs", "pdf", "printer", "printing", "profiles", "service", "signer",
		"store", "tray", "verifier"},
	// The installers' helper (the icons, and the .deb's unit from service.SystemdUnit) and their tests.
	"packaging": {"assets", "service"},
	// scripts/tray-screenshots.sh's converter of xwd's screenshots to PNG:
	// the standard library only.
	"scripts/xwd2png": {},
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
// project package (go list -deps, not only direct imports), nor net/http:
// the HTTP statuses of its codes are internal/httpcode's.
func TestImportRules_cfeIsTheDomain(t *testing.T) {
	t.Parallel()
	testtool.Require(t, "go")
	out, err := exec.Command("go", "list", "-deps", module+"cfe").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, module+"cfe") {
		t.Fatal("go list -deps cfe does not list cfe itself: has its output changed?")
	}
	for _, dep := range deps {
		if (strings.HasPrefix(dep, module) && dep != module+"cfe") || dep == "net/http" {
			t.Errorf("cfe depends on %s", dep)
		}
	}
}

// TestImportRules_issuerReadsNoOS: the issuing use case reads nothing of
// the operating system: not the machine's zone (internal/machinezone, the
// Windows registry), which comes through Config.Zone. Checked for Windows,
// where the registry would be linked.
func TestImportRules_issuerReadsNoOS(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH")
	}
	cmd := exec.Command("go", "list", "-deps", module+"issuer")
	cmd.Env = append(os.Environ(), "GOOS=windows")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, module+"issuer") {
		t.Fatal("go list -deps issuer does not list issuer itself: has its output changed?")
	}
	for _, f := range []string{module + "internal/machinezone", "golang.org/x/sys/windows/registry"} {
		if slices.Contains(deps, f) {
			t.Errorf("issuer depends on %s", f)
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

// TestImportRules_appLinksNoServer: the application knows no HTTP server:
// neither it nor anything it depends on links localapi or its router (go
// list -deps). That no adapter imports it is TestImportRules' table.
func TestImportRules_appLinksNoServer(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH")
	}
	out, err := exec.Command("go", "list", "-deps", module+"app").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, module+"app") {
		t.Fatal("go list -deps app does not list the package itself: has its output changed?")
	}
	for _, f := range []string{module + "localapi", "github.com/gorilla/mux"} {
		if slices.Contains(deps, f) {
			t.Errorf("app depends on %s", f)
		}
	}
}
