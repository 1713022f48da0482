package store_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/store"
)

// The crashing agent numbers two types; type 101 rolls over from one range to
// the next of the same serie after 300 numbers.
var crashRanges = []cfe.CAERange{
	newRange(cfe.ETicket, "A", 1, 300, farAway),
	newRange(cfe.ETicket, "A", 301, 9_999_999, farAway),
	newRange(cfe.EFactura, "A", 1, 9_999_999, farAway),
}

const crashWorkers = 8

// crashWitnessKey is whose numbering the crashing agent's witness records
// (TestWitness_KilledNeverHolds gives it CFE_STORE_TEST_WITNESS).
var crashWitnessKey = store.WitnessKey{RUC: "219999830019", Environment: "test", Profile: "caja1"}

// crashJournalBlock is the journal's block when the crashing agent keeps one
// (TestJournal_KilledThenStoreLost gives it CFE_STORE_TEST_JOURNAL).
const crashJournalBlock = 20

// crashMain is an agent that commits from 8 goroutines until it is killed.
// After each Commit returns it prints "uuid type serie number sha256(XML)".
// One reservation in ten is released instead of committed, as when a request
// fails after taking its number.
func crashMain(path, run string) int {
	opts := store.Options{ReclaimTimeout: 50 * time.Millisecond,
		Journal: os.Getenv("CFE_STORE_TEST_JOURNAL"), JournalBlock: crashJournalBlock,
		Witness: os.Getenv("CFE_STORE_TEST_WITNESS"), WitnessKey: crashWitnessKey}
	if os.Getenv("CFE_STORE_TEST_NO_CHECKPOINTS") == "1" { // TestCommitLog_ReplayAfterKill
		opts = store.WithoutCheckpoints(opts)
	}
	db, err := store.Open(path, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		return 1
	}
	for _, r := range crashRanges {
		if err := db.PutRange(ctx, r); err != nil && cfe.ErrorCode(err) != cfe.ECONFLICT {
			fmt.Fprintln(os.Stderr, "range:", err)
			return 1
		}
	}
	var (
		stdout sync.Mutex
		wg     sync.WaitGroup
	)
	for g := range crashWorkers {
		wg.Go(func() {
			rnd := rand.New(rand.NewPCG(uint64(g), uint64(time.Now().UnixNano())))
			for i := 0; ; i++ {
				typ := []cfe.Type{cfe.ETicket, cfe.EFactura}[(g+i)%2]
				r, err := db.Reserve(ctx, typ, today)
				if err != nil {
					fmt.Fprintln(os.Stderr, "reserve:", err)
					return
				}
				if rnd.IntN(10) == 0 {
					db.Release(r)
					continue
				}
				doc := issuedFor(r, fmt.Sprintf("%s-%d-%d", run, g, i), signAt)
				doc.XML = append(doc.XML, bytes.Repeat([]byte{'x'}, rnd.IntN(4000))...)
				if err := db.Commit(ctx, r, doc); err != nil {
					if cfe.ErrorCode(err) != cfe.EUNAVAILABLE { // EUNAVAILABLE: retryable
						fmt.Fprintln(os.Stderr, "commit:", err)
					}
					continue
				}
				sum := sha256.Sum256(doc.XML)
				line := fmt.Sprintf("%s %d %s %d %s\n", doc.UUID, int(doc.Type), doc.Serie, doc.Nro, hex.EncodeToString(sum[:]))
				stdout.Lock() // one write per line: lines under PIPE_BUF reach the pipe whole
				_, _ = io.WriteString(os.Stdout, line)
				stdout.Unlock()
			}
		})
	}
	wg.Wait()
	return 1
}

// ack is a CFE the crashing agent reported as committed.
type ack struct {
	uuid  string
	typ   cfe.Type
	serie string
	nro   int64
	sum   string
}

