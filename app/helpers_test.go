package app

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/issuer"
	"github.com/cfe-agent/cfe-agent/localapi"
	"github.com/cfe-agent/cfe-agent/profiles"
	"github.com/cfe-agent/cfe-agent/signer"
	"github.com/cfe-agent/cfe-agent/store"
)

// TestMain runs the tests without the CFE_AGENT_ variables of the
// developer's shell (an agent opened by a test reads only what the test
// sets) and with a numbering witness folder of their own, never the user's.
func TestMain(m *testing.M) {
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, profiles.EnvPrefix) {
			os.Unsetenv(name)
		}
	}
	dir, err := os.MkdirTemp("", "app-witness-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv(profiles.EnvWitnessDir, dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// montevideo is the signing rule's zone, whatever the machine's.
func montevideo(time.Time) issuer.ZoneStatus {
	return issuer.ZoneStatus{Name: "America/Montevideo", Offset: -3 * 3600}
}

// testCredentials is the sandbox profile's test certificate, made once for
// every test (RSA generation is slow).
var testCredentials = sync.OnceValues(func() (*signer.Credentials, error) {
	return signer.GenerateTestCertificate("219999830019", "DGI-RUC PRUEBA CEDE", time.Now().AddDate(0, -1, 0))
})

// newTestAgent builds, without the process's environment, the Agent of the
// embedded sandbox profile in a data directory of its own: the profile edit
// changes (resolved against the data directory), a real store in it with
// the sandbox's test ranges (no journal, no witness), the test certificate
// and the issuer over both, signing in Montevideo's zone. Tests that use it
// may run in parallel; it is closed when the test ends.
func newTestAgent(t *testing.T, edit func(p *profiles.Profile)) *Agent {
	t.Helper()
	dataDir := t.TempDir()
	cfg, _, err := profiles.EnsureDefaultWith(dataDir, profiles.Overrides{})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := cfg.ActiveProfile()
	p = p.Resolve(dataDir)
	if edit != nil {
		edit(&p)
	}
	logs := &testtool.SyncBuffer{}
	a := &Agent{Log: slog.New(slog.NewTextHandler(logs, nil)), DataDir: dataDir, Config: cfg, Name: cfg.Active, Profile: p}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the agent's log:\n%s", logs)
		}
	})
	path := cfg.StorePath(dataDir, a.Name)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if a.DB, err = store.Open(path, store.Options{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	for _, r := range signer.SandboxRanges(p.Company.RUC, cfe.DateOf(time.Now().In(cfe.Montevideo))) {
		if err := a.DB.PutRange(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	creds, err := testCredentials()
	if err != nil {
		t.Fatal(err)
	}
	if a.Signer, err = signer.New(signer.Config{Credentials: creds}); err != nil {
		t.Fatal(err)
	}
	a.Issuer = issuer.New(issuer.Config{Store: a.DB, Signer: issuingSigner(a.Signer, nil), Emisor: p.Emisor,
		Tax: taxConfig(p.Tax), Zone: montevideo})
	return a
}

// sign signs an e-Ticket of one item of price pesos under uuid, and returns
// the issuer's result.
func sign(t *testing.T, a *Agent, uuid string, price int) *issuer.Result {
	t.Helper()
	body := fmt.Sprintf(`{"uuid":%q,"cfe":{"idDoc":{"tipoCfe":101,"formaPago":1,"montoBruto":1},
		"detalles":[{"indicadorFacturacion":3,"nombreItem":"Artículo","cantidad":1,"precioUnitario":%d}]}}`, uuid, price)
	req, err := cfe.DecodeRequest(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Issuer.Issue(context.Background(), req)
	if err != nil {
		t.Fatalf("signing %s: %v", uuid, err)
	}
	return res
}

// waitFor waits, at most a minute, until cond holds, checking it every
// 10 ms.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(time.Minute)
	for !cond() {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("timed out waiting until %s", what)
		}
	}
}

// clearAgentEnv gives the test a numbering witness folder of its own (an
// agent opened with Open keeps its witness there, outside its data
// directory); the CFE_AGENT_ variables of the developer's shell are unset
// for the whole run (TestMain). The test must not be parallel.
func clearAgentEnv(t *testing.T) {
	t.Helper()
	t.Setenv(profiles.EnvWitnessDir, t.TempDir())
}

// testModule builds the local module as cmd/cfe-agent does (newModule), for
// the runner's tests: the real server on the facade's use cases (signing,
// state, printing, printers, status page), logging to log.
func testModule(log *slog.Logger) func(f *Facade, listen string) Module {
	return func(f *Facade, listen string) Module {
		return localapi.NewServer(localapi.ServerConfig{Listen: listen, Logger: log, Issuer: f, State: f,
			Printing: f, PrinterList: f, StatusPage: localapi.NewStatusPage(f)})
	}
}
