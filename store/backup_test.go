package store_test

import (
	"bufio"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/store"
)

var backupMeta = store.BackupMeta{Profile: "tienda", Environment: "sandbox", RUC: "219999830019"}

// TestDB_Backup: a backup taken while several goroutines commit is a
// verified copy of one instant: every CFE acknowledged before the backup
// started is in it, each serie holds exactly the numbers 1..its counter (a
// prefix of what was acknowledged), and the counts match the copied
// transaction.
func TestDB_Backup(t *testing.T) {
	t.Parallel()
	db, _ := openStore(t, store.Options{})
	putRanges(t, db, newRange(cfe.ETicket, "A", 1, 1_000_000, farAway), newRange(cfe.EFactura, "A", 1, 1_000_000, farAway))
	before := issueN(t, db, "before", 50)

	var wg sync.WaitGroup
	stop := make(chan struct{})
	var mu sync.Mutex
	acked := map[cfe.Type][]int64{}
	for g := range 4 {
		wg.Go(func() {
			typ := []cfe.Type{cfe.ETicket, cfe.EFactura}[g%2]
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				r, err := db.Reserve(ctx, typ, today)
				if err != nil {
					t.Error(err)
					return
				}
				if err := db.Commit(ctx, r, issuedFor(r, fmt.Sprintf("load-%d-%d", g, i), signAt)); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				acked[typ] = append(acked[typ], r.Nro)
				mu.Unlock()
			}
		})
	}
	waitFor(t, "the load's first CFE of each type", time.Minute, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(acked[cfe.ETicket]) > 0 && len(acked[cfe.EFactura]) > 0
	})
	dest := filepath.Join(t.TempDir(), "copias", "agent-backup.db")
	info, err := db.Backup(ctx, dest, backupMeta, store.RecordChecks{})
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("Backup: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(acked[cfe.ETicket]) == 0 || len(acked[cfe.EFactura]) == 0 {
		t.Fatal("the load committed nothing meanwhile")
	}

	// Verified again from the file alone.
	again, err := store.VerifyBackup(dest, store.RecordChecks{})
	if err != nil {
		t.Fatalf("VerifyBackup: %v", err)
	}
	if again.Counts != info.Counts || again.TxID != info.TxID || again.Meta != backupMeta {
		t.Fatalf("VerifyBackup = %+v, Backup said %+v", again, info)
	}
	counters := map[cfe.Type]int64{}
	for _, c := range info.Counters {
		counters[c.Type] = c.Last
	}
	if counters[cfe.ETicket] < int64(len(before)) {
		t.Fatalf("the copy's e-Ticket counter %d is below the %d CFEs acknowledged before the backup", counters[cfe.ETicket], len(before))
	}
	if int64(info.Counts.CFEs) != counters[cfe.ETicket]+counters[cfe.EFactura] || info.Counts.Outbox != info.Counts.CFEs {
		t.Fatalf("counts %+v do not agree with the counters %v", info.Counts, counters)
	}
	// The copy opens as a store and holds exactly 1..counter of each serie.
	copyDB, err := store.Open(dest, store.Options{})
	if err != nil {
		t.Fatalf("open the copy: %v", err)
	}
	defer copyDB.Close()
	for typ, top := range counters {
		for n := int64(1); n <= top; n++ {
			if _, err := copyDB.FindByNumber(ctx, typ, "A", n); err != nil {
				t.Fatalf("type %d number %d is below the copy's counter %d but missing: %v", typ, n, top, err)
			}
		}
		if _, err := copyDB.FindByNumber(ctx, typ, "A", top+1); cfe.ErrorCode(err) != cfe.ENOTFOUND {
			t.Fatalf("type %d number %d is above the copy's counter: %v", typ, top+1, err)
		}
	}
	for _, n := range before {
		if _, err := copyDB.FindByNumber(ctx, cfe.ETicket, "A", n); err != nil {
			t.Fatalf("A-%d, acknowledged before the backup, is not in it: %v", n, err)
		}
	}
	// Nothing but the backup in its folder: no temporary file left behind.
	entries, err := os.ReadDir(filepath.Dir(dest))
	if err != nil || len(entries) != 1 {
		t.Fatalf("backup folder holds %v (%v), want only the backup", entries, err)
	}
}

