package store_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/store"
)

// journalDirs returns a store path and a journal path in separate
// directories, as the agent lays them out (store/… and numbering/…).
func journalDirs(t testing.TB) (storePath, journalPath string) {
	dir := t.TempDir()
	return filepath.Join(dir, "store", "agent.db"), filepath.Join(dir, "numbering", "agent.json")
}

// openAt opens the store at path with opts, creating its directory, and
// closes it at the end of the test.
func openAt(t testing.TB, path string, opts store.Options) *store.DB {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(path, opts)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// issueN issues n e-Tickets and returns their numbers.
func issueN(t testing.TB, db *store.DB, prefix string, n int) []int64 {
	t.Helper()
	var out []int64
	for i := range n {
		out = append(out, issue(t, db, cfe.ETicket, fmt.Sprintf("%s-%d", prefix, i)).Nro)
	}
	return out
}

// nextNumber reserves the next e-Ticket number and gives it back.
func nextNumber(t testing.TB, db *store.DB) int64 {
	t.Helper()
	r := reserve(t, db, cfe.ETicket)
	db.Release(r)
	return r.Nro
}

// TestJournal_LostStore: the numbering journal, kept outside the store file,
// makes a store that lost its file resume above every number the lost file
// may have issued. were issued; the store file is then deleted,
// truncated or replaced by an older copy.
func TestJournal_LostStore(t *testing.T) {
	t.Parallel()
	rng := newRange(cfe.ETicket, "A", 1, 1000, farAway)
	const block = 10
	// prepare issues A-1..A-5 through a store with the journal and returns
	// the paths, a copy of the journal taken while the store was open (as a
	// crash would leave it: not clean) and a copy of the store after A-3.
	prepare := func(t *testing.T) (storePath, journalPath, dirtyJournal, afterA3 string) {
		storePath, journalPath = journalDirs(t)
		opts := store.Options{Journal: journalPath, JournalBlock: block}
		db := openAt(t, storePath, opts)
		putRanges(t, db, rng)
		issueN(t, db, "first", 3)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		afterA3 = filepath.Join(t.TempDir(), "backup-after-A-3.db")
		testtool.CopyFile(t, storePath, afterA3)
		db = openAt(t, storePath, opts)
		if got := issueN(t, db, "second", 2); got[1] != 5 {
			t.Fatalf("numbers %v, want 4 and 5", got)
		}
		dirtyJournal = filepath.Join(t.TempDir(), "dirty.json")
		testtool.CopyFile(t, journalPath, dirtyJournal)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		return storePath, journalPath, dirtyJournal, afterA3
	}
	// reopen opens the (damaged) store with the journal, puts the range back
	// as the agent does (the CAE file is imported again) and returns the
	// next number.
	reopen := func(t *testing.T, storePath, journalPath string) (*store.DB, int64) {
		db := openAt(t, storePath, store.Options{Journal: journalPath, JournalBlock: block})
		if err := db.PutRange(ctx, rng); err != nil && cfe.ErrorCode(err) != cfe.ECONFLICT {
			t.Fatal(err)
		}
		return db, nextNumber(t, db)
	}

	t.Run("deleted after a clean stop", func(t *testing.T) {
		t.Parallel()
		storePath, journalPath, _, _ := prepare(t)
		if err := os.Remove(storePath); err != nil {
			t.Fatal(err)
		}
		db, next := reopen(t, storePath, journalPath)
		if next != 6 {
			t.Fatalf("after the store file was deleted the next number is A-%d, want A-6", next)
		}
		evs, err := db.AuditEvents(ctx, 1, 100)
		if err != nil {
			t.Fatal(err)
		}
		if !hasEvent(evs, store.AuditNumberingResumed, "counter 0 raised to 5") {
			t.Errorf("no %s event saying the counter was raised to 5: %+v", store.AuditNumberingResumed, evs)
		}
		if r := db.ResumedAtOpen(); len(r) != 1 || !strings.Contains(r[0], "counter 0 raised to 5") {
			t.Errorf("ResumedAtOpen = %q, want the raise of A to 5", r)
		}
	})
	t.Run("deleted after a crash", func(t *testing.T) {
		t.Parallel()
		storePath, journalPath, dirty, _ := prepare(t)
		testtool.CopyFile(t, dirty, journalPath) // the agent was killed: Close never wrote the exact counters
		if err := os.Remove(storePath); err != nil {
			t.Fatal(err)
		}
		_, next := reopen(t, storePath, journalPath)
		// The second session bounded A-4 and beyond with the block A-4..A-13
		// (block 10): A-6..A-13 are skipped, never issued twice.
		if want := int64(4 + block); next != want {
			t.Fatalf("after a crash and the loss of the store the next number is A-%d, want A-%d (above the reserved block)", next, want)
		}
	})
	pg := int64(os.Getpagesize())
	for _, tc := range []struct {
		name    string
		size    func(int64) int64
		refused bool // Open refuses the file: it names pages it does not hold
	}{
		{"truncated to 0 bytes", func(int64) int64 { return 0 }, false},
		{"truncated to one page", func(int64) int64 { return pg }, true},
		{"truncated after the meta pages", func(int64) int64 { return 2 * pg }, true},
		{"truncated inside the data", func(int64) int64 { return 5 * pg }, true},
		{"truncated in the zeros past the data", func(n int64) int64 { return n - pg }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			storePath, journalPath, _, _ := prepare(t)
			fi, err := os.Stat(storePath)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.refused && tc.size(fi.Size()) > 0 && tc.size(fi.Size()) < dataSize(t, storePath) {
				t.Skip("this file system keeps no zeros past the data (headroom.go: ext4 and XFS on Linux only): the case does not arise")
			}
			if err := os.Truncate(storePath, tc.size(fi.Size())); err != nil {
				t.Fatal(err)
			}
			db, err := store.Open(storePath, store.Options{Journal: journalPath, JournalBlock: block})
			switch {
			case tc.refused && err == nil:
				db.Close()
				t.Fatal("Open accepted a file cut inside its data")
			case tc.refused:
				// Refused with a clear error (not bbolt's SIGBUS); the
				// technician moves the file aside and the agent starts a new
				// file, which resumes above the journal.
				if ce := wantCode(t, err, cfe.EINTERNAL); !strings.Contains(ce.Message, "está truncado") ||
					!strings.Contains(ce.Message, "Muévalo a otro lugar") {
					t.Errorf("Open of a truncated file: %q", ce.Message)
				}
				if err := os.Rename(storePath, storePath+".truncado"); err != nil {
					t.Fatal(err)
				}
			case err != nil:
				t.Fatalf("Open: %v", err)
			default:
				db.Close()
			}
			_, next := reopen(t, storePath, journalPath)
			if next != 6 {
				t.Fatalf("after truncation the next number is A-%d, want A-6", next)
			}
		})
	}
	t.Run("old backup restored", func(t *testing.T) {
		t.Parallel()
		storePath, journalPath, _, afterA3 := prepare(t)
		testtool.CopyFile(t, afterA3, storePath) // the copy taken after A-3, put back after A-5 was issued
		db, next := reopen(t, storePath, journalPath)
		if next != 6 {
			t.Fatalf("the restored copy (A-1..A-3) numbers A-%d next, want A-6: A-4 and A-5 exist", next)
		}
		if got := issueN(t, db, "after-restore", 2); got[0] != 6 || got[1] != 7 {
			t.Fatalf("numbers after the restore %v, want 6 and 7", got)
		}
	})
	t.Run("intact store after a crash continues without a gap", func(t *testing.T) {
		t.Parallel()
		storePath, journalPath, dirty, _ := prepare(t)
		testtool.CopyFile(t, dirty, journalPath)
		if _, next := reopen(t, storePath, journalPath); next != 6 {
			t.Fatalf("the intact store numbers A-%d next, want A-6", next)
		}
	})
	t.Run("clean restart writes the journal, not a gap", func(t *testing.T) {
		t.Parallel()
		storePath, journalPath, _, _ := prepare(t)
		for range 3 {
			db, next := reopen(t, storePath, journalPath)
			if next != 6 {
				t.Fatalf("next number after a clean restart A-%d, want A-6", next)
			}
			db.Close()
		}
	})
}

