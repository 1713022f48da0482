package hosted_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/hosted"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/issuer"
	"github.com/cfe-agent/cfe-agent/sandbox"
	"github.com/cfe-agent/cfe-agent/sandbox/dgi/emulator"
	"github.com/cfe-agent/cfe-agent/signer"
	"github.com/cfe-agent/cfe-agent/store"
)

// providerWithDGI runs the sandbox as the provider that sends to DGI: an
// in-process DGI emulator that answers at once, on the real clock (DGI's
// Fechahora is the emulator's).
func providerWithDGI(t *testing.T) *sandbox.Server {
	t.Helper()
	sb, err := sandbox.New(sandbox.Config{Environment: sandbox.EnvSandbox, DataDir: t.TempDir(), Listen: "127.0.0.1:0",
		DemoPassword: "demo-password", Seed: testSeed(), PasswordCost: bcrypt.MinCost,
		DGI: sandbox.DGIConfig{Enabled: true, Processing: -1, Poll: 20 * time.Millisecond, Retry: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	if err := sb.Open(); err != nil {
		sb.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := sb.Close(); err != nil {
			t.Error(err)
		}
	})
	return sb
}

// realTimeLocal is an agent's store and issuer on the real clock, with the
// sandbox profile's generated CAE ranges (the ones DGI's emulator knows).
func realTimeLocal(t *testing.T) *local {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "agente.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	for _, r := range signer.SandboxRanges(testRUC, cfe.DateOf(time.Now().In(cfe.Montevideo))) {
		if r.Type == cfe.ETicket {
			if err := db.PutRange(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	creds, err := certificate()
	if err != nil {
		t.Fatal(err)
	}
	sg, err := signer.New(signer.Config{Credentials: creds})
	if err != nil {
		t.Fatal(err)
	}
	emisor := cfe.Emisor{RUCEmisor: testRUC, RznSoc: "Empresa de Prueba S.A.", CdgDGISucur: 1,
		DomFiscal: "Av. 18 de Julio 1000", Ciudad: "Montevideo", Departamento: "Montevideo"}
	return &local{db: db, iss: issuer.New(issuer.Config{Store: db, Signer: dgiSigner{sg}, Emisor: func() cfe.Emisor { return emisor },
		Tax: cfe.DefaultTaxConfig(), Zone: montevideo})}
}

// TestDGIReader_ProviderEndToEnd: provider mode end to end over real HTTP —
// the agent signs and delivers to the sandbox, the sandbox sends to DGI's
// emulator (which rejects one chosen CFE), and the agent reads DGI's
// verdicts back from the service into its store: AE for two, BE with the
// emulator's code for the chosen one, its number annulled.
func TestDGIReader_ProviderEndToEnd(t *testing.T) {
	t.Parallel()
	sb := providerWithDGI(t)
	if err := sb.DGIEmulator().Reject(emulator.Rejection{TipoCFE: cfe.ETicket, Serie: "A", Nro: 2, Codigo: "E05",
		Detalle: "rechazo elegido por la prueba"}); err != nil {
		t.Fatal(err)
	}
	l := realTimeLocal(t)
	l.sign(t, "prov", 3)
	c, err := hosted.New(hosted.Config{BaseURL: sb.URL(), APIKey: keyAgent, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if n, err := hosted.NewDeliverer(hosted.DelivererConfig{Outbox: l.db, Client: c}).Pass(ctx); err != nil || n != 3 {
		t.Fatalf("delivered %d: %v", n, err)
	}
	r := hosted.NewDGIReader(hosted.DGIReaderConfig{Store: l.db, Client: c})
	var counts cfe.DGICounts
	if !testtool.WaitUntil(t, 30*time.Second, func() bool {
		if _, err := r.Pass(ctx); err != nil {
			t.Logf("pass: %v", err)
		}
		counts, err = l.db.DGIProviderCounts(ctx)
		return err == nil && counts.Aceptados == 2 && counts.Rechazados == 1
	}) {
		t.Fatalf("counts %+v; reader: %q; provider: %q", counts, r.LastError(), sb.DGIProvider().LastError(1))
	}
	if counts.Enviados != 3 || counts.Pendientes != 0 || counts.Desconocidos != 0 {
		t.Errorf("counts %+v", counts)
	}
	rej, err := l.db.DGIRejections(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(rej) != 1 || rej[0].Serie != "A" || rej[0].Nro != 2 || len(rej[0].Reasons) != 1 || rej[0].Reasons[0].Codigo != "E05" {
		t.Errorf("rejections %+v", rej)
	}
	for nro, want := range map[int64]string{1: cfe.DGIAccepted, 2: cfe.DGIRejected, 3: cfe.DGIAccepted} {
		st, err := l.db.DGIState(ctx, cfe.ETicket, "A", nro)
		if err != nil || st.State != want {
			t.Errorf("A-%d: state %q (%v), want %q", nro, st.State, err, want)
		}
	}
	t.Run("nothing is awaited any more, and a pass asks nothing", func(t *testing.T) {
		awaited, err := l.db.DGIProviderAwaiting(ctx, 10)
		if err != nil || len(awaited) != 0 {
			t.Fatalf("awaited %+v (%v)", awaited, err)
		}
		if res, err := r.Pass(ctx); err != nil || res != (hosted.PassResult{}) {
			t.Errorf("pass with nothing awaited: %+v %v", res, err)
		}
	})
}

// TestDGIReader_RetryAfter: a service that limits the reader's buscar
// (429 with Retry-After) is asked again no sooner than it said, on the
// client's clock, and its answer is then recorded (a BE with its code).
func TestDGIReader_RetryAfter(t *testing.T) {
	t.Parallel()
	c := newClock()
	l := openLocal(t, filepath.Join(t.TempDir(), "agente.db"), c)
	defer l.close(t)
	uuids := l.sign(t, "lim", 1)
	ctx := context.Background()
	if err := l.db.MarkDelivered(ctx, uuids[0], 7); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var asked []time.Time
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/v1/cfeemitido/buscar" {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		asked = append(asked, c.Now())
		first := len(asked) == 1
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if first {
			w.Header().Set("Retry-After", "120")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = w.Write([]byte(`{"error":"límite","code":"api_key_rate_limit_exceeded"}`))
			return
		}
		_, _ = fmt.Fprintf(w, `[{"id":7,"uuid":%q,"tipoCfe":101,"serie":"A","nro":1,"estadoDgi":"BE",`+
			`"motivosDgi":[{"codigo":"E04","glosa":"Firma electrónica no es válida"}]}]`, uuids[0])
	}))
	defer srv.Close()
	client, err := hosted.New(hosted.Config{BaseURL: srv.URL, APIKey: keyAgent, Now: c.Now, Sleep: c.Sleep, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	res, err := hosted.NewDGIReader(hosted.DGIReaderConfig{Store: l.db, Client: client}).Pass(ctx)
	if err != nil || res.Reported != 1 || res.Recorded != 1 {
		t.Fatalf("pass: %+v, %v", res, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 2 || asked[1].Sub(asked[0]) < 120*time.Second {
		t.Fatalf("asked at %v: want twice, 120 s apart", asked)
	}
	st, err := l.db.DGIState(ctx, cfe.ETicket, "A", 1)
	if err != nil || st.State != cfe.DGIRejected || len(st.Reasons) != 1 || st.Reasons[0].Codigo != "E04" {
		t.Fatalf("state %+v (%v)", st, err)
	}
}