// TestVerifyBackup_Refuses: files that are not verified backups are refused
// with a Spanish message naming them.
func TestVerifyBackup_Refuses(t *testing.T) {
	t.Parallel()
	db, storePath := openStore(t, store.Options{})
	putRanges(t, db, newRange(cfe.ETicket, "A", 1, 1000, farAway))
	issueN(t, db, "x", 20)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.db")
	if _, err := db.Backup(ctx, good, backupMeta, store.RecordChecks{}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	_ = db.Close()
	storeBytes, err := os.ReadFile(storePath)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path, want string
	}{
		{"empty", write("empty.db", nil), "vacío"},
		{"truncated", write("cut.db", data[:len(data)/2]), "truncado"},
		{"a store, not a backup", write("store.db", storeBytes), "registro de copia"},
		{"not bbolt", write("text.db", []byte(strings.Repeat("no es una base\n", 2000))), "no es una copia"},
		{"missing", filepath.Join(dir, "none.db"), "none.db"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := store.VerifyBackup(tc.path, store.RecordChecks{})
			ce := wantCode(t, err, cfe.EINVALID)
			if !strings.Contains(ce.Message, tc.want) || !strings.Contains(ce.Message, filepath.Base(tc.path)) {
				t.Fatalf("message %q lacks %q or the file's name", ce.Message, tc.want)
			}
		})
	}
}

// sumFile returns the SHA-256 of a file, "" when it does not exist.
func sumFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", sha256.Sum256(b))
}

