package store_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/store"
)

// storeImage is a real store file with CFEs and its numbering journal, as
// bytes, built once per test run (damagedTemplate).
type storeImage struct {
	file, journal []byte
	uuids         []string
}

// damagedTemplate builds a store with two ranges, 40 CFEs of two types
// (some delivered, one rejected) and audit events, closed cleanly, and
// returns its bytes.
func damagedTemplate(t testing.TB) storeImage {
	t.Helper()
	path, journal := journalDirs(t)
	db := openAt(t, path, store.Options{Journal: journal})
	putRanges(t, db, newRange(cfe.ETicket, "A", 1, 1000, farAway), newRange(cfe.EFactura, "B", 1, 1000, farAway))
	var img storeImage
	for i := range 40 {
		typ := cfe.ETicket
		if i%3 == 0 {
			typ = cfe.EFactura
		}
		u := fmt.Sprintf("tmpl-%02d", i)
		issue(t, db, typ, u)
		img.uuids = append(img.uuids, u)
		if i%4 == 0 {
			if err := db.MarkDelivered(ctx, u, int64(9000+i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := db.MarkRejected(ctx, img.uuids[1], "rechazado en la prueba"); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	var err error
	if img.file, err = os.ReadFile(path); err != nil {
		t.Fatal(err)
	}
	if img.journal, err = os.ReadFile(journal); err != nil {
		t.Fatal(err)
	}
	return img
}

// A corruption of a store file, as the fuzz target applies it.
const (
	zeroPage    = iota // zero page p
	flipBytes          // xor data into the file at off
	truncateAt         // cut the file at off
	copyPage           // overwrite page p with page off
	zeroFrom           // zero every page from p on (the issue's reproduction: zeroed data pages)
	corruptions        // how many there are
)

// corrupt returns a damaged copy of file.
func corrupt(file []byte, op uint8, page, off uint32, data []byte) []byte {
	b := append([]byte(nil), file...)
	ps := os.Getpagesize()
	pages := len(b) / ps
	p := int(page) % pages
	switch op % corruptions {
	case zeroPage:
		clear(b[p*ps : (p+1)*ps])
	case flipBytes:
		at := int(off) % len(b)
		for i, x := range data {
			if at+i < len(b) {
				b[at+i] ^= x
			}
		}
	case truncateAt:
		b = b[:int(off)%len(b)]
	case copyPage:
		q := int(off) % pages
		copy(b[p*ps:(p+1)*ps], b[q*ps:(q+1)*ps])
	case zeroFrom:
		clear(b[p*ps:])
	}
	return b
}

// metaPage returns the field at off (bytes after the page header) of the
// newer meta page of a bbolt file (its layout: magic, version, page size,
// flags, root bucket at 16, freelist at 32, pgid, txid at 48).
func metaPage(file []byte, off int) uint32 {
	ps := os.Getpagesize()
	le := binary.NativeEndian
	m := 0
	if le.Uint64(file[ps+16+48:]) > le.Uint64(file[16+48:]) {
		m = ps
	}
	return uint32(le.Uint64(file[m+16+off:]))
}

func rootPage(file []byte) uint32     { return metaPage(file, 16) }
func freelistPage(file []byte) uint32 { return metaPage(file, 32) }

// writeImage writes file and journal into a new data directory and returns
// the store's and the journal's paths.
func writeImage(t testing.TB, file, journal []byte) (string, string) {
	t.Helper()
	path, jpath := journalDirs(t)
	for _, p := range []string{path, jpath} {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, file, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(jpath, journal, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, jpath
}

// wantDamaged fails unless err is the Spanish damaged-file error naming path
// and saying what to do.
func wantDamaged(t testing.TB, err error, path string) {
	t.Helper()
	ce := wantCode(t, err, cfe.EUNAVAILABLE)
	if !errors.Is(err, store.ErrDamaged) {
		t.Fatalf("error = %v, want one wrapping store.ErrDamaged", err)
	}
	for _, w := range []string{path, "está dañado", "consérvelo", "copia de seguridad", "diario de numeración"} {
		if !strings.Contains(ce.Message, w) {
			t.Fatalf("message %q does not say %q", ce.Message, w)
		}
	}
}

func TestOpen_Damaged(t *testing.T) {
	t.Parallel()
	img := damagedTemplate(t)
	ps := uint32(os.Getpagesize())
	tests := []struct {
		name      string
		op        uint8
		page, off uint32
		data      []byte
		truncated bool // refused as truncated (precheck.go), not as damaged
	}{
		{name: "data pages zeroed (issue 17)", op: zeroFrom, page: 2},
		{name: "root page zeroed", op: zeroPage, page: rootPage(img.file)},
		{name: "freelist page zeroed", op: zeroPage, page: freelistPage(img.file)},
		{name: "root page overwritten with the freelist", op: copyPage, page: rootPage(img.file), off: freelistPage(img.file)},
		{name: "root page overwritten with a meta page", op: copyPage, page: rootPage(img.file), off: 0},
		{name: "both meta pages zeroed", op: zeroFrom, page: 0},
		{name: "the root page's first element points outside the file", op: flipBytes, off: rootPage(img.file)*ps + 16 + 4, data: []byte{0xff, 0xff, 0xff, 0x7f}},
		{name: "cut in half", op: truncateAt, off: uint32(len(img.file) / 2), truncated: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			path, journal := writeImage(t, corrupt(img.file, tt.op, tt.page, tt.off, tt.data), img.journal)
			opts := store.Options{Journal: journal, LockTimeout: 200 * time.Millisecond}
			db, err := store.Open(path, opts)
			if err == nil {
				_ = db.Close()
				t.Fatal("Open succeeded on a damaged file")
			}
			if tt.truncated {
				if ce := wantCode(t, err, cfe.EINTERNAL); !strings.Contains(ce.Message, "truncado") {
					t.Fatalf("message %q, want the truncated file's", ce.Message)
				}
				return
			}
			wantDamaged(t, err, path)
			// The failed Open released the file's lock: a second Open says
			// the same, not "ya hay un agente ejecutándose".
			_, err = store.Open(path, opts)
			wantDamaged(t, err, path)
		})
	}
}

// TestDB_DamagedAfterOpen: a page damaged while the agent runs makes the
// query that meets it, and every later one, answer the damaged error; the
// process goes on, Close releases the file.
func TestDB_DamagedAfterOpen(t *testing.T) {
	t.Parallel()
	img := damagedTemplate(t)
	path, journal := writeImage(t, img.file, img.journal)
	db, err := store.Open(path, store.Options{Journal: journal})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.FindByUUID(ctx, img.uuids[3]); err != nil {
		t.Fatalf("FindByUUID before the damage: %v", err)
	}
	if db.Damaged() != nil {
		t.Fatalf("Damaged() = %v on an intact file", db.Damaged())
	}
	testtool.ZeroStoreDataPages(t, path)

	_, err = db.FindByUUID(ctx, img.uuids[3])
	wantDamaged(t, err, path)
	if !errors.Is(db.Damaged(), store.ErrDamaged) {
		t.Fatalf("Damaged() = %v after a damaged read", db.Damaged())
	}
	// Broken: later operations answer the same without touching bbolt.
	_, err = db.Stats(ctx)
	wantDamaged(t, err, path)
	_, err = db.Ranges(ctx)
	wantDamaged(t, err, path)
	if err := db.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	_, err = store.Open(path, store.Options{Journal: journal, LockTimeout: 200 * time.Millisecond})
	wantDamaged(t, err, path)
}

// TestDB_CommitOnDamagedFile: the committer's transaction meets the damage
// first (the committer is a goroutine of its own, which no HTTP middleware
// covers): the Commit fails with the damaged error, nothing panics, and the
// store is broken from then on.
func TestDB_CommitOnDamagedFile(t *testing.T) {
	t.Parallel()
	img := damagedTemplate(t)
	path, journal := writeImage(t, img.file, img.journal)
	db, err := store.Open(path, store.Options{Journal: journal})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r := reserve(t, db, cfe.ETicket)
	testtool.ZeroStoreDataPages(t, path)
	err = db.Commit(ctx, r, issuedFor(r, "despues-del-dano", signAt))
	wantCode(t, err, cfe.EUNAVAILABLE)
	if !errors.Is(err, store.ErrDamaged) || !errors.Is(db.Damaged(), store.ErrDamaged) {
		t.Fatalf("Commit = %v, Damaged() = %v; want both to be the damaged error", err, db.Damaged())
	}
	wantDamaged(t, err, path) // the damaged file's message, not the full disk's
	if h := db.WriteHealth(); h.LastError != "" {
		t.Errorf("the damage was recorded as a disk write failure: %+v", h)
	}
	_, err = db.FindByUUID(ctx, img.uuids[0])
	wantDamaged(t, err, path)
}

// FuzzOpenCorrupted opens corrupted copies of a real store file as the agent
// does (with its numbering journal): Open returns a *cfe.Error naming the
// file, or a store whose reads answer data or a *cfe.Error. Nothing panics.
func FuzzOpenCorrupted(f *testing.F) {
	img := damagedTemplate(f)
	pages := uint32(len(img.file) / os.Getpagesize())
	f.Add(uint8(zeroFrom), uint32(2), uint32(0), []byte(nil)) // the issue's reproduction
	for p := uint32(2); p < pages; p += max(1, pages/8) {
		f.Add(uint8(zeroPage), p, uint32(0), []byte(nil))
		f.Add(uint8(copyPage), p, p+1, []byte(nil))
	}
	f.Add(uint8(flipBytes), uint32(0), uint32(3*os.Getpagesize()+18), []byte{0xff, 0x7f})
	f.Add(uint8(truncateAt), uint32(0), uint32(len(img.file)-100), []byte(nil))
	f.Fuzz(func(t *testing.T, op uint8, page, off uint32, data []byte) {
		path, journal := writeImage(t, corrupt(img.file, op, page, off, data), img.journal)
		db, err := store.Open(path, store.Options{Journal: journal, LockTimeout: 200 * time.Millisecond})
		if err != nil {
			var ce *cfe.Error
			if !errors.As(err, &ce) || !strings.Contains(ce.Message, path) {
				t.Fatalf("Open: %v, want a *cfe.Error naming the file", err)
			}
			return
		}
		defer db.Close()
		var errs []error
		note := func(err error) {
			if err != nil {
				var ce *cfe.Error
				if !errors.As(err, &ce) {
					t.Fatalf("read: %T %v, want a *cfe.Error", err, err)
				}
				errs = append(errs, err)
			}
		}
		_, err = db.Ranges(ctx)
		note(err)
		_, err = db.RangeStatus(ctx, today)
		note(err)
		_, err = db.Stats(ctx)
		note(err)
		_, err = db.Last(ctx, 100)
		note(err)
		_, err = db.ListByDate(ctx, today, today, 100)
		note(err)
		_, err = db.CountByDate(ctx, today, today)
		note(err)
		_, err = db.PendingOutbox(ctx, 100)
		note(err)
		_, err = db.Rejected(ctx, 100)
		note(err)
		_, err = db.AuditEvents(ctx, 0, 100)
		note(err)
		for _, u := range img.uuids {
			_, err = db.FindByUUID(ctx, u)
			if cfe.ErrorCode(err) != cfe.ENOTFOUND {
				note(err)
			}
		}
		for i := range int64(30) {
			_, err = db.FindByNumber(ctx, cfe.ETicket, "A", i+1)
			if cfe.ErrorCode(err) != cfe.ENOTFOUND {
				note(err)
			}
		}
		for _, err := range errs {
			if errors.Is(err, store.ErrDamaged) && db.Damaged() == nil {
				t.Fatalf("a read answered %v but Damaged() is nil", err)
			}
		}
	})
}
