//go:build linux

package store_test

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/sys/unix"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/store"
)

// TestHeadroom_CommitsWriteIntoAllocatedBlocks checks that the file holds
// written blocks, not a hole, past the data the commits wrote, and that the
// zeros there leave the file consistent and complete after a reopen.
func TestHeadroom_CommitsWriteIntoAllocatedBlocks(t *testing.T) {
	db, path := openStore(t, store.Options{})
	var fs unix.Statfs_t
	if err := unix.Statfs(filepath.Dir(path), &fs); err != nil || fs.Type != unix.EXT4_SUPER_MAGIC {
		// Headroom is on for XFS too, but XFS preallocates past the end of
		// a growing file itself, and this test could not tell the two apart.
		t.Skipf("the test directory is not on ext4 (statfs type %#x, %v)", fs.Type, err)
	}
	putRanges(t, db, newRange(cfe.ETicket, "A", 1, 100000, farAway))
	const n = 600
	docs := make([]*cfe.Issued, 0, n)
	for i := range n {
		docs = append(docs, issue(t, db, cfe.ETicket, fmt.Sprintf("room-%d", i)))
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	used := dataEnd(t, path)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	size, allocated := fi.Size(), fi.Sys().(*syscall.Stat_t).Blocks*512
	t.Logf("data %d bytes, file %d bytes, allocated %d bytes", used, size, allocated)
	if size <= used {
		t.Errorf("file is %d bytes for %d bytes of data: no written space past the data", size, used)
	}
	if allocated < size {
		t.Errorf("only %d of the file's %d bytes are allocated: commits write into holes", allocated, size)
	}

	byNumber := checkFile(t, path)
	if len(byNumber) != n {
		t.Fatalf("file holds %d CFEs, want %d", len(byNumber), n)
	}
	db, err = store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, want := range docs {
		got, err := db.FindByUUID(ctx, want.UUID)
		if err != nil {
			t.Fatalf("FindByUUID %s after reopen: %v", want.UUID, err)
		}
		sameIssued(t, got, want)
	}
	issue(t, db, cfe.ETicket, "room-after-reopen")
}

// dataEnd returns where the data of the bbolt file at path ends, after
// checking the file's consistency with bbolt's own check.
func dataEnd(t *testing.T, path string) int64 {
	t.Helper()
	bdb, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	var used int64
	err = bdb.View(func(tx *bolt.Tx) error {
		used = tx.Size()
		for err := range tx.Check() {
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatalf("bbolt check: %v", err)
	}
	return used
}
