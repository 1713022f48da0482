package issuer_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/powercut"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/issuer"
	"github.com/cfe-agent/cfe-agent/signer"
	"github.com/cfe-agent/cfe-agent/store"
)

// powerCutEnv switches the test binary into the role of an agent that signs
// a fixed load under strace (see TestMain and TestIssuer_PowerCut); its value
// is the data folder. powerCutAcksEnv names the file it acknowledges to.
const (
	powerCutEnv     = "CFE_ISSUER_POWERCUT_CHILD"
	powerCutAcksEnv = "CFE_ISSUER_POWERCUT_ACKS"
)

// The power-cut load: 8 callers (more than the processors, so the committer
// groups commits) signing e-Tickets and e-Facturas.
const (
	powerCutCallers   = 8
	powerCutPerCaller = 24
)

// powerCutPaths are the store file and the numbering journal of a profile
// "perfil" in the test environment, laid out under root as the agent lays
// them out under its data folder (cmd/cfe-agent: StorePath, journalPath),
// and the profile's numbering witness. The witness lives outside the data
// folder on a real machine; here it is under root too, in a folder of its
// own, so that the recording covers its writes and a cut can lose them.
func powerCutPaths(root string) (db, journal, witness string) {
	return filepath.Join(root, "store", "test", "perfil.db"),
		filepath.Join(root, "numbering", "test", "perfil", "journal.json"),
		store.WitnessFile(filepath.Join(root, "witness"), powerCutWitnessKey)
}

// powerCutWitnessKey is whose numbering the witness records.
var powerCutWitnessKey = store.WitnessKey{RUC: testEmisor.RUCEmisor, Environment: "test", Profile: "perfil"}

// powerCutRanges are the CAE ranges the agent imports at every start.
var powerCutRanges = []cfe.CAERange{
	testRange(cfe.ETicket, "A", 1, 9_999_999, cfe.DateOf(testNow).AddDays(365)),
	testRange(cfe.EFactura, "A", 1, 9_999_999, cfe.DateOf(testNow).AddDays(365)),
}

// openAsAgent opens the store under root as cmd/cfe-agent's openAgent does
// for a profile with a hosted service: it makes the store's folder, opens
// the store with the numbering journal (default block; group commit and
// headroom as they are by default) and the numbering witness, held when the
// journal's folder exists without the journal, and imports the profile's
// CAE ranges (prepareRanges: a range already there is kept).
func openAsAgent(root string) (*store.DB, error) {
	dbPath, journal, witness := powerCutPaths(root)
	if err := os.MkdirAll(filepath.Dir(dbPath), 0o700); err != nil {
		return nil, err
	}
	_, statErr := os.Stat(filepath.Dir(journal))
	db, err := store.Open(dbPath, store.Options{Journal: journal, HoldWithoutJournal: statErr == nil,
		Witness: witness, WitnessKey: powerCutWitnessKey})
	if err != nil {
		return nil, err
	}
	for _, r := range powerCutRanges {
		if err := db.PutRange(context.Background(), r); err != nil && cfe.ErrorCode(err) != cfe.ECONFLICT {
			db.Close()
			return nil, err
		}
	}
	return db, nil
}