// TestRestore: a backup is put back with the numbering checks of Open. A
// backup taken after A-3 while were signed since is refused
// unless the numbers used since are confirmed; once restored, numbering
// continues above everything used; the replaced file is kept.
func TestRestore(t *testing.T) {
	t.Parallel()
	type setup struct {
		storePath, journalPath, backup string
	}
	// prepare signs A-1..A-3, backs up, signs A-4..A-5 (signedAfter) and
	// stops the agent cleanly (or not: keepOpen).
	prepare := func(t *testing.T, signedAfter int) setup {
		storePath, journalPath := journalDirs(t)
		db, err := store.Open(mkdirFor(t, storePath), store.Options{Journal: journalPath, JournalBlock: 100})
		if err != nil {
			t.Fatal(err)
		}
		putRanges(t, db, newRange(cfe.ETicket, "A", 1, 1000, farAway))
		issueN(t, db, "old", 3)
		backup := filepath.Join(t.TempDir(), "backup.db")
		if _, err := db.Backup(ctx, backup, backupMeta, store.RecordChecks{}); err != nil {
			t.Fatal(err)
		}
		issueN(t, db, "new", signedAfter)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		return setup{storePath, journalPath, backup}
	}
	opts := func(s setup) store.RestoreOptions {
		return store.RestoreOptions{Backup: s.backup, Store: s.storePath, Journal: s.journalPath, Meta: backupMeta,
			Now: func() time.Time { return time.Date(2026, 3, 11, 9, 0, 0, 0, time.UTC) }}
	}
	// next opens the restored store as the agent does and returns the next
	// e-Ticket number and the uuids it holds.
	next := func(t *testing.T, s setup) (int64, *store.DB) {
		db := openAt(t, s.storePath, store.Options{Journal: s.journalPath, JournalBlock: 100})
		return nextNumber(t, db), db
	}

	t.Run("nothing signed since: restored, replaced file kept", func(t *testing.T) {
		t.Parallel()
		s := prepare(t, 0)
		before := sumFile(t, s.storePath)
		res, err := store.Restore(ctx, opts(s))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Behind) != 0 {
			t.Fatalf("Behind = %+v, want none", res.Behind)
		}
		if want := s.storePath + ".reemplazado-20260311T090000"; res.Replaced != want || sumFile(t, want) != before {
			t.Fatalf("replaced file %q (want %q) does not hold the old store", res.Replaced, want)
		}
		n, db := next(t, s)
		if n != 4 {
			t.Fatalf("next number %d, want 4", n)
		}
		evs, err := db.AuditEvents(ctx, 0, 1000)
		if err != nil || !hasEvent(evs, store.AuditRestored, s.backup) {
			t.Fatalf("no restored audit event naming the backup: %v", err)
		}
	})

	t.Run("behind the journal: refused without confirmation, nothing changed", func(t *testing.T) {
		t.Parallel()
		s := prepare(t, 2)
		storeSum, journalSum := sumFile(t, s.storePath), sumFile(t, s.journalPath)
		_, err := store.Restore(ctx, opts(s))
		ce := wantCode(t, err, cfe.ECONFLICT)
		if !strings.Contains(ce.Message, "--confirmar-numeros-usados 101:A:5") || !strings.Contains(ce.Message, "llega al 3") {
			t.Fatalf("message %q does not name the serie, its numbers and the flag", ce.Message)
		}
		if sumFile(t, s.storePath) != storeSum || sumFile(t, s.journalPath) != journalSum {
			t.Fatal("a refused restore changed the store or the journal")
		}
		matches, _ := filepath.Glob(s.storePath + ".reemplazado-*")
		if len(matches) != 0 {
			t.Fatalf("a refused restore moved the store: %v", matches)
		}
		n, _ := next(t, s)
		if n != 6 {
			t.Fatalf("the store still numbers %d next, want 6", n)
		}
	})

	t.Run("confirmation below what was used: refused", func(t *testing.T) {
		t.Parallel()
		s := prepare(t, 2)
		o := opts(s)
		o.Confirmed = []cfe.LastNumber{{Type: cfe.ETicket, Serie: "A", Last: 4}}
		ce := wantCode(t, errOf(store.Restore(ctx, o)), cfe.EINVALID)
		if !strings.Contains(ce.Message, "hasta el 5") {
			t.Fatalf("message %q does not say what was used", ce.Message)
		}
	})

	t.Run("behind, confirmed: restored, no number twice", func(t *testing.T) {
		t.Parallel()
		s := prepare(t, 2)
		o := opts(s)
		o.Confirmed = []cfe.LastNumber{{Type: cfe.ETicket, Serie: "A", Last: 5}}
		res, err := store.Restore(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Behind) != 1 || res.Behind[0].Backup != 3 || res.Behind[0].Resume != 5 {
			t.Fatalf("Behind = %+v", res.Behind)
		}
		n, db := next(t, s)
		if n != 6 {
			t.Fatalf("next number after the restore %d, want 6 (A-4 and A-5 were used)", n)
		}
		if _, err := db.FindByNumber(ctx, cfe.ETicket, "A", 4); cfe.ErrorCode(err) != cfe.ENOTFOUND {
			t.Fatalf("A-4 should not be in the restored copy: %v", err)
		}
	})

	t.Run("confirmed beyond the journal: numbering continues above it", func(t *testing.T) {
		t.Parallel()
		s := prepare(t, 2)
		o := opts(s)
		o.Confirmed = []cfe.LastNumber{{Type: cfe.ETicket, Serie: "A", Last: 9}} // another till used up to 9
		if _, err := store.Restore(ctx, o); err != nil {
			t.Fatal(err)
		}
		if n, _ := next(t, s); n != 10 {
			t.Fatalf("next number %d, want 10", n)
		}
	})

	t.Run("store and journal lost, behind the hosted service", func(t *testing.T) {
		t.Parallel()
		s := prepare(t, 2)
		for _, p := range []string{s.storePath, s.journalPath} {
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
		}
		o := opts(s)
		o.Hosted = []cfe.LastNumber{{Type: cfe.ETicket, Serie: "A", Last: 5}}
		// The journal saved in the backup reserved A-4..A-100 (a block): the
		// lost file may have used any of them.
		ce := wantCode(t, errOf(store.Restore(ctx, o)), cfe.ECONFLICT)
		if !strings.Contains(ce.Message, "guardado en la copia") || !strings.Contains(ce.Message, "101:A:100") {
			t.Fatalf("message %q does not name the backup's journal and its mark", ce.Message)
		}
		o.Confirmed = []cfe.LastNumber{{Type: cfe.ETicket, Serie: "A", Last: 4}}
		ce = wantCode(t, errOf(store.Restore(ctx, o)), cfe.EINVALID) // the service holds A-5
		if !strings.Contains(ce.Message, "hasta el 5") {
			t.Fatalf("message %q", ce.Message)
		}
		o.Confirmed = []cfe.LastNumber{{Type: cfe.ETicket, Serie: "A", Last: 5}}
		res, err := store.Restore(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		if res.Replaced != "" {
			t.Fatalf("Replaced = %q with no store to replace", res.Replaced)
		}
		if n, _ := next(t, s); n != 101 {
			t.Fatalf("next number %d, want 101 (above the block the lost file had reserved)", n)
		}
	})

	t.Run("store and journal lost, service beyond the backup's journal", func(t *testing.T) {
		t.Parallel()
		s := prepare(t, 2)
		for _, p := range []string{s.storePath, s.journalPath} {
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
		}
		o := opts(s)
		o.Hosted = []cfe.LastNumber{{Type: cfe.ETicket, Serie: "A", Last: 150}}
		ce := wantCode(t, errOf(store.Restore(ctx, o)), cfe.ECONFLICT)
		if !strings.Contains(ce.Message, "servicio en línea") || !strings.Contains(ce.Message, "101:A:150") {
			t.Fatalf("message %q does not name the hosted service", ce.Message)
		}
		o.Confirmed = []cfe.LastNumber{{Type: cfe.ETicket, Serie: "A", Last: 150}}
		if _, err := store.Restore(ctx, o); err != nil {
			t.Fatal(err)
		}
		if n, _ := next(t, s); n != 151 {
			t.Fatalf("next number %d, want 151", n)
		}
	})

	t.Run("no journal and no hosted answer: restored, numbering held", func(t *testing.T) {
		t.Parallel()
		s := prepare(t, 0)
		if err := os.Remove(s.journalPath); err != nil {
			t.Fatal(err)
		}
		o := opts(s)
		o.Hold = true
		if _, err := store.Restore(ctx, o); err != nil {
			t.Fatal(err)
		}
		db := openAt(t, s.storePath, store.Options{Journal: s.journalPath, JournalBlock: 100})
		if db.NumberingHold() == nil {
			t.Fatal("the restored store numbers without knowing where numbering stands")
		}
		_, err := db.Reserve(ctx, cfe.ETicket, today)
		if ce := wantCode(t, err, cfe.EUNAVAILABLE); ce.Respuesta != cfe.RespSinRangoCAE {
			t.Fatalf("Reserve while held: %v", err)
		}
	})

	t.Run("another company or environment: refused", func(t *testing.T) {
		t.Parallel()
		s := prepare(t, 0)
		for _, meta := range []store.BackupMeta{
			{Profile: "tienda", Environment: "sandbox", RUC: "210000000012"},
			{Profile: "tienda", Environment: "produccion", RUC: "219999830019"},
			{Profile: "otra", Environment: "sandbox", RUC: "219999830019"},
		} {
			o := opts(s)
			o.Meta = meta
			wantCode(t, errOf(store.Restore(ctx, o)), cfe.EINVALID)
		}
	})

	t.Run("agent running: refused", func(t *testing.T) {
		t.Parallel()
		s := prepare(t, 0)
		openAt(t, s.storePath, store.Options{Journal: s.journalPath, LockTimeout: 50 * time.Millisecond})
		ce := wantCode(t, errOf(store.Restore(ctx, opts(s))), cfe.EUNAVAILABLE)
		if !strings.Contains(ce.Message, "deténgalo") {
			t.Fatalf("message %q", ce.Message)
		}
	})
}

