package store_test

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/store"
)

// threeYears opens a store at path with opts and a clock at *now, and fills
// it with CFEs signed over 2024, 2025 and 2026 (to now, 2026-03-10):
// e-Tickets of serie A and e-Facturas of serie B, every one delivered except
// the e-Ticket named pendingUUID (signed in 2025).
func threeYears(t *testing.T, path string, now *time.Time, opts store.Options) (*store.DB, []*cfe.Issued) {
	t.Helper()
	samples := sampleXMLs(t)
	opts.Now = func() time.Time { return *now }
	db, err := store.Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	checkAtEnd(t, db, path)
	expires := cfe.Date{Year: 2027, Month: time.June, Day: 30}
	putRanges(t, db, newRange(cfe.ETicket, "A", 1, 10_000, expires), newRange(cfe.EFactura, "B", 1, 10_000, expires))
	var all []*cfe.Issued
	start := time.Date(2024, time.February, 3, 10, 0, 0, 0, cfe.Montevideo)
	for i := range 60 {
		at := start.AddDate(0, 0, 12*i) // every 12 days: 2024-02-03 … 2026-01-11
		*now = at.Add(time.Minute)
		typ := cfe.ETicket
		if i%3 == 0 {
			typ = cfe.EFactura
		}
		r, err := db.Reserve(ctx, typ, cfe.DateOf(at))
		if err != nil {
			t.Fatal(err)
		}
		doc := issuedFor(r, fmt.Sprintf("y%d-%02d", at.Year(), i), at)
		doc.XML = asStored(samples[i%len(samples)], r.Type, r.Serie, r.Nro, fmt.Sprint(i))
		if err := db.Commit(ctx, r, doc); err != nil {
			t.Fatal(err)
		}
		if doc.UUID != pendingUUID {
			if err := db.MarkDelivered(ctx, doc.UUID, int64(1000+i)); err != nil {
				t.Fatal(err)
			}
		}
		all = append(all, doc)
	}
	*now = time.Date(2026, time.March, 10, 12, 0, 0, 0, cfe.Montevideo)
	return db, all
}

// pendingUUID is the one CFE of threeYears not delivered: an e-Ticket of 2025.
const pendingUUID = "y2025-31"

func liveKeys(t *testing.T, path string) int {
	t.Helper()
	raw, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	n := 0
	_ = raw.View(func(tx *bolt.Tx) error { n = tx.Bucket([]byte("cfes")).Stats().KeyN; return nil })
	return n
}