// powerCutChild is the agent under strace: it opens the store as the agent
// does, signs the load through the issuer from powerCutCallers goroutines
// and, after each Issue returned (the moment the local module answers the
// POS), writes "uuid type serie number sha256(XML)" to the acknowledgement
// file in one write. It closes the store at the end, as the agent does on
// a clean stop.
func powerCutChild(root string) int {
	db, err := openAsAgent(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		return 1
	}
	acks, err := os.OpenFile(os.Getenv(powerCutAcksEnv), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		fmt.Fprintln(os.Stderr, "acks:", err)
		return 1
	}
	sg, err := testSigner()
	if err != nil {
		fmt.Fprintln(os.Stderr, "signer:", err)
		return 1
	}
	iss := issuerOn(db, sg)
	var failed sync.Once
	code := 0
	var wg sync.WaitGroup
	for g := range powerCutCallers {
		wg.Go(func() {
			for i := range powerCutPerCaller {
				typ := []cfe.Type{cfe.ETicket, cfe.EFactura}[(g+i)%2]
				uuid := fmt.Sprintf("pc-%d-%d", g, i)
				req, err := cfe.DecodeRequest(strings.NewReader(requestJSON(typ, uuid)))
				var res *issuer.Result
				if err == nil {
					res, err = iss.Issue(context.Background(), req)
				}
				if err != nil {
					failed.Do(func() { fmt.Fprintln(os.Stderr, "issue:", err); code = 1 })
					return
				}
				sum := sha256.Sum256(res.Issued.XML)
				line := fmt.Sprintf("%s %d %s %d %s\n", uuid, res.Issued.Type, res.Issued.Serie, res.Issued.Nro, hex.EncodeToString(sum[:]))
				if _, err := acks.WriteString(line); err != nil {
					failed.Do(func() { fmt.Fprintln(os.Stderr, "ack:", err); code = 1 })
					return
				}
			}
		})
	}
	wg.Wait()
	if err := db.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "close:", err)
		return 1
	}
	return code
}

// testSigner is a signer with the test certificate, as newHarnessOn makes.
func testSigner() (*signer.Signer, error) {
	creds, err := testCredentials()
	if err != nil {
		return nil, err
	}
	return signer.New(signer.Config{Credentials: creds, Now: func() time.Time { return testNow }})
}

// issuerOn is the issuer of newHarnessOn over db, with the signer sg.
func issuerOn(db *store.DB, sg *signer.Signer) *issuer.Issuer {
	return issuer.New(issuer.Config{
		Store:  db,
		Signer: signerAdapter{Signer: sg},
		Emisor: func() cfe.Emisor { return testEmisor },
		Tax:    cfe.DefaultTaxConfig(),
		Now:    func() time.Time { return testNow },
		Zone:   (&zoneSwitch{z: montevideo}).get,
	})
}

// powerCutAck is a CFE the child acknowledged, and when (trace position).
type powerCutAck struct {
	uuid  string
	typ   cfe.Type
	serie string
	nro   int64
	sum   string
	at    int
}

