package store_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/store"
)

// TestCommitLog_ReplayAfterKill: an agent whose checkpointer is off commits
// from 8 goroutines and is killed (SIGKILL) once it has acknowledged some
// CFEs, three times over the same files. Each time the acknowledged CFEs are
// in the commit log and not in the bbolt file (so only the log can bring
// them back), a torn record is left after the last one as an interrupted
// write would, and Open must replay them all: every acknowledged CFE stored
// with its exact XML, no number twice, no gap; the log read empty after a
// clean Close. Then the store file is lost after a kill: Open makes a new
// file and moves the log it cannot belong to aside, keeping its bytes.
func TestCommitLog_ReplayAfterKill(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "agent.db")
	journal := filepath.Join(t.TempDir(), "journal.json")
	env := []string{"CFE_STORE_TEST_NO_CHECKPOINTS=1", "CFE_STORE_TEST_JOURNAL=" + journal}
	acked := map[string]ack{}
	for round, kill := range []int{7, 120, 300} {
		lines, stderr := runAndKill(t, path, fmt.Sprint("log", round), kill, env...)
		if stderr != "" {
			t.Fatalf("round %d: agent reported: %s", round, stderr)
		}
		if len(lines) < kill {
			t.Fatalf("round %d: %d acknowledged, want %d", round, len(lines), kill)
		}
		logged := store.LoggedInFiles(t, path)
		inFile := storedUUIDs(t, path)
		for _, a := range lines {
			if _, ok := logged[a.uuid]; !ok {
				t.Fatalf("round %d: acknowledged %s is not in the commit log", round, a.uuid)
			}
			if inFile[a.uuid] {
				t.Fatalf("round %d: %s is already in the bbolt file: the replay would prove nothing", round, a.uuid)
			}
			acked[a.uuid] = a
		}
		tearAfterLastRecord(t, path)
		verifyAfterCrash(t, path, acked)
		if left := store.LoggedInFiles(t, path); len(left) != 0 {
			t.Fatalf("round %d: after a clean Close the commit log still holds %d records to replay", round, len(left))
		}
	}

	// What Restore reads of the store it would replace counts the logged
	// numbers: a kill leaves CFEs only in the log, and a backup behind
	// them must be seen as behind.
	if lines, _ := runAndKill(t, path, "restore", 9, env...); len(lines) < 9 {
		t.Fatalf("the agent before the restore check acknowledged %d", len(lines))
	} else {
		for _, a := range lines {
			acked[a.uuid] = a
		}
	}
	current, err := store.CurrentCounters(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []cfe.Type{cfe.ETicket, cfe.EFactura} {
		key := fmt.Sprintf("%d/A", int(typ))
		// At least what was acknowledged: the log may also hold numbers
		// whose acknowledgement the kill cut.
		if current[key] < maxNumber(acked, typ) {
			t.Fatalf("Restore reads %s's last number as %d, the log acknowledged up to %d", key, current[key], maxNumber(acked, typ))
		}
	}
	verifyAfterCrash(t, path, acked)

	// The store file lost after a kill: its log belongs to no file now.
	if lines, _ := runAndKill(t, path, "lost", 5, env...); len(lines) < 5 {
		t.Fatalf("the last agent acknowledged %d", len(lines))
	}
	before, err := os.ReadFile(store.WALPaths(path)[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(path, store.Options{Journal: journal, JournalBlock: 20})
	if err != nil {
		t.Fatalf("Open after the store file was lost: %v", err)
	}
	defer db.Close()
	aside, _ := filepath.Glob(store.WALPaths(path)[0] + ".orphan-*")
	if len(aside) != 1 {
		t.Fatalf("the lost file's commit log was not moved aside: %v", aside)
	}
	if kept, err := os.ReadFile(aside[0]); err != nil || string(kept) != string(before) {
		t.Fatalf("the log moved aside differs from the log (%d / %d bytes, %v)", len(kept), len(before), err)
	}
	if _, err := os.Stat(store.WALPaths(path)[0]); !os.IsNotExist(err) {
		t.Fatalf("a new log file exists before the new store's first commit: %v", err)
	}
	putRanges(t, db, crashRanges...)
	next := issue(t, db, cfe.ETicket, "after-loss")
	if next.Nro <= maxNumber(acked, cfe.ETicket) {
		t.Fatalf("the new store numbered e-Ticket %d, at or below the %d the lost one acknowledged", next.Nro, maxNumber(acked, cfe.ETicket))
	}
}

// storedUUIDs returns the uuids the bbolt file at path holds, read without
// the store (no replay).
func storedUUIDs(t *testing.T, path string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for k := range dumpBuckets(t, path)["cfes"] {
		out[k] = true
	}
	return out
}

// tearAfterLastRecord writes, in each log file, the start of a record after
// the last whole one: a write the kill interrupted.
func tearAfterLastRecord(t *testing.T, path string) {
	t.Helper()
	for _, p := range store.WALPaths(path) {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		end := store.WALEnd(t, p)
		torn := append([]byte("CFEW"), data[4:4+16]...) // magic and the log's identity: it looks like the next record
		torn = append(torn, []byte(strings.Repeat("\xff", 300))...)
		f, err := os.OpenFile(p, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt(torn, end); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func maxNumber(acked map[string]ack, typ cfe.Type) int64 {
	var n int64
	for _, a := range acked {
		if a.typ == typ {
			n = max(n, a.nro)
		}
	}
	return n
}

// TestCommitLog_CheckpointFails: while the checkpoints cannot write bbolt
// (a full disk, here an injected failure), sales are still acknowledged
// from the commit log and found; WriteHealth says why bbolt cannot be
// written; once a checkpoint succeeds the failure is cleared, and every CFE
// is in bbolt after a reopen.
func TestCommitLog_CheckpointFails(t *testing.T) {
	t.Parallel()
	var failing atomic.Bool
	failing.Store(true)
	errFull := errors.New("the disk is full (injected)")
	path := filepath.Join(t.TempDir(), "agent.db")
	opts := store.WithoutCheckpoints(store.WithCheckpointHook(store.Options{}, func() error {
		if failing.Load() {
			return errFull
		}
		return nil
	}))
	db, err := store.Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	failing.Store(false)
	putRanges(t, db, newRange(cfe.ETicket, "A", 1, 1000, farAway))
	failing.Store(true)
	var docs []*cfe.Issued
	for i := range 3 {
		docs = append(docs, issue(t, db, cfe.ETicket, fmt.Sprint("lleno-", i)))
	}
	if _, err := db.Stats(ctx); err != nil { // a read: it checkpoints first, which fails
		t.Logf("Stats while checkpoints fail: %v", err)
	}
	h := db.WriteHealth()
	if h.LastError == "" || !errors.Is(h.Cause, errFull) {
		t.Fatalf("WriteHealth while checkpoints fail = %+v", h)
	}
	if n := store.Logged(db); n != 3 {
		t.Fatalf("%d CFEs waiting in the commit log, want 3", n)
	}
	for _, d := range docs {
		got, err := db.FindByUUID(ctx, d.UUID)
		if err != nil || string(got.XML) != string(d.XML) {
			t.Fatalf("FindByUUID %s while checkpoints fail: %v", d.UUID, err)
		}
		if got, err := db.FindByNumber(ctx, cfe.ETicket, "A", d.Nro); err != nil || got.UUID != d.UUID {
			t.Fatalf("FindByNumber A-%d while checkpoints fail: %v", d.Nro, err)
		}
	}
	if next := issue(t, db, cfe.ETicket, "lleno-3"); next.Nro != 4 {
		t.Fatalf("the next sale took A-%d, want A-4", next.Nro)
	}

	failing.Store(false)
	st, err := db.Stats(ctx)
	if err != nil || st.CFEs != 4 {
		t.Fatalf("Stats once checkpoints succeed: %+v, %v", st, err)
	}
	if h := db.WriteHealth(); h.LastError != "" {
		t.Fatalf("WriteHealth after a checkpoint succeeded = %+v", h)
	}
	if n := store.Logged(db); n != 0 {
		t.Fatalf("%d CFEs still only in the commit log", n)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if inFile := storedUUIDs(t, path); len(inFile) != 4 {
		t.Fatalf("the bbolt file holds %d CFEs, want 4", len(inFile))
	}
}