// dataSize is the size of the data of the bbolt file at path, read with
// bbolt itself.
func dataSize(t testing.TB, path string) int64 {
	t.Helper()
	bdb, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	var n int64
	_ = bdb.View(func(tx *bolt.Tx) error { n = tx.Size(); return nil })
	return n
}

func hasEvent(evs []store.AuditEvent, kind, detail string) bool {
	for _, ev := range evs {
		if ev.Kind == kind && strings.Contains(ev.Detail, detail) {
			return true
		}
	}
	return false
}

// TestJournal_Written checks what the journal file holds: a block ahead of
// the committed numbers while the store is open, within the number's range,
// and the exact counters after Close.
func TestJournal_Written(t *testing.T) {
	t.Parallel()
	storePath, journalPath := journalDirs(t)
	db := openAt(t, storePath, store.Options{Journal: journalPath, JournalBlock: 10})
	putRanges(t, db, newRange(cfe.ETicket, "A", 1, 12, farAway), newRange(cfe.ETicket, "A", 13, 100, farAway))
	issueN(t, db, "a", 3)
	want := func(committed, reserved int64, clean bool) {
		t.Helper()
		b, err := os.ReadFile(journalPath)
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		for _, w := range []string{`"tipo": 101`, `"serie": "A"`, fmt.Sprintf(`"committed": %d,`, committed),
			fmt.Sprintf(`"reserved": %d`, reserved), fmt.Sprintf(`"clean": %v`, clean)} {
			if !strings.Contains(s, w) {
				t.Fatalf("journal lacks %s:\n%s", w, s)
			}
		}
	}
	want(0, 10, false) // written before A-1: nothing committed yet, A-1..A-10 bounded
	issueN(t, db, "b", 8)
	want(10, 12, false) // A-11 needed a new mark; the range ends at 12
	issueN(t, db, "c", 2)
	want(12, 22, false) // A-13 is in the next range
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	want(13, 13, true)
}