// TestIssuer_PowerCut proves that a power cut, which loses every write the
// disk had not made durable, never loses an acknowledged CFE (issue 23).
//
// The recording (internal/powercut). A child process starts as the agent
// does on a new data folder (it makes the store's folder, creates the store
// and the journal, imports the ranges), signs a real load through the issuer
// (8 callers, group commit, the numbering journal with its default block
// and the numbering witness after it, headroom on where the filesystem is
// ext4 or XFS, as the agent runs) and
// stops cleanly, under strace, which logs every write, fdatasync/fsync,
// truncate, rename, file creation and mkdir the child makes under its data
// folder, with offsets and bytes, and the child's acknowledgement of each
// CFE, written to its own file after Issue returned. The store's file is opened by bbolt through
// Options.OpenFile, whose *os.File cannot be wrapped in Go, and bbolt, the
// headroom and durable all reach the disk by system calls on
// descriptors: strace records exactly those calls without touching the code
// that makes them, needs only ptrace (no FUSE device, no device-mapper), and
// is installed on CI. The recording is checked against the files the child
// left: replaying every call must rebuild them byte for byte.
//
// The replay. From the recording, states a power cut could leave are built
// (powercut.Recording.State): cuts just before, during and after every sync
// barrier and at random points; for each, what completed syncs made durable
// plus a sampled subset of the later writes, whole, page by page or with
// torn 4 KiB pages; for the journal the version its folder's last completed
// sync made durable or a later one; new files and folders only once their
// folder was synced, or by chance. Each state is written to a new folder and
// the store opened there exactly as the agent opens it (openAsAgent); then
// every CFE acknowledged before the cut must be there with the identical XML
// (SHA-256), each number of each serie stored once with no gap up to the
// counter, the outbox holding every stored CFE, nothing resumed above the
// journal (a power cut must not skip numbers), and the next CFE signed must
// take the next number. Opening may not fail, nor hold numbering: the
// witness is never found ahead of the journal (an older copy of the data
// folder), whatever the cut kept.
//
// States no power cut can produce ("lying-disk": a write a completed fdatasync
// had covered is lost) are also opened: only there may the store refuse the
// file, with its clear error for a damaged (ErrDamaged, issue 17) or truncated
// file, or open an older state; it must never panic.
//
// CI replays 300 states with the fixed seed 23 (the recording itself differs
// from run to run with the scheduling); CFE_POWERCUT_STATES and
// CFE_POWERCUT_SEED change both (make fuzz runs many more). The states are
// drawn one after the other from the seed, and checked side by side, one
// per processor, each in a folder of its own.
func TestIssuer_PowerCut(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("records a signing load under strace and replays hundreds of disk states")
	}
	strace := testtool.Require(t, "strace")
	states, seed := envInt(t, "CFE_POWERCUT_STATES", 300), envInt(t, "CFE_POWERCUT_SEED", 23)
	// The child starts as the agent does the first time, in a data folder
	// that holds nothing yet, so the recording covers the creation of the
	// store and journal and their folders too.
	root := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	initial := map[string][]byte{}
	rec, acks := recordLoad(t, strace, root)
	checkRecording(t, rec, initial, root)
	if want := powerCutCallers * powerCutPerCaller; len(acks) != want {
		t.Fatalf("the child acknowledged %d CFEs, want %d", len(acks), want)
	}

	sg, err := testSigner()
	if err != nil {
		t.Fatal(err)
	}
	rnd := rand.New(rand.NewPCG(uint64(seed), 23))
	barriers := rec.Barriers()
	work := stateDir(t)
	// A state to check, drawn by the loop below; the checkers (one per
	// processor) replay them, each counting in a summary of its own.
	type replay struct {
		i        int
		st       *powercut.State
		desc     string
		signType cfe.Type
	}
	replays := make(chan replay)
	sums := make([]powerCutSummary, runtime.GOMAXPROCS(0))
	var failures atomic.Int64
	var checkers sync.WaitGroup
	for w := range sums {
		checkers.Go(func() {
			sum := &sums[w]
			for r := range replays {
				dir := filepath.Join(work, strconv.Itoa(r.i))
				var fail string
				if _, err := r.st.Materialize(root, dir); err != nil {
					fail = fmt.Sprintf("writing the state: %v", err)
				} else if r.st.Mode == powercut.LyingDisk {
					fail = sum.checkImpossible(dir)
				} else {
					fail = sum.checkPossible(dir, acks, r.st.Cut, sg, r.signType)
				}
				sum.states++
				sum.torn += r.st.Torn
				sum.lost += r.st.Lost
				if fail != "" {
					sum.failures++
					failures.Add(1)
					keep := filepath.Join(os.TempDir(), fmt.Sprintf("cfe-powercut-%d-state-%d", seed, r.i))
					_ = os.RemoveAll(keep)
					if err := os.CopyFS(keep, os.DirFS(dir)); err != nil {
						keep = err.Error()
					}
					_ = os.RemoveAll(dir)
					t.Errorf("%s: %s (files kept in %s)", r.desc, fail, keep)
					continue
				}
				if err := os.RemoveAll(dir); err != nil {
					t.Errorf("%s: %v", r.desc, err)
				}
			}
		})
	}
	for i := range states {
		if failures.Load() >= 5 {
			break
		}
		cut := barriers[rnd.IntN(len(barriers))]
		if rnd.IntN(4) == 0 {
			cut = rnd.IntN(rec.End() + 1)
		}
		mode := powercut.Sampled
		switch i % 10 {
		case 0:
			mode = powercut.Durable
		case 1:
			mode = powercut.Everything
		case 2:
			mode = powercut.LyingDisk
		}
		st := rec.State(initial, cut, mode, rnd)
		desc := fmt.Sprintf("state %d (cut %d, %s, %d optional writes: %d kept, %d by page, %d torn pages, %d newer journal versions, %d new names lost%s)",
			i, cut, mode, st.Optional, st.Kept, st.Split, st.Torn, st.Versions, st.Lost, strings.TrimSuffix(" dropped "+st.Dropped, " dropped "))
		// The next CFE of one type is signed, alternately; the other
		// type's next number is reserved and released.
		replays <- replay{i: i, st: st, desc: desc, signType: []cfe.Type{cfe.ETicket, cfe.EFactura}[i%2]}
	}
	close(replays)
	checkers.Wait()
	if failures.Load() >= 5 {
		t.Fatal("too many failing states")
	}
	var sum powerCutSummary
	for _, s := range sums {
		sum.add(s)
	}
	t.Logf("recording: %d calls, %d syncs, %d acknowledged CFEs; replayed %d states (%d lying-disk: %d refused as damaged or truncated, %d opened; %d checked against a witness), %d acknowledged CFEs checked, %d torn pages, %d new names lost, %d failures",
		len(rec.Ops), rec.Syncs(), len(acks), sum.states, sum.lying, sum.refused, sum.lying-sum.refused, sum.witnessed, sum.checked, sum.torn, sum.lost, sum.failures)
	if states >= 20 && sum.witnessed < states/4 {
		t.Errorf("only %d of %d states had a witness: the cuts missed it", sum.witnessed, states)
	}
	if states >= 20 && sum.withAcks < states/2 {
		t.Errorf("only %d of %d states came after an acknowledged CFE: the cuts missed the load", sum.withAcks, states)
	}
	if states >= 20 && sum.torn == 0 {
		t.Error("no state tore a page: the sampling does not reach torn writes")
	}
}