func errOf[T any](_ T, err error) error { return err }

func mkdirFor(t testing.TB, path string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	return path
}

// backupMain is the helper process of TestDB_Backup_Killed: it backs the
// store at path up to dest over and over, printing "ok" after each.
func backupMain(path, dest string) int {
	db, err := store.Open(path, store.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for {
		if _, err := db.Backup(ctx, dest, backupMeta, store.RecordChecks{}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println("ok")
	}
}

// TestDB_Backup_Killed: a process killed (SIGKILL) while it writes a backup
// leaves no partial file under the backup's name (the previous backup, or
// none, stays, and verifies) and the store intact. Each kill lands at a
// random point of a copy: once the copy's temporary file holds a random
// share of the store's data (a copy that holds it all is checking its
// records).
func TestDB_Backup_Killed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	storePath := filepath.Join(dir, "agent.db")
	dest := filepath.Join(dir, "copias", "backup.db")
	db, err := store.Open(storePath, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	putRanges(t, db, newRange(cfe.ETicket, "A", 1, 100_000, farAway))
	const n = 3000 // a few MB: a copy takes long enough to be killed inside
	// Loaded in bulk (the records Commit writes, TestDB_BulkLoad): 3000
	// commits one by one take seconds of fsyncs.
	first := reserve(t, db, cfe.ETicket)
	db.Release(first)
	docs := make([]*cfe.Issued, n)
	for i := range n {
		r := &cfe.Reservation{Type: cfe.ETicket, Serie: first.Serie, Nro: int64(i) + 1, Range: first.Range}
		docs[i] = issuedFor(r, fmt.Sprintf("k-%d", i), signAt)
		docs[i].Adenda = strings.Repeat("adenda larga ", 150)
	}
	for from := 0; from < n; from += 500 {
		if err := db.BulkLoad(ctx, docs[from:min(from+500, n)]); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	size := dataSize(t, storePath) // what a copy writes (Tx.WriteTo) before its record and its check
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rnd := rand.New(rand.NewPCG(seed, 0))
	tmpPattern := filepath.Join(filepath.Dir(dest), ".backup.db.tmp-*")
	midCopy := 0
	for round := range 4 {
		cmd, expired := helperCommand(t, "backup", "CFE_STORE_TEST_PATH="+storePath, "CFE_STORE_TEST_DEST="+dest)
		var stderr testtool.SyncBuffer
		cmd.Stderr = &stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(out)
		if round%2 == 1 { // even rounds: kill during the first backup, odd: after one
			if _, err := br.ReadString('\n'); err != nil {
				t.Fatalf("round %d: the helper wrote no backup: %v (%s; killed after %v: %v)", round, err, stderr.String(), helperLimit, expired())
			}
		}
		share := rnd.Float64()
		waitFor(t, fmt.Sprintf("round %d: a copy in progress holding %.0f%% of the store's %d bytes", round, 100*share, size), time.Minute, func() bool {
			if s := stderr.String(); s != "" {
				t.Fatalf("round %d: helper failed: %s", round, s)
			}
			tmps, _ := filepath.Glob(tmpPattern)
			for _, p := range tmps {
				if fi, err := os.Stat(p); err == nil && float64(fi.Size()) >= share*float64(size) {
					return true
				}
			}
			return false
		})
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		if s := stderr.String(); s != "" {
			t.Fatalf("round %d: helper failed: %s", round, s)
		}
		tmps, _ := filepath.Glob(tmpPattern)
		if len(tmps) > 0 {
			midCopy++
		}
		for _, p := range tmps {
			_ = os.Remove(p)
		}
		if _, err := os.Stat(dest); err == nil {
			info, err := store.VerifyBackup(dest, store.RecordChecks{})
			if err != nil {
				t.Fatalf("round %d: the backup under its name does not verify: %v", round, err)
			}
			if info.Counts.CFEs != n {
				t.Fatalf("round %d: backup holds %d CFEs, want %d", round, info.Counts.CFEs, n)
			}
		} else if round%2 == 1 {
			t.Fatalf("round %d: a complete backup was acknowledged but is gone: %v", round, err)
		}
		db, err := store.Open(storePath, store.Options{})
		if err != nil {
			t.Fatalf("round %d: the store does not open after the kill: %v", round, err)
		}
		st, err := db.Stats(ctx)
		if cerr := db.Close(); err == nil {
			err = cerr
		}
		if err != nil || st.CFEs != n {
			t.Fatalf("round %d: store holds %d CFEs (%v), want %d", round, st.CFEs, err, n)
		}
	}
	if midCopy == 0 {
		t.Fatal("no kill landed inside a copy (no temporary file left): the test proved nothing")
	}
}
