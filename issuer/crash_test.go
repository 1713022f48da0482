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
//
// The moments are random points of the agent's work, not of the clock: each
// kill lands once the agent has acknowledged 1 to 64 CFEs (about what it
// acknowledges in the 20 to 520 ms after its first on a quiet machine, where
// the kills used to be timed), so that a slow or busy machine kills it while
// it signs as surely as a quiet one.
func TestIssuer_CrashSafety(t *testing.T) {
	t.Parallel()
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
	creds := childCredentials(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rnd := rand.New(rand.NewPCG(1, seed))
	for round := range rounds {
		for uuid, a := range runAndKill(t, path, fmt.Sprint("r", round), 1+rnd.IntN(64), creds) {
			all[uuid] = a
		}
		checkAfterCrash(t, path, all)
	}
	t.Logf("%d rounds, %d CFEs acknowledged before the kills", rounds, len(all))
}

// childLimit bounds the life of a signing child: the test kills it much
// sooner, and one that hangs is killed then, which ends the read of its
// output.
const childLimit = 2 * time.Minute

// runAndKill starts a signing child on path, with env added to its
// environment, SIGKILLs it once it has acknowledged acks CFEs, and returns
// the CFEs it acknowledged (those read after the kill too).
func runAndKill(t *testing.T, path, run string, acks int, env ...string) map[string]acked {
	t.Helper()
	limit, cancel := context.WithTimeout(context.Background(), childLimit)
	defer cancel()
	cmd := exec.CommandContext(limit, os.Args[0], "-test.run=^$")
	cmd.Env = append(append(os.Environ(), crashEnv+"="+path, crashEnv+"_RUN="+run), env...)
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
	sc := bufio.NewScanner(stdout)
	for n := 0; sc.Scan(); {
		var uuid string
		var a acked
		var typ int
		if k, _ := fmt.Sscanf(sc.Text(), "%s %d %s %d %s", &uuid, &typ, &a.serie, &a.nro, &a.sum); k == 5 {
			a.typ = cfe.Type(typ)
			got[uuid] = a
			if n++; n == acks {
				if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	err = cmd.Wait()
	if limit.Err() != nil {
		t.Fatalf("the child acknowledged %d CFEs in %v, and was to be killed at the %dth:\n%s", len(got), childLimit, acks, stderr.String())
	}
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