// stateDir returns the folder the states are written to, one at a time: a
// new folder in /dev/shm where there is one (a tmpfs: the states' fsyncs
// cost nothing and their megabytes never reach the disk), else in the test's
// temporary folder.
func stateDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/dev/shm", "cfe-powercut-")
	if err != nil {
		return t.TempDir()
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// powerCutSummary counts what the replay checked.
type powerCutSummary struct {
	states, checked, failures, torn, lost int
	withAcks                              int // states checked with at least one acknowledged CFE
	witnessed                             int // states checked that had a witness to compare with
	lying, refused                        int
}

// add counts o's states in s too.
func (s *powerCutSummary) add(o powerCutSummary) {
	s.states += o.states
	s.checked += o.checked
	s.failures += o.failures
	s.torn += o.torn
	s.lost += o.lost
	s.withAcks += o.withAcks
	s.witnessed += o.witnessed
	s.lying += o.lying
	s.refused += o.refused
}

// recordLoad runs the signing child under strace over root and returns the
// recording and the acknowledged CFEs by uuid.
func recordLoad(t *testing.T, strace, root string) (*powercut.Recording, map[string]powerCutAck) {
	t.Helper()
	dir := t.TempDir()
	trace, ackFile := filepath.Join(dir, "trace"), filepath.Join(dir, "acks")
	args := powercut.Command(strace, trace, os.Args[0], "-test.run=^$")
	limit, cancel := context.WithTimeout(context.Background(), childLimit)
	defer cancel()
	cmd := exec.CommandContext(limit, args[0], args[1:]...)
	cmd.Env = append(os.Environ(), powerCutEnv+"="+root, powerCutAcksEnv+"="+ackFile, childCredentials(t))
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := fmt.Sprintf("the signing child under strace failed: %v\n%s", err, out)
		switch {
		case limit.Err() != nil:
			t.Fatalf("the signing child under strace did not end within %v: %s", childLimit, msg)
		case strings.Contains(string(out), "PTRACE"):
			unavailable(t, "strace cannot trace here (ptrace refused); %s", msg)
		}
		t.Fatal(msg)
	}
	f, err := os.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rec, err := powercut.ParseTrace(f, root, ackFile)
	if err != nil {
		t.Fatalf("reading the trace: %v", err)
	}
	acks := map[string]powerCutAck{}
	for _, l := range rec.Acks {
		var a powerCutAck
		var typ int
		if n, err := fmt.Sscanf(l.Line, "%s %d %s %d %s", &a.uuid, &typ, &a.serie, &a.nro, &a.sum); n != 5 {
			t.Fatalf("acknowledgement %q: %v", l.Line, err)
		}
		a.typ, a.at = cfe.Type(typ), l.Entry
		if _, dup := acks[a.uuid]; dup {
			t.Fatalf("uuid %s acknowledged twice", a.uuid)
		}
		acks[a.uuid] = a
	}
	return rec, acks
}

