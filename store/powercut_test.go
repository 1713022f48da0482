package store_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/powercut"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/store"
)

// firstStartPaths are the store file and the journal under root, laid out as
// the agent lays them out in its data folder.
func firstStartPaths(root string) (db, journal string) {
	return filepath.Join(root, "store", "test", "perfil.db"), filepath.Join(root, "numbering", "test", "perfil", "journal.json")
}

// firstStartMain is an agent's first start in the empty folder root: it
// makes the store's folder, opens a new store with its journal, imports a
// range, commits one CFE and acknowledges it (a line to the file
// CFE_STORE_TEST_ACKS), then ends without closing the store, as when the
// power goes.
func firstStartMain(root string) int {
	path, journal := firstStartPaths(root)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	db, err := store.Open(path, store.Options{Journal: journal})
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		return 1
	}
	if err := db.PutRange(ctx, newRange(cfe.ETicket, "A", 1, 1000, farAway)); err != nil {
		fmt.Fprintln(os.Stderr, "range:", err)
		return 1
	}
	r, err := db.Reserve(ctx, cfe.ETicket, today)
	if err == nil {
		err = db.Commit(ctx, r, issuedFor(r, "primero", signAt))
	}
	if err == nil {
		err = os.WriteFile(os.Getenv("CFE_STORE_TEST_ACKS"), []byte("primero\n"), 0o600)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// TestOpen_FirstStartSurvivesPowerCut records an agent's first start under
// strace (internal/powercut: the new folders, the new store file, the first
// journal, one acknowledged CFE) and checks every disk state a power cut at a
// sync barrier could leave: once the CFE is acknowledged, the store file is
// there and holds it; and the journal's folder never exists without the
// journal (the agent would read that as a lost journal and hold numbering).
//
// Both failed before issue 23: bbolt syncs a new file's pages but never its
// name, so the store file, and the CFEs it acknowledged, could vanish with
// its folder (store.Open now syncs the folders above it); and Open made the
// journal's folder before writing the journal into it (durable now
// makes a new folder with its file already inside).
func TestOpen_FirstStartSurvivesPowerCut(t *testing.T) {
	t.Parallel()
	strace := testtool.Require(t, "strace")
	root, dir := filepath.Join(t.TempDir(), "data"), t.TempDir()
	if err := os.Mkdir(root, 0o700); err != nil {
		t.Fatal(err)
	}
	trace, ackFile := filepath.Join(dir, "trace"), filepath.Join(dir, "acks")
	args := powercut.Command(strace, trace, os.Args[0], "-test.run=^$")
	limit, cancel := context.WithTimeout(ctx, helperLimit)
	defer cancel()
	cmd := exec.CommandContext(limit, args[0], args[1:]...)
	cmd.Env = append(os.Environ(), helperEnv+"=firststart", "CFE_STORE_TEST_PATH="+root, "CFE_STORE_TEST_ACKS="+ackFile)
	if out, err := cmd.CombinedOutput(); err != nil {
		if limit.Err() != nil {
			t.Fatalf("the first start under strace did not end within %v: %v\n%s", helperLimit, err, out)
		}
		if strings.Contains(string(out), "PTRACE") {
			unavailable(t, "strace cannot trace here: %s", out)
		}
		t.Fatalf("the first start under strace: %v\n%s", err, out)
	}
	f, err := os.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rec, err := powercut.ParseTrace(f, root, ackFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Acks) != 1 {
		t.Fatalf("%d acknowledgements recorded, want 1", len(rec.Acks))
	}
	acked := rec.Acks[0].Entry
	dbPath, journal := firstStartPaths(root)

	rnd := rand.New(rand.NewPCG(23, 1))
	cuts := append(rec.Barriers(), acked+1, rec.End())
	states, opened := 0, 0
	for _, cut := range cuts {
		for _, mode := range []powercut.Mode{powercut.Durable, powercut.Everything, powercut.Sampled} {
			st := rec.State(nil, cut, mode, rnd)
			states++
			name := fmt.Sprintf("cut %d (%s, %d new names lost)", cut, mode, st.Lost)
			_, hasJournal := st.Files[journal]
			for _, d := range st.Dirs {
				if d == filepath.Dir(journal) && !hasJournal {
					t.Errorf("%s: the journal's folder exists without the journal", name)
				}
			}
			if cut <= acked {
				continue
			}
			if _, ok := st.Files[dbPath]; !ok {
				t.Errorf("%s: the store file is gone after it acknowledged a CFE", name)
				continue
			}
			to := filepath.Join(t.TempDir(), "state")
			moved, err := st.Materialize(root, to)
			if err != nil {
				t.Fatal(err)
			}
			db, err := store.Open(moved(dbPath), store.Options{Journal: moved(journal), HoldWithoutJournal: true})
			if err != nil {
				t.Errorf("%s: open: %v", name, err)
				continue
			}
			opened++
			if got, err := db.FindByUUID(ctx, "primero"); err != nil || got.Nro != 1 {
				t.Errorf("%s: the acknowledged CFE: %v, %v", name, got, err)
			}
			if r, err := db.Reserve(ctx, cfe.ETicket, today); err != nil || r.Nro != 2 {
				t.Errorf("%s: the next reservation: %v, %v; want number 2", name, r, err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Logf("%d states from %d cuts; %d opened after the acknowledgement", states, len(cuts), opened)
	if opened == 0 {
		t.Fatal("no state after the acknowledgement was checked")
	}
}
