package store_test

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/store"
)

// TestDB_WriteHealth fills the small real filesystem of a store and commits:
// once with the numbering journal needing a write (JournalBlock 1), once
// without a journal and with a CFE whose record does not fit in the commit
// log's written zeros (random text: it does not compress), so that the log
// file must grow.
// The commit fails with a retryable 99 that says the disk is full, consumes
// no number, and WriteHealth remembers it until a commit succeeds after the
// space is freed.
func TestDB_WriteHealth(t *testing.T) {
	t.Parallel()
	clock := time.Date(2026, time.March, 10, 15, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		journal bool
		xmlPad  int
	}{
		{"journal write fails", true, 0},
		{"commit log write fails", false, 1 << 20},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := testtool.MountTmpfs(t, "8m")
			opts := store.Options{Now: func() time.Time { return clock }}
			if tc.journal {
				opts.Journal, opts.JournalBlock = filepath.Join(dir, "journal.json"), 1
			}
			db, err := store.Open(filepath.Join(dir, "agent.db"), opts)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = db.Close() })
			putRanges(t, db, newRange(cfe.ETicket, "A", 1, 1000, cfe.Date{Year: 2027, Month: time.March, Day: 31}))
			issue(t, db, cfe.ETicket, "u-0")
			if h := db.WriteHealth(); h != (store.WriteHealth{Dir: dir}) {
				t.Fatalf("WriteHealth after a commit = %+v", h)
			}
			if free, total, err := store.FreeSpace(dir); err != nil || total != 8<<20 || free == 0 || free >= total {
				t.Fatalf("FreeSpace(%s) = %d of %d, %v", dir, free, total, err)
			}

			filler := testtool.FillDisk(t, dir)
			if free, _, err := store.FreeSpace(dir); err != nil || free >= 64<<10 {
				t.Fatalf("FreeSpace of the full disk = %d, %v", free, err)
			}
			r := reserve(t, db, cfe.ETicket)
			doc := issuedFor(r, "u-1", signAt)
			if tc.xmlPad > 0 {
				noise := make([]byte, tc.xmlPad)
				_, _ = rand.Read(noise)
				doc.XML = append(doc.XML, "<!--"+base64.StdEncoding.EncodeToString(noise)+"-->"...)
			}
			ce := wantCode(t, db.Commit(ctx, r, doc), cfe.EUNAVAILABLE)
			if ce.Respuesta != cfe.RespErrorInterno || !errors.Is(ce, syscall.ENOSPC) ||
				!strings.HasPrefix(ce.Message, "no se pudo guardar el comprobante: el disco está lleno ("+dir+")") {
				t.Fatalf("Commit on a full disk: %#v", ce)
			}
			h := db.WriteHealth()
			if h.Dir != dir || h.LastError != "el disco está lleno" || !h.LastErrorAt.Equal(clock) || !errors.Is(h.Cause, syscall.ENOSPC) {
				t.Fatalf("WriteHealth after the failed commit = %+v", h)
			}

			if err := os.Remove(filler); err != nil {
				t.Fatal(err)
			}
			if h := db.WriteHealth(); h.LastError == "" {
				t.Fatal("freeing space cleared the failure before any commit")
			}
			r2 := reserve(t, db, cfe.ETicket)
			if r2.Nro != r.Nro {
				t.Fatalf("after the failed commit the next number is %d, want %d again: nothing is consumed", r2.Nro, r.Nro)
			}
			if err := db.Commit(ctx, r2, issuedFor(r2, "u-1", signAt)); err != nil {
				t.Fatalf("Commit with space freed: %v", err)
			}
			if h := db.WriteHealth(); h != (store.WriteHealth{Dir: dir}) {
				t.Fatalf("WriteHealth after a successful commit = %+v", h)
			}
		})
	}
}