// checkRecording checks that the recording holds every change the child made:
// every call replayed over the initial files gives the files the child left.
func checkRecording(t *testing.T, rec *powercut.Recording, initial map[string][]byte, root string) {
	t.Helper()
	final, err := powercut.Snapshot(root)
	if err != nil {
		t.Fatal(err)
	}
	replayed := rec.State(initial, rec.End(), powercut.Everything, nil).Files
	for path, want := range final {
		got, ok := replayed[path]
		switch {
		case !ok:
			t.Fatalf("the replay has no %s (%d bytes on disk)", path, len(want))
		case string(got) != string(want):
			first := 0
			for first < min(len(got), len(want)) && got[first] == want[first] {
				first++
			}
			t.Fatalf("the replay of %s differs from the file the child left (%d / %d bytes) from byte %d: a write was not recorded", path, len(got), len(want), first)
		}
	}
	if len(replayed) != len(final) {
		t.Fatalf("the replay holds %d files, the disk %d", len(replayed), len(final))
	}
	if rec.Syncs() < 20 {
		t.Fatalf("only %d syncs recorded: the load did not commit", rec.Syncs())
	}
}

// openGuarded opens the store under root as the agent does, turning a panic
// into an error.
func openGuarded(root string) (db *store.DB, err error) {
	defer func() {
		if v := recover(); v != nil {
			db, err = nil, fmt.Errorf("store.Open panicked: %v", v)
		}
	}()
	return openAsAgent(root)
}

