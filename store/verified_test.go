package store_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/store"
)

// verifiedStore makes a store of 300 CFEs in a new data directory, opened
// with rules (bbolt's mapping, EmulateWindowsMapping) and closed cleanly,
// and returns its path and the journal's.
func verifiedStore(t *testing.T, rules store.Options) (string, string) {
	t.Helper()
	path, journal := journalDirs(t)
	rules.Journal = journal
	db := openAt(t, path, rules)
	putRanges(t, db, newRange(cfe.ETicket, "A", 1, 100_000, farAway))
	for i := range 300 {
		issue(t, db, cfe.ETicket, fmt.Sprintf("verif-%03d", i))
	}
	if err := db.MarkDelivered(ctx, "verif-007", 7007); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return path, journal
}

// wantRecord fails unless the record of a verified Close beside path exists
// (want) or not.
func wantRecord(t *testing.T, path string, want bool) {
	t.Helper()
	_, err := os.Stat(store.VerifiedPath(path))
	if got := err == nil; got != want {
		t.Fatalf("record %s exists = %v (%v), want %v", store.VerifiedPath(path), got, err, want)
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
}

// zeroXMLRoot zeroes the root page of the xml bucket of the closed store
// at path: a page no part of Open reads, only the whole-file check and the
// queries that need a CFE's XML. With keepTime, the file's modification
// time is put back, as a failing disk that changes bytes under the
// filesystem would leave it.
func zeroXMLRoot(t *testing.T, path string, keepTime bool) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	bdb, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var root uint64
	err = bdb.View(func(tx *bolt.Tx) error {
		root = uint64(tx.Bucket([]byte("xml")).Root())
		return nil
	})
	if cerr := bdb.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	if root < 2 {
		t.Fatalf("the xml bucket is inline (root %d): the test needs more CFEs", root)
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	ps := int64(os.Getpagesize())
	_, err = f.WriteAt(make([]byte, ps), int64(root)*ps)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	if keepTime {
		if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestOpen_Verified: Open takes the fast start only on the file a verified
// clean Close left, unchanged; the record goes before anything writes; a
// damage the fast start did not look at is found by the background check,
// and commits are refused from then on.
func TestOpen_Verified(t *testing.T) {
	t.Parallel()
	testOpenVerified(t, store.Options{})
}

// testOpenVerified is TestOpen_Verified, also run with bbolt's Windows
// mapping emulated (TestOpen_VerifiedWindowsRules): every Open but the
// killed helper's has the rules of bbolt's mapping of rules.
func testOpenVerified(t *testing.T, rules store.Options) {
	// opts are rules with the journal at journal and the lock's timeout.
	opts := func(journal string, lockTimeout time.Duration) store.Options {
		o := rules
		o.Journal, o.LockTimeout = journal, lockTimeout
		return o
	}
	t.Run("fast start after a verified clean close", func(t *testing.T) {
		t.Parallel()
		path, journal := verifiedStore(t, rules)
		wantRecord(t, path, true)
		db, err := store.Open(path, opts(journal, 0))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if !store.StartedFast(db) {
			t.Fatal("Open checked the whole file at start after a verified clean close")
		}
		wantRecord(t, path, false) // gone before the first write
		st, err := db.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if st.Pending != 299 {
			t.Errorf("Pending = %d after a fast start, want 299", st.Pending)
		}
		store.WaitChecked(t, db)
		if err := db.Damaged(); err != nil {
			t.Fatalf("the background check found an intact file damaged: %v", err)
		}
		issue(t, db, cfe.ETicket, "verif-after")
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		wantRecord(t, path, true) // the background check verified it: recorded again
		db, err = store.Open(path, opts(journal, 0))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if !store.StartedFast(db) {
			t.Fatal("a close after a fast start and a finished background check was not recorded")
		}
		if _, err := db.FindByUUID(ctx, "verif-after"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("commits during the background check", func(t *testing.T) {
		t.Parallel()
		// The check walks the snapshot of its read transaction while the
		// committer writes: 200 commits (meta pages rewritten, pages freed
		// and reused) between the snapshot and the walk find no damage.
		path, journal := verifiedStore(t, rules)
		snapshot, release := make(chan struct{}), make(chan struct{})
		free := sync.OnceFunc(func() { close(release) })
		db, err := store.Open(path, store.WithCheckSnapshot(opts(journal, 0), func() { close(snapshot); <-release }))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		defer free() // before Close, which waits for the check
		select {
		case <-snapshot:
		case <-time.After(time.Minute): // a liveness bound, not a timing measure
			t.Fatalf("waited a minute for the background check to take its snapshot (a fast start: %v)", store.StartedFast(db))
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := range 200 {
				r, err := db.Reserve(ctx, cfe.ETicket, today)
				if err == nil {
					err = db.Commit(ctx, r, issuedFor(r, fmt.Sprintf("verif-during-%03d", i), signAt))
				}
				if err != nil {
					t.Errorf("commit %d during the check: %v", i, err)
					return
				}
			}
		}()
		select {
		case <-done:
		case <-time.After(time.Minute): // a liveness bound, not a timing measure
			free()
			t.Fatal("commits wait for the background check's read transaction (bbolt's mapping could not grow)")
		}
		free()
		store.WaitChecked(t, db)
		if err := db.Damaged(); err != nil {
			t.Fatalf("the background check, with commits after its snapshot: %v", err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		wantRecord(t, path, true)
	})
	t.Run("damage a fast start does not read is found in the background", func(t *testing.T) {
		t.Parallel()
		path, journal := verifiedStore(t, rules)
		zeroXMLRoot(t, path, true)
		db, err := store.Open(path, opts(journal, 0))
		if err != nil {
			t.Fatalf("Open: %v (the damage is in a page only the whole-file check reads)", err)
		}
		defer db.Close()
		if !store.StartedFast(db) {
			t.Fatal("Open did not take the fast start")
		}
		store.WaitChecked(t, db)
		if !errors.Is(db.Damaged(), store.ErrDamaged) {
			t.Fatalf("Damaged() = %v after the background check, want the damaged error", db.Damaged())
		}
		r, err := db.Reserve(ctx, cfe.ETicket, today)
		if err == nil {
			err = db.Commit(ctx, r, issuedFor(r, "verif-despues", signAt))
		}
		wantDamaged(t, err, path)
		if ce := wantCode(t, err, cfe.EUNAVAILABLE); ce.Respuesta != cfe.RespErrorInterno {
			t.Errorf("Respuesta = %q, want %q", ce.Respuesta, cfe.RespErrorInterno)
		}
		_, err = db.Stats(ctx) // what /health reads
		wantDamaged(t, err, path)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		wantRecord(t, path, false) // a damaged file is never recorded
		_, err = store.Open(path, opts(journal, 200*time.Millisecond))
		wantDamaged(t, err, path) // refused at start from then on
	})
	t.Run("a write since the close: whole check at start", func(t *testing.T) {
		t.Parallel()
		path, journal := verifiedStore(t, rules)
		zeroXMLRoot(t, path, false) // the modification time moves
		_, err := store.Open(path, opts(journal, 200*time.Millisecond))
		wantDamaged(t, err, path)
	})
	t.Run("a record that does not match: whole check at start", func(t *testing.T) {
		t.Parallel()
		path, journal := verifiedStore(t, rules)
		for _, content := range []string{"{no es json", `{"version":1,"size":1}`} {
			if err := os.WriteFile(store.VerifiedPath(path), []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			db, err := store.Open(path, opts(journal, 0))
			if err != nil {
				t.Fatal(err)
			}
			if store.StartedFast(db) {
				t.Errorf("record %q: Open took the fast start", content)
			}
			wantRecord(t, path, false)
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			wantRecord(t, path, true) // checked whole at start: recorded
		}
	})
	t.Run("killed after a fast start: whole check at the next start", func(t *testing.T) {
		t.Parallel()
		path, journal := verifiedStore(t, rules)
		cmd, expired := helperCommand(t, "openkill", "CFE_STORE_TEST_PATH="+path, "CFE_STORE_TEST_JOURNAL="+journal)
		var stderr testtool.SyncBuffer
		cmd.Stderr = &stderr
		stdin, err := cmd.StdinPipe() // open until the kill: the helper waits on it
		if err != nil {
			t.Fatal(err)
		}
		defer stdin.Close()
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(stdout).ReadString('\n')
		_ = cmd.Process.Kill()
		_ = cmd.Wait() // "signal: killed"
		if err != nil || strings.TrimSpace(line) != "fast" {
			t.Fatalf("helper said %q (%v), stderr %q; want it to start fast and commit (killed after waiting %v: %v)",
				line, err, stderr.String(), helperLimit, expired())
		}
		wantRecord(t, path, false)
		zeroXMLRoot(t, path, true) // a damage the fast start would not read
		_, err = store.Open(path, opts(journal, 200*time.Millisecond))
		wantDamaged(t, err, path) // refused at start: no fast start after a crash
	})
}

// openKillMain opens the store at path, commits one CFE, says whether it
// started fast, and waits to be killed (or for its stdin to close: the test
// is gone).
func openKillMain(path string) int {
	db, err := store.Open(path, store.Options{Journal: os.Getenv("CFE_STORE_TEST_JOURNAL")})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	r, err := db.Reserve(ctx, cfe.ETicket, today)
	if err == nil {
		err = db.Commit(ctx, r, issuedFor(r, "verif-killed", signAt))
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if store.StartedFast(db) {
		fmt.Println("fast")
	} else {
		fmt.Println("full")
	}
	_, _ = io.Copy(io.Discard, os.Stdin)
	return 0
}
