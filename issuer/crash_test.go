package issuer_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/store"
)

// crashEnv switches the test binary into the role of a signing agent (see
// TestMain): it signs from 8 goroutines until it is killed.
const crashEnv = "CFE_ISSUER_CRASH_CHILD"

func TestMain(m *testing.M) {
	if path := os.Getenv(crashEnv); path != "" {
		os.Exit(crashChild(path, os.Getenv(crashEnv+"_RUN")))
	}
	if root := os.Getenv(powerCutEnv); root != "" {
		os.Exit(powerCutChild(root))
	}
	os.Exit(m.Run())
}

// crashChild signs e-Tickets and e-Facturas from 8 concurrent callers over the
// whole issue path (validation, numbering, XML, signature, durable commit). For
// each acknowledged CFE it prints "uuid type serie number sha256(XML)" after
// Issue has returned, as the local module would answer the POS.
func crashChild(path, run string) int {
	db, err := store.Open(path, store.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		return 1
	}
	t := &testing.T{}
	h := newHarnessOn(t, db)
	var out sync.Mutex
	w := bufio.NewWriter(os.Stdout)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				typ := []cfe.Type{cfe.ETicket, cfe.EFactura}[(g+i)%2]
				uuid := fmt.Sprintf("%s-%d-%d", run, g, i)
				req, err := cfe.DecodeRequest(strings.NewReader(requestJSON(typ, uuid)))
				if err != nil {
					fmt.Fprintln(os.Stderr, "decode:", err)
					os.Exit(1)
				}
				res, err := h.iss.Issue(context.Background(), req)
				if err != nil {
					fmt.Fprintln(os.Stderr, "issue:", err)
					os.Exit(1)
				}
				sum := sha256.Sum256(res.Issued.XML)
				out.Lock()
				fmt.Fprintf(w, "%s %d %s %d %s\n", uuid, res.Issued.Type, res.Issued.Serie, res.Issued.Nro, hex.EncodeToString(sum[:]))
				w.Flush()
				out.Unlock()
			}
		})
	}
	wg.Wait()
	return 0
}

type acked struct {
	typ   cfe.Type
	serie string
	nro   int64
	sum   string
}

// TestIssuer_CrashSafety kills a signing agent with SIGKILL at random moments
// (20 times; 5 with -short). After every kill the store must hold every
// acknowledged CFE with the identical XML, no number twice, and numbers that
// form one gap-free sequence per (type, serie).
func TestIssuer_CrashSafety(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent.db")
	db, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []cfe.CAERange{
		testRange(cfe.ETicket, "A", 1, 9_999_999, cfe.DateOf(testNow).AddDays(365)),
		testRange(cfe.EFactura, "A", 1, 9_999_999, cfe.DateOf(testNow).AddDays(365)),
	} {
		if err := db.PutRange(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	rounds := 20
	if testing.Short() {
		rounds = 5
	}
	all := map[string]acked{}
	rnd := rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))
	for round := range rounds {
		delay := time.Duration(20+rnd.IntN(500)) * time.Millisecond
		for uuid, a := range runAndKill(t, path, fmt.Sprint("r", round), delay) {
			all[uuid] = a
		}
		checkAfterCrash(t, path, all)
	}
	t.Logf("%d rounds, %d CFEs acknowledged before the kills", rounds, len(all))
}

func runAndKill(t *testing.T, path, run string, delay time.Duration) map[string]acked {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), crashEnv+"="+path, crashEnv+"_RUN="+run)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	got := map[string]acked{}
	done := make(chan struct{})
	first := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stdout)
		for n := 0; sc.Scan(); n++ {
			if n == 0 {
				close(first)
			}
			var uuid string
			var a acked
			var typ int
			if n, _ := fmt.Sscanf(sc.Text(), "%s %d %s %d %s", &uuid, &typ, &a.serie, &a.nro, &a.sum); n == 5 {
				a.typ = cfe.Type(typ)
				got[uuid] = a
			}
		}
	}()
	// The delay runs from the first acknowledged CFE, so that every kill
	// lands while the child is signing, however slowly the machine starts it.
	select {
	case <-first:
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("the child signed nothing in 30 s:\n%s", stderr.String())
	}
	time.Sleep(delay)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-done
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
		t.Fatalf("the child ended on its own (%v) before the kill:\n%s", err, stderr.String())
	}
	return got
}

func checkAfterCrash(t *testing.T, path string, all map[string]acked) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for uuid, a := range all {
		got, err := db.FindByUUID(ctx, uuid)
		if err != nil {
			t.Fatalf("acknowledged CFE %s (%d %s-%d) is lost: %v", uuid, a.typ, a.serie, a.nro, err)
		}
		sum := sha256.Sum256(got.XML)
		if got.Type != a.typ || got.Serie != a.serie || got.Nro != a.nro || hex.EncodeToString(sum[:]) != a.sum {
			t.Fatalf("acknowledged CFE %s changed: stored %d %s-%d", uuid, got.Type, got.Serie, got.Nro)
		}
	}
	st, err := db.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []cfe.Type{cfe.ETicket, cfe.EFactura} {
		n := st.ByType[typ]
		seen := map[string]bool{}
		for nro := int64(1); nro <= n; nro++ {
			got, err := db.FindByNumber(ctx, typ, "A", nro)
			if err != nil {
				t.Fatalf("type %d: %d CFEs stored but number %d is missing: a gap", typ, n, nro)
			}
			if seen[got.UUID] {
				t.Fatalf("type %d: uuid %s holds two numbers", typ, got.UUID)
			}
			seen[got.UUID] = true
		}
		if _, err := db.FindByNumber(ctx, typ, "A", n+1); cfe.ErrorCode(err) != cfe.ENOTFOUND {
			t.Fatalf("type %d: number %d exists beyond the %d stored", typ, n+1, n)
		}
	}
}