// checkPossible checks a state a power cut can leave: it returns what is
// wrong, or "".
func (s *powerCutSummary) checkPossible(root string, acks map[string]powerCutAck, cut int, sg *signer.Signer, signType cfe.Type) string {
	ctx := context.Background()
	db, err := openGuarded(root)
	if err != nil {
		return fmt.Sprintf("opening the store: %v", err)
	}
	defer db.Close()
	if r := db.ResumedAtOpen(); len(r) > 0 {
		return fmt.Sprintf("numbering resumed above the journal after a power cut (numbers skipped): %q", r)
	}
	// The witness, written after the journal, is never ahead of it: no
	// power cut makes the data folder look like an older copy.
	if h := db.NumberingHold(); h != nil {
		return fmt.Sprintf("numbering held after a power cut: %s", h.Reason)
	}
	if w := db.WitnessStatus(); w.OlderCopy || w.Problem != "" {
		return fmt.Sprintf("the witness after a power cut: %+v", w)
	} else if w.Found {
		s.witnessed++
	}
	before := 0
	for _, a := range acks {
		if a.at >= cut {
			continue
		}
		s.checked++
		before++
		got, err := db.FindByUUID(ctx, a.uuid)
		if err != nil {
			return fmt.Sprintf("acknowledged CFE %s (%d %s-%d) is lost: %v", a.uuid, a.typ, a.serie, a.nro, err)
		}
		sum := sha256.Sum256(got.XML)
		if got.Type != a.typ || got.Serie != a.serie || got.Nro != a.nro || hex.EncodeToString(sum[:]) != a.sum {
			return fmt.Sprintf("acknowledged CFE %s changed: stored %d %s-%d", a.uuid, got.Type, got.Serie, got.Nro)
		}
	}
	st, err := db.Stats(ctx)
	if err != nil {
		return fmt.Sprintf("Stats: %v", err)
	}
	// Nothing was delivered: every stored CFE waits in the outbox.
	if byType := st.ByType[cfe.ETicket] + st.ByType[cfe.EFactura]; st.CFEs != byType || int64(st.Pending) != st.CFEs {
		return fmt.Sprintf("%d CFEs stored, %d by type, %d in the outbox", st.CFEs, byType, st.Pending)
	}
	for _, typ := range []cfe.Type{cfe.ETicket, cfe.EFactura} {
		n := st.ByType[typ]
		seen := map[string]bool{}
		for nro := int64(1); nro <= n; nro++ {
			got, err := db.FindByNumber(ctx, typ, "A", nro)
			if err != nil {
				return fmt.Sprintf("type %d: %d CFEs stored but number %d is missing: %v", typ, n, nro, err)
			}
			if seen[got.UUID] {
				return fmt.Sprintf("type %d: uuid %s holds two numbers", typ, got.UUID)
			}
			seen[got.UUID] = true
		}
		if _, err := db.FindByNumber(ctx, typ, "A", n+1); cfe.ErrorCode(err) != cfe.ENOTFOUND {
			return fmt.Sprintf("type %d: number %d exists beyond the %d stored (%v)", typ, n+1, n, err)
		}
		if typ != signType {
			// The next number, without the cost of a signature.
			r, err := db.Reserve(ctx, typ, cfe.DateOf(testNow))
			if err != nil {
				return fmt.Sprintf("type %d: reserving after the cut: %v", typ, err)
			}
			db.Release(r)
			if r.Nro != n+1 {
				return fmt.Sprintf("type %d: %d CFEs stored, the next reservation is number %d", typ, n, r.Nro)
			}
			continue
		}
		res, err := issuerOn(db, sg).Issue(ctx, mustDecode(requestJSON(typ, fmt.Sprintf("after-cut-%d", typ))))
		if err != nil {
			return fmt.Sprintf("type %d: signing after the cut: %v", typ, err)
		}
		if res.Issued.Nro != n+1 {
			return fmt.Sprintf("type %d: %d CFEs stored, the next one signed took number %d", typ, n, res.Issued.Nro)
		}
	}
	if err := db.Close(); err != nil {
		return fmt.Sprintf("Close: %v", err)
	}
	if before > 0 {
		s.withAcks++
	}
	return ""
}

// checkImpossible checks a state no power cut can produce: the store refuses
// it with the clear error of a damaged or truncated file (store.ErrDamaged,
// checkFileSize) or opens it, and never panics.
func (s *powerCutSummary) checkImpossible(root string) string {
	s.lying++
	db, err := openGuarded(root)
	switch {
	case errors.Is(err, store.ErrDamaged), errors.Is(err, io.ErrUnexpectedEOF): // "está dañado", "está truncado"
		s.refused++
		return ""
	case err != nil:
		return fmt.Sprintf("opening the store: %v (want it open, or refused as damaged or truncated)", err)
	}
	if err := db.Close(); err != nil {
		return fmt.Sprintf("Close: %v", err)
	}
	return ""
}

// mustDecode decodes a request body the fixtures build.
func mustDecode(body string) *cfe.Request {
	r, err := cfe.DecodeRequest(strings.NewReader(body))
	if err != nil {
		panic(err)
	}
	return r
}