// TestCrash_KilledAtRandomMoments kills a committing agent with SIGKILL at
// random moments, 20 times over the same file (5 with -short), and after each
// kill checks that every acknowledged CFE is stored unchanged, that no number
// is stored twice and that each serie's numbers are gap-free.
//
// The moments are random points of the agent's work, not of the clock (see
// killPoint), so that a slow or busy machine kills as many agents while they
// commit as a quiet one.
func TestCrash_KilledAtRandomMoments(t *testing.T) {
	t.Parallel()
	rounds := 20
	if testing.Short() {
		rounds = 5
	}
	path := filepath.Join(t.TempDir(), "agent.db")
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rnd := rand.New(rand.NewPCG(seed, 0))
	acked := map[string]ack{}
	busyRounds := 0
	budget := time.Now().Add(3 * time.Minute)
	for round := range rounds {
		if time.Now().After(budget) {
			t.Fatalf("out of time after %d rounds", round)
		}
		lines, stderr := runAndKill(t, path, fmt.Sprint("run", round), killPoint(rnd, true))
		for _, a := range lines {
			if _, dup := acked[a.uuid]; dup {
				t.Fatalf("uuid %s acknowledged twice", a.uuid)
			}
			acked[a.uuid] = a
		}
		if len(lines) > 0 {
			busyRounds++
		}
		if stderr != "" {
			t.Fatalf("round %d: agent reported: %s", round, stderr)
		}
		verifyAfterCrash(t, path, acked)
	}
	t.Logf("%d CFEs acknowledged; %d of %d rounds were killed while committing", len(acked), busyRounds, rounds)
	if busyRounds < (rounds+3)/4 {
		t.Fatalf("only %d rounds acknowledged anything: the kills did not hit committing agents", busyRounds)
	}
}

// killPoint draws when runAndKill kills its agent: once it has acknowledged
// 1 to 320 CFEs (about what it acknowledges in 20 to 520 ms on a quiet
// machine, where the kills used to be timed), the kill landing wherever its
// 8 goroutines and the committer are then; with atStart, one round in 8
// instead kills it at once, while it starts (0).
func killPoint(rnd *rand.Rand, atStart bool) int {
	if atStart && rnd.IntN(8) == 0 {
		return 0
	}
	return 1 + rnd.IntN(320)
}

// runAndKill starts a crashing agent on path, with env added to its
// environment, SIGKILLs it once it has acknowledged acks CFEs (at once for
// 0), and returns the CFEs it acknowledged (whole lines only: those read
// after the kill too) and its error output. An agent that ends on its own
// first is not killed: its error output says why.
func runAndKill(t *testing.T, path, run string, acks int, env ...string) ([]ack, string) {
	t.Helper()
	cmd, expired := helperCommand(t, "crash", append([]string{"CFE_STORE_TEST_PATH=" + path, "CFE_STORE_TEST_RUN=" + run}, env...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	read := make(chan ack)
	go func() {
		defer close(read)
		br := bufio.NewReader(stdout)
		for {
			line, err := br.ReadString('\n')
			if err != nil { // EOF after the kill; a partial last line is not an acknowledgement
				return
			}
			var a ack
			if _, err := fmt.Sscanf(line, "%s %d %s %d %s", &a.uuid, &a.typ, &a.serie, &a.nro, &a.sum); err != nil {
				t.Errorf("bad line %q: %v", line, err)
				continue
			}
			read <- a
		}
	}()
	kill := func() {
		if err := cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
			t.Fatal(err)
		}
	}
	if acks == 0 {
		kill()
	}
	var got []ack
	for a := range read {
		if got = append(got, a); len(got) == acks {
			kill()
		}
	}
	_ = cmd.Wait() // "signal: killed"
	if expired() {
		t.Fatalf("the agent acknowledged %d CFEs in %v, and was to be killed at the %dth", len(got), helperLimit, acks)
	}
	return got, strings.TrimSpace(stderr.String())
}

func verifyAfterCrash(t *testing.T, path string, acked map[string]ack) {
	t.Helper()
	db, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatalf("reopen after kill: %v", err)
	}
	defer db.Close()
	for _, a := range acked {
		got, err := db.FindByUUID(ctx, a.uuid)
		if err != nil {
			t.Fatalf("acknowledged CFE %s is lost: %v", a.uuid, err)
		}
		sum := sha256.Sum256(got.XML)
		if got.Type != a.typ || got.Serie != a.serie || got.Nro != a.nro || hex.EncodeToString(sum[:]) != a.sum {
			t.Fatalf("CFE %s changed: stored %d %s %d, acknowledged %+v", a.uuid, got.Type, got.Serie, got.Nro, a)
		}
	}
	st, err := db.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Pending != int(st.CFEs) {
		t.Fatalf("%d CFEs but %d in the outbox", st.CFEs, st.Pending)
	}
	// Numbering resumes right after what the disk holds.
	for _, typ := range []cfe.Type{cfe.ETicket, cfe.EFactura} {
		if st.ByType[typ] == 0 {
			continue
		}
		r, err := db.Reserve(ctx, typ, today)
		if err != nil {
			t.Fatal(err)
		}
		if r.Nro != st.ByType[typ]+1 {
			t.Fatalf("type %d: %d CFEs stored, next number %d", typ, st.ByType[typ], r.Nro)
		}
		db.Release(r)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if got := int64(len(checkFile(t, path))); got != st.CFEs {
		t.Fatalf("file holds %d CFEs, Stats says %d", got, st.CFEs)
	}
}