func TestDB_Archive(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "agent.db")
	var now time.Time
	db, all := threeYears(t, path, &now, store.WithArchiveBatch(store.Options{}, 7)) // several batches
	statusBefore, err := db.RangeStatus(ctx, cfe.DateOf(now))
	if err != nil {
		t.Fatal(err)
	}

	res, err := db.Archive(ctx, store.DefaultArchiveBefore(now))
	if err != nil {
		t.Fatal(err)
	}
	// Serie A stops at the pending e-Ticket of 2025: it and the later
	// e-Tickets of 2025 stay; serie B's 2024 and 2025 all move.
	var wantMoved, wantKept int
	pendingNro := int64(0)
	for _, c := range all {
		if c.UUID == pendingUUID {
			pendingNro = c.Nro
		}
	}
	for _, c := range all {
		if c.TmstFirma.Year() == 2026 {
			continue
		}
		if c.Type == cfe.ETicket && c.Nro >= pendingNro {
			wantKept++
		} else {
			wantMoved++
		}
	}
	if res.Moved != wantMoved || res.Kept["101/A"] != wantKept || res.Kept["111/B"] != 0 {
		t.Fatalf("Archive = %+v, want %d moved and %d kept in 101/A", res, wantMoved, wantKept)
	}
	if res.Years[2024] == 0 || res.Years[2025] == 0 || res.Years[2026] != 0 {
		t.Errorf("moved by year %v: want 2024 and 2025 only", res.Years)
	}
	for _, y := range []int{2024, 2025} {
		if _, err := os.Stat(filepath.Join(filepath.Dir(path), fmt.Sprintf("agent-archive-%d.db", y))); err != nil {
			t.Errorf("archive of %d: %v", y, err)
		}
	}

	// Everything is still found, byte for byte, by uuid and by number.
	for _, c := range all {
		got, err := db.FindByUUID(ctx, c.UUID)
		if err != nil {
			t.Fatalf("FindByUUID %s: %v", c.UUID, err)
		}
		sameIssued(t, got, c)
		got, err = db.FindByNumber(ctx, c.Type, c.Serie, c.Nro)
		if err != nil {
			t.Fatalf("FindByNumber %s: %v", c.UUID, err)
		}
		sameIssued(t, got, c)
	}
	if _, err := db.FindByUUID(ctx, "never-signed"); cfe.ErrorCode(err) != cfe.ENOTFOUND {
		t.Errorf("an unknown uuid: %v, want ENOTFOUND", err)
	}
	// Lists and counts span the archives, in time order.
	from, to := cfe.Date{Year: 2024, Month: time.January, Day: 1}, cfe.DateOf(now)
	list, err := db.ListByDate(ctx, from, to, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != len(all) {
		seen := map[string]bool{}
		for _, c := range list {
			if seen[c.UUID] {
				t.Errorf("twice: %s", c.UUID)
			}
			seen[c.UUID] = true
		}
		for _, c := range all {
			if !seen[c.UUID] {
				t.Errorf("missing %s signed %s", c.UUID, c.TmstFirma)
			}
		}
		t.Fatalf("ListByDate over three years: %d CFEs (%d distinct), want %d; last %s", len(list), len(seen), len(all), list[len(list)-1].UUID)
	}
	for i, c := range list {
		if c.UUID != all[i].UUID {
			t.Fatalf("ListByDate[%d] = %s, want %s (time order)", i, c.UUID, all[i].UUID)
		}
	}
	if n, err := db.CountByDate(ctx, from, to); err != nil || n != len(all) {
		t.Errorf("CountByDate over three years = %d, %v; want %d", n, err, len(all))
	}
	y2025 := cfe.Date{Year: 2025, Month: time.January, Day: 1}
	if part, err := db.ListByDate(ctx, y2025, cfe.Date{Year: 2025, Month: time.December, Day: 31}, 5); err != nil || len(part) != 5 || part[0].TmstFirma.Year() != 2025 {
		t.Errorf("the first 5 of 2025: %d CFEs, %v", len(part), err)
	}
	// Counts of the ranges do not change.
	statusAfter, err := db.RangeStatus(ctx, cfe.DateOf(now))
	if err != nil {
		t.Fatal(err)
	}
	for i := range statusBefore {
		if statusBefore[i].Used != statusAfter[i].Used || statusBefore[i].Skipped != statusAfter[i].Skipped {
			t.Errorf("range %s: used/skipped %d/%d before, %d/%d after archiving", statusBefore[i].Range.ID,
				statusBefore[i].Used, statusBefore[i].Skipped, statusAfter[i].Used, statusAfter[i].Skipped)
		}
	}
	if st, err := db.Stats(ctx); err != nil || st.CFEs != int64(len(all)) || st.Pending != 1 {
		t.Errorf("Stats after archiving: %+v, %v", st, err)
	}
	// Numbering goes on; a second run moves nothing more.
	next := issue(t, db, cfe.ETicket, "after-archive")
	if again, err := db.Archive(ctx, store.DefaultArchiveBefore(now)); err != nil || again.Moved != 0 {
		t.Errorf("second Archive = %+v, %v; want nothing moved", again, err)
	}
	// Once the pending CFE is delivered, the rest of 2025 moves.
	if err := db.MarkDelivered(ctx, pendingUUID, 999); err != nil {
		t.Fatal(err)
	}
	if again, err := db.Archive(ctx, store.DefaultArchiveBefore(now)); err != nil || again.Moved != wantKept {
		t.Errorf("Archive after the delivery = %+v, %v; want %d moved", again, err, wantKept)
	}
	if got, err := db.FindByUUID(ctx, pendingUUID); err != nil || got.Delivery.State != cfe.DeliveryAccepted {
		t.Errorf("the delivered CFE, archived: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	var live2026 int
	for _, c := range all {
		if c.TmstFirma.Year() == 2026 {
			live2026++
		}
	}
	if n := liveKeys(t, path); n != live2026+1 {
		t.Errorf("the live file holds %d CFEs, want this year's %d", n, live2026+1)
	}
	// Reopened, the archives are found again.
	db, err = store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkAtEnd(t, db, path)
	defer db.Close()
	for _, c := range append(all, next) {
		if _, err := db.FindByUUID(ctx, c.UUID); err != nil {
			t.Fatalf("after reopening, %s: %v", c.UUID, err)
		}
	}
}

// TestDB_ArchiveCrash stops Archive after it wrote a batch to the archives
// and before it deleted it from the live file, as a crash would: the CFEs
// are then in both; running it again finishes the move.
func TestDB_ArchiveCrash(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "agent.db")
	var now time.Time
	crash := errors.New("crash")
	afterWrite := crash // what Archive's next batch meets once written to the archives
	opts := store.WithAfterArchiveWrite(store.WithArchiveBatch(store.Options{}, 5), func() error { return afterWrite })
	db, all := threeYears(t, path, &now, opts)
	if _, err := db.Archive(ctx, store.DefaultArchiveBefore(now)); !errors.Is(err, crash) {
		t.Fatalf("Archive with a crash after the write: %v", err)
	}
	// The first batch is in its archive (written, fsynced)...
	if n := liveKeys(t, filepath.Join(filepath.Dir(path), "agent-archive-2024.db")); n != 5 {
		t.Fatalf("after the crash the archive of 2024 holds %d CFEs, want the batch's 5", n)
	}
	// ... and still live: lists show each CFE once meanwhile.
	if list, err := db.ListByDate(ctx, cfe.Date{Year: 2024, Month: time.January, Day: 1}, cfe.DateOf(now), 1000); err != nil || len(list) != len(all) {
		t.Fatalf("ListByDate after the crash: %d CFEs, %v; want %d", len(list), err, len(all))
	}
	afterWrite = nil
	res, err := db.Archive(ctx, store.DefaultArchiveBefore(now))
	if err != nil {
		t.Fatal(err)
	}
	if res.Moved == 0 {
		t.Fatal("the second run moved nothing")
	}
	for _, c := range all {
		got, err := db.FindByUUID(ctx, c.UUID)
		if err != nil {
			t.Fatalf("%s: %v", c.UUID, err)
		}
		sameIssued(t, got, c)
	}
	list, err := db.ListByDate(ctx, cfe.Date{Year: 2024, Month: time.January, Day: 1}, cfe.DateOf(now), 1000)
	if err != nil || len(list) != len(all) {
		t.Fatalf("ListByDate after the re-run: %d CFEs, %v; want %d (each once)", len(list), err, len(all))
	}
	if st, err := db.Stats(ctx); err != nil || st.CFEs != int64(len(all)) {
		t.Errorf("Stats after the re-run: %+v, %v", st, err)
	}
}

// TestDB_ArchiveDamaged: a damaged archive does not stop signing (every
// new sale's uuid is looked up in the archives); a lookup of one of its CFEs
// says why it is not found, and a list that needs it fails.
func TestDB_ArchiveDamaged(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "agent.db")
	var now time.Time
	db, all := threeYears(t, path, &now, store.Options{})
	if _, err := db.Archive(ctx, store.DefaultArchiveBefore(now)); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	arch := filepath.Join(filepath.Dir(path), "agent-archive-2024.db")
	fi, err := os.Stat(arch)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(arch, fi.Size()/2); err != nil { // cut partway, as a failing copy leaves it
		t.Fatal(err)
	}
	db, err = store.Open(path, store.Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	checkAtEnd(t, db, path)
	defer db.Close()
	var of2024, of2025 *cfe.Issued
	for _, c := range all {
		switch {
		case of2024 == nil && c.TmstFirma.Year() == 2024:
			of2024 = c
		case of2025 == nil && c.TmstFirma.Year() == 2025:
			of2025 = c
		}
	}
	if got, err := db.FindByUUID(ctx, of2025.UUID); err != nil {
		t.Fatalf("a CFE of the healthy 2025 archive: %v", err)
	} else {
		sameIssued(t, got, of2025)
	}
	_, err = db.FindByUUID(ctx, of2024.UUID)
	if ce := wantCode(t, err, cfe.ENOTFOUND); !strings.Contains(ce.Message, "agent-archive-2024.db") {
		t.Errorf("a CFE of the damaged archive: %q, want the archive named", ce.Message)
	}
	if _, err := db.FindByNumber(ctx, of2024.Type, of2024.Serie, of2024.Nro); cfe.ErrorCode(err) != cfe.ENOTFOUND {
		t.Errorf("FindByNumber in the damaged archive: %v", err)
	}
	// Signing goes on: the issuer's lookup of a new uuid answers ENOTFOUND.
	if _, err := db.FindByUUID(ctx, "new-sale"); cfe.ErrorCode(err) != cfe.ENOTFOUND {
		t.Fatalf("a new uuid beside a damaged archive: %v, want ENOTFOUND", err)
	}
	r, err := db.Reserve(ctx, cfe.ETicket, cfe.DateOf(now))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Commit(ctx, r, issuedFor(r, "new-sale", now)); err != nil {
		t.Fatalf("signing beside a damaged archive: %v", err)
	}
	if _, err := db.ListByDate(ctx, cfe.Date{Year: 2024, Month: time.January, Day: 1}, cfe.DateOf(now), 1000); err == nil {
		t.Error("a list over the damaged year answered without error")
	}
}

// TestDB_BackupArchives: the yearly archives are copied into a backup folder
// with every key and value of the archive, and a copy already up to date is
// not written again.
func TestDB_BackupArchives(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "agent.db")
	var now time.Time
	db, _ := threeYears(t, path, &now, store.Options{})
	if _, err := db.Archive(ctx, store.DefaultArchiveBefore(now)); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "otro-disco")
	written, err := db.BackupArchives(ctx, dir, store.RecordChecks{})
	if err != nil {
		t.Fatal(err)
	}
	if len(written) != 2 {
		t.Fatalf("written %v, want the archives of 2024 and 2025", written)
	}
	for _, y := range []int{2024, 2025} {
		name := fmt.Sprintf("agent-archive-%d.db", y)
		src, cp := dumpBolt(t, db.ArchivePath(y)), dumpBolt(t, filepath.Join(dir, name))
		if len(src) == 0 || !maps.Equal(src, cp) {
			t.Errorf("%s: the copy holds %d keys, the archive %d, or they differ", name, len(cp), len(src))
		}
	}
	again, err := db.BackupArchives(ctx, dir, store.RecordChecks{})
	if err != nil || len(again) != 0 {
		t.Errorf("a second copy of unchanged archives wrote %v (%v)", again, err)
	}
}

// dumpBolt reads every key and value of every top-level bucket of a bbolt
// file opened read-only.
func dumpBolt(t *testing.T, path string) map[string]string {
	t.Helper()
	bdb, err := bolt.Open(path, 0o400, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	out := map[string]string{}
	err = bdb.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			return b.ForEach(func(k, v []byte) error {
				out[string(name)+"/"+string(k)] = string(v)
				return nil
			})
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}
