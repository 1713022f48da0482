//go:build !windows

package store_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/store"
)

// TestOpen_UnfinishedCreation opens the files a power cut during bbolt's
// first write of a new store file can leave (found by the power-cut replay,
// issue 23): they never held anything, so Open makes the store again instead
// of refusing them. Files that committed something are refused as before.
func TestOpen_UnfinishedCreation(t *testing.T) {
	t.Parallel()
	page := os.Getpagesize()
	// fresh is bbolt's first write of a new file: its four pages.
	fresh := func(t *testing.T) []byte {
		path := filepath.Join(t.TempDir(), "nuevo.db")
		bdb, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if err := bdb.Close(); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) != 4*page {
			t.Fatalf("bbolt's new file is %d bytes, want its 4 pages (%d)", len(b), 4*page)
		}
		return b
	}
	// used is a store that committed a CFE, as bytes.
	used := func(t *testing.T) []byte {
		db, path := openStore(t, store.Options{})
		putRanges(t, db, newRange(cfe.ETicket, "A", 1, 100, farAway))
		issue(t, db, cfe.ETicket, "usado")
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) <= 4*page {
			t.Fatalf("a used store is %d bytes: not past bbolt's first 4 pages", len(b))
		}
		return b
	}
	zero := func(b []byte, from, to int) []byte {
		copy(b[from:to], make([]byte, to-from))
		return b
	}
	cases := []struct {
		name    string
		content func(t *testing.T) []byte
		refused string // "" when Open must make a working store
	}{
		{"the state the power-cut replay found (testdata: meta page 1 and half of page 3)", func(t *testing.T) []byte {
			b, err := os.ReadFile(filepath.Join("testdata", "powercut", "unfinished-creation.db"))
			if err != nil {
				t.Fatal(err)
			}
			return b
		}, ""},
		{"zeros only (the name and size reached the disk, no data)", func(*testing.T) []byte { return make([]byte, 4*page) }, ""},
		{"the first pages only (size short)", func(t *testing.T) []byte { return fresh(t)[:3*page] }, ""},
		{"half of the first meta page", func(t *testing.T) []byte { return fresh(t)[:page/2] }, ""},
		{"the second meta page only", func(t *testing.T) []byte { return zero(fresh(t), 0, page) }, ""},
		{"the meta pages without freelist and root", func(t *testing.T) []byte { return zero(fresh(t), 2*page, 4*page) }, ""},
		{"the freelist and root without meta pages", func(t *testing.T) []byte { return zero(fresh(t), 0, 2*page) }, ""},
		{"a used store cut short: refused", func(t *testing.T) []byte { return used(t)[:3*page] }, "está truncado"},
		{"a used store without meta pages: refused", func(t *testing.T) []byte { return zero(used(t), 0, 2*page) }, "está dañado"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "agent.db")
			content := c.content(t)
			if err := os.WriteFile(path, content, 0o600); err != nil {
				t.Fatal(err)
			}
			db, err := store.Open(path, store.Options{})
			if c.refused != "" {
				var ce *cfe.Error
				if !errors.As(err, &ce) || !strings.Contains(ce.Message, c.refused) {
					t.Fatalf("Open: %v, want a refusal saying %q", err, c.refused)
				}
				if got, _ := os.ReadFile(path); !bytes.Equal(got, content) {
					t.Fatal("the refused file was changed")
				}
				return
			}
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer db.Close()
			putRanges(t, db, newRange(cfe.ETicket, "A", 1, 100, farAway))
			if doc := issue(t, db, cfe.ETicket, "primero"); doc.Nro != 1 {
				t.Fatalf("first CFE numbered %d, want 1", doc.Nro)
			}
		})
	}
}