// TestJournal_Damaged: a journal that cannot be read stops Open with a clear
// error instead of guessing.
func TestJournal_Damaged(t *testing.T) {
	t.Parallel()
	storePath, journalPath := journalDirs(t)
	db := openAt(t, storePath, store.Options{Journal: journalPath})
	db.Close()
	if err := os.WriteFile(journalPath, []byte(`{"version": 1, "sequ`), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := store.Open(storePath, store.Options{Journal: journalPath})
	if ce := wantCode(t, err, cfe.EINTERNAL); !strings.Contains(ce.Message, "diario de numeración") {
		t.Errorf("message %q does not name the journal", ce.Message)
	}
}

// TestDB_NumberingHold: a store with no journal, opened with
// HoldWithoutJournal, refuses to number until the hosted service's last
// numbers (ResumeNumbering) or a technician (MarkUsedElsewhere) say where
// numbering stands; the hold survives a restart.
func TestDB_NumberingHold(t *testing.T) {
	t.Parallel()
	ranges := []cfe.CAERange{newRange(cfe.ETicket, "A", 1, 1000, farAway), newRange(cfe.ETicket, "B", 1, 1000, farAway),
		newRange(cfe.EFactura, "A", 1, 1000, farAway)}
	open := func(t *testing.T, storePath, journalPath string) *store.DB {
		db := openAt(t, storePath, store.Options{Journal: journalPath, HoldWithoutJournal: true})
		for _, r := range ranges {
			if err := db.PutRange(ctx, r); err != nil && cfe.ErrorCode(err) != cfe.ECONFLICT {
				t.Fatal(err)
			}
		}
		return db
	}
	refused := func(t *testing.T, db *store.DB, typ cfe.Type) {
		t.Helper()
		r, err := db.Reserve(ctx, typ, today)
		if err == nil {
			t.Fatalf("type %d: Reserve handed out %s-%d while numbering is held", typ, r.Serie, r.Nro)
		}
		ce := wantCode(t, err, cfe.EUNAVAILABLE)
		if ce.Respuesta != cfe.RespSinRangoCAE || !strings.Contains(ce.Message, "no se sabe por qué número sigue la numeración") ||
			!strings.Contains(ce.Message, "cae used-elsewhere") {
			t.Fatalf("refusal %q (respuesta %q)", ce.Message, ce.Respuesta)
		}
	}

	t.Run("hosted service's last numbers", func(t *testing.T) {
		t.Parallel()
		storePath, journalPath := journalDirs(t)
		db := open(t, storePath, journalPath)
		h := db.NumberingHold()
		if h == nil || !strings.Contains(h.Reason, "archivo de datos es nuevo") {
			t.Fatalf("hold %+v", h)
		}
		refused(t, db, cfe.ETicket)
		refused(t, db, cfe.EFactura)
		// Held across a restart: the hold is in the file.
		db.Close()
		db = open(t, storePath, journalPath)
		refused(t, db, cfe.ETicket)
		if err := db.ResumeNumbering(ctx, "el servicio", []cfe.LastNumber{{Type: cfe.ETicket, Serie: "A", Last: 5}}); err != nil {
			t.Fatal(err)
		}
		if h := db.NumberingHold(); h != nil {
			t.Fatalf("hold after ResumeNumbering: %+v", h)
		}
		if n := nextNumber(t, db); n != 6 {
			t.Errorf("next e-Ticket A-%d, want A-6 (the service had A-5)", n)
		}
		if r := reserve(t, db, cfe.EFactura); r.Nro != 1 {
			t.Errorf("next e-Factura %d, want 1 (the service had none)", r.Nro)
		}
		db.Close()
		db = open(t, storePath, journalPath)
		if h := db.NumberingHold(); h != nil {
			t.Fatalf("hold came back after a restart: %+v", h)
		}
		if n := nextNumber(t, db); n != 6 {
			t.Errorf("after a restart the next e-Ticket is A-%d, want A-6", n)
		}
	})
	t.Run("technician, every serie: the hold ends", func(t *testing.T) {
		t.Parallel()
		storePath, journalPath := journalDirs(t)
		db := open(t, storePath, journalPath)
		for _, r := range ranges {
			if db.NumberingHold() == nil {
				t.Fatalf("the hold ended before serie %d-%s was settled", r.Type, r.Serie)
			}
			if err := db.MarkUsedElsewhere(ctx, r.Type, r.Serie, 0, "sin uso en otro sistema"); err != nil {
				t.Fatal(err)
			}
		}
		if h := db.NumberingHold(); h != nil {
			t.Fatalf("every serie was settled and the hold remains: %+v", h)
		}
		db.Close()
		db = open(t, storePath, journalPath)
		if h := db.NumberingHold(); h != nil {
			t.Fatalf("the hold came back after a restart: %+v", h)
		}
		if n := nextNumber(t, db); n != 1 {
			t.Fatalf("next e-Ticket %d, want 1", n)
		}
	})
	t.Run("technician, serie by serie", func(t *testing.T) {
		t.Parallel()
		storePath, journalPath := journalDirs(t)
		db := open(t, storePath, journalPath)
		if err := db.MarkUsedElsewhere(ctx, cfe.ETicket, "A", 5, "caja anterior"); err != nil {
			t.Fatal(err)
		}
		// Serie B of e-Ticket is still unknown: the type stays refused.
		refused(t, db, cfe.ETicket)
		// A typo settles nothing: there is no range of serie "b".
		if err := db.MarkUsedElsewhere(ctx, cfe.ETicket, "b", 0, "la serie B nunca se usó"); cfe.ErrorCode(err) != cfe.EINVALID {
			t.Fatalf("settling serie b, which has no range: %v, want EINVALID", err)
		}
		if h := db.NumberingHold(); h == nil || len(h.Released) != 1 {
			t.Fatalf("hold %+v, want only serie A settled", h)
		}
		if err := db.MarkUsedElsewhere(ctx, cfe.ETicket, "B", 0, "la serie B nunca se usó"); err != nil {
			t.Fatal(err)
		}
		h := db.NumberingHold()
		if h == nil || len(h.Released) != 2 {
			t.Fatalf("hold %+v, want two settled series", h)
		}
		refused(t, db, cfe.EFactura)
		db.Close()
		db = open(t, storePath, journalPath)
		r := reserve(t, db, cfe.ETicket) // A expires first? same expiry: serie A before B
		if r.Serie != "A" || r.Nro != 6 {
			t.Fatalf("next e-Ticket %s-%d, want A-6", r.Serie, r.Nro)
		}
		db.Release(r)
		refused(t, db, cfe.EFactura)
		evs, err := db.AuditEvents(ctx, 1, 100)
		if err != nil {
			t.Fatal(err)
		}
		if !hasEvent(evs, store.AuditNumberingHeld, "signing held") || !hasEvent(evs, store.AuditNumberingKnown, "la serie B nunca se usó") {
			t.Errorf("audit events %+v", evs)
		}
	})
	t.Run("technician, after an old copy was put back without its journal", func(t *testing.T) {
		t.Parallel()
		storePath, journalPath := journalDirs(t)
		db := open(t, storePath, journalPath)
		if err := db.ResumeNumbering(ctx, "el servicio", nil); err != nil {
			t.Fatal(err)
		}
		issueN(t, db, "antes", 3)
		db.Close()
		if err := os.Remove(journalPath); err != nil {
			t.Fatal(err)
		}
		db = open(t, storePath, journalPath)
		refused(t, db, cfe.ETicket)
		// were signed by the file that was lost: the technician
		// marks them although the agent already signed A-1..A-3 in the range.
		if err := db.MarkUsedElsewhere(ctx, cfe.ETicket, "A", 5, "copia restaurada; el servicio tiene hasta A-5"); err != nil {
			t.Fatal(err)
		}
		if err := db.MarkUsedElsewhere(ctx, cfe.ETicket, "B", 0, "sin uso"); err != nil {
			t.Fatal(err)
		}
		if n := nextNumber(t, db); n != 6 {
			t.Fatalf("next e-Ticket A-%d, want A-6", n)
		}
	})
	t.Run("none without a hold is refused", func(t *testing.T) {
		t.Parallel()
		db, _ := openStore(t, store.Options{})
		putRanges(t, db, ranges...)
		wantCode(t, db.MarkUsedElsewhere(ctx, cfe.ETicket, "A", 0, "nada"), cfe.EINVALID)
	})
	t.Run("a file written before journals existed is trusted", func(t *testing.T) {
		t.Parallel()
		storePath, journalPath := journalDirs(t)
		db := openAt(t, storePath, store.Options{}) // no journal: the file gets no identity, as before this version
		putRanges(t, db, ranges...)
		issueN(t, db, "antes", 2)
		db.Close()
		db = open(t, storePath, journalPath)
		if h := db.NumberingHold(); h != nil {
			t.Fatalf("hold %+v on an upgraded file", h)
		}
		if n := nextNumber(t, db); n != 3 {
			t.Fatalf("next %d, want 3", n)
		}
	})
	t.Run("a journal present means no hold", func(t *testing.T) {
		t.Parallel()
		storePath, journalPath := journalDirs(t)
		db := openAt(t, storePath, store.Options{Journal: journalPath})
		db.Close()
		db = open(t, storePath, journalPath)
		if h := db.NumberingHold(); h != nil {
			t.Fatalf("hold %+v with a journal", h)
		}
		if n := nextNumber(t, db); n != 1 {
			t.Fatalf("next %d", n)
		}
	})
}

// TestJournal_KilledThenStoreLost kills a committing agent that keeps a
// journal at random moments (killPoint: always once it has acknowledged
// some, so that there is a store file to lose), deletes its store file after
// each kill, and checks that numbering resumes above every number the killed
// agent acknowledged, skipping at most a block and the CFEs in flight.
func TestJournal_KilledThenStoreLost(t *testing.T) {
	t.Parallel()
	rounds := 6
	if testing.Short() {
		rounds = 3
	}
	storePath, journalPath := journalDirs(t)
	if err := os.MkdirAll(filepath.Dir(storePath), 0o700); err != nil {
		t.Fatal(err)
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rnd := rand.New(rand.NewPCG(seed, 0))
	highest := map[cfe.Type]int64{}
	busy := 0
	for round := range rounds {
		lines, stderr := runAndKill(t, storePath, fmt.Sprint("jrun", round), killPoint(rnd, false), "CFE_STORE_TEST_JOURNAL="+journalPath)
		if stderr != "" {
			t.Fatalf("round %d: agent reported: %s", round, stderr)
		}
		if len(lines) > 0 {
			busy++
		}
		for _, a := range lines {
			highest[a.typ] = max(highest[a.typ], a.nro)
		}
		if err := os.Remove(storePath); err != nil {
			t.Fatal(err)
		}
		db, err := store.Open(storePath, store.Options{Journal: journalPath, JournalBlock: crashJournalBlock})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range crashRanges {
			if err := db.PutRange(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
		for typ, top := range highest {
			r, err := db.Reserve(ctx, typ, today)
			if err != nil {
				t.Fatal(err)
			}
			db.Release(r)
			if r.Nro <= top || r.Nro > top+crashJournalBlock+64 {
				t.Fatalf("round %d, type %d: the killed agent acknowledged up to %d; the new file numbers %d next", round, typ, top, r.Nro)
			}
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if busy == 0 {
		t.Fatal("no round acknowledged anything: the kills did not hit committing agents")
	}
}
