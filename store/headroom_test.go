//go:build linux

package store_test

import (
	"bytes"
	"errors"
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
	t.Parallel()
	db, path := openStore(t, store.Options{})
	var fs unix.Statfs_t
	if err := unix.Statfs(filepath.Dir(path), &fs); err != nil || fs.Type != unix.EXT4_SUPER_MAGIC {
		// Headroom is on for XFS too, but XFS preallocates past the end of
		// a growing file itself, and this test could not tell the two apart.
		unavailable(t, "the test directory is not on ext4 (statfs type %#x, %v)", fs.Type, err)
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

// TestHeadroom_Disabled checks that with Options.DisableHeadroom the
// committer writes nothing past the data: the file holds no written block
// beyond the pages bbolt uses.
func TestHeadroom_Disabled(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		disable  bool
		wantData bool // written blocks past the data
	}{
		{"on by default", false, true},
		{"off with DisableHeadroom", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			db, path := openStore(t, store.Options{DisableHeadroom: tt.disable})
			var fs unix.Statfs_t
			if err := unix.Statfs(filepath.Dir(path), &fs); err != nil || fs.Type != unix.EXT4_SUPER_MAGIC {
				unavailable(t, "the test directory is not on ext4 (statfs type %#x, %v)", fs.Type, err)
			}
			putRanges(t, db, newRange(cfe.ETicket, "A", 1, 1000, farAway))
			for i := range 50 {
				issue(t, db, cfe.ETicket, fmt.Sprintf("off-%d", i))
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			used := dataEnd(t, path)
			if got := writtenPast(t, path, used); got != tt.wantData {
				t.Errorf("written blocks past the data end %d: %v, want %v", used, got, tt.wantData)
			}
			if n := len(checkFile(t, path)); n != 50 {
				t.Errorf("file holds %d CFEs, want 50", n)
			}
		})
	}
}

// writtenPast reports whether the file at path holds written (allocated)
// blocks at or past offset, by lseek's SEEK_DATA.
func writtenPast(t *testing.T, path string, offset int64) bool {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	_, err = unix.Seek(int(f.Fd()), offset, unix.SEEK_DATA)
	switch {
	case err == nil:
		return true
	case errors.Is(err, unix.ENXIO):
		return false
	}
	t.Fatalf("SEEK_DATA at %d: %v", offset, err)
	return false
}

// TestHeadroom_BboltKeepsALargeEnoughFile pins the bbolt behaviour headroom
// relies on: when a transaction needs pages past the data and the file is
// already large enough (zeros written past the data, as headroom.go does
// through bbolt's own file inside the write transaction), bbolt's grow
// neither truncates nor extends the file, and writes the new pages inside
// the zeros. A bbolt that resized the file would cut the zeros off or leave
// holes, and this test fails.
func TestHeadroom_BboltKeepsALargeEnoughFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "grow.db")
	var file *os.File // bbolt's read-write file, as store.Open captures it
	bdb, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second,
		OpenFile: func(name string, flag int, perm os.FileMode) (*os.File, error) {
			f, err := os.OpenFile(name, flag, perm)
			if err == nil && file == nil && flag&(os.O_WRONLY|os.O_RDWR) != 0 {
				file = f
			}
			return f, err
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	if file == nil {
		t.Fatal("bbolt opened no read-write file through OpenFile")
	}
	value := bytes.Repeat([]byte("x"), 1000)
	put := func(tx *bolt.Tx, from, to int) error {
		b, err := tx.CreateBucketIfNotExists([]byte("data"))
		if err != nil {
			return err
		}
		b.FillPercent = 1.0
		for i := from; i < to; i++ {
			if err := b.Put(fmt.Appendf(nil, "%08d", i), value); err != nil {
				return err
			}
		}
		return nil
	}
	if err := bdb.Update(func(tx *bolt.Tx) error { return put(tx, 0, 100) }); err != nil {
		t.Fatal(err)
	}
	before := fileSize(t, path)

	// Zeros past the file's end, inside the write transaction, before it
	// allocates; then enough new pages to pass the file's old end. The
	// extended size is on no mmap step (a power of two) nor a multiple of
	// bbolt's AllocSize, so any resize by bbolt changes it.
	const extra = 300<<10 + 4096
	var usedBefore, extended int64
	err = bdb.Update(func(tx *bolt.Tx) error {
		usedBefore = tx.Size()
		extended = before + extra
		zeros := make([]byte, extended-usedBefore)
		if _, err := file.WriteAt(zeros, usedBefore); err != nil {
			return err
		}
		return put(tx, 100, 300)
	})
	if err != nil {
		t.Fatal(err)
	}
	var usedAfter int64
	err = bdb.View(func(tx *bolt.Tx) error {
		usedAfter = tx.Size()
		for err := range tx.Check() {
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatalf("bbolt check: %v", err)
	}
	after := fileSize(t, path)
	t.Logf("file %d bytes, zeros to %d, data %d -> %d, file after %d", before, extended, usedBefore, usedAfter, after)
	if usedAfter <= before {
		t.Fatalf("data ends at %d, not past the file's old end %d: the test did not make bbolt grow", usedAfter, before)
	}
	if usedAfter > extended {
		t.Fatalf("data ends at %d, past the zeros (%d): the test wrote too much", usedAfter, extended)
	}
	if after != extended {
		t.Errorf("file is %d bytes after the commit, want %d: bbolt resized a file that was large enough", after, extended)
	}
	if err := bdb.Close(); err != nil {
		t.Fatal(err)
	}
	if after := fileSize(t, path); after != extended {
		t.Errorf("file is %d bytes after Close, want %d", after, extended)
	}

	// Everything reads back after a reopen.
	rdb, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	err = rdb.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("data"))
		if n := b.Stats().KeyN; n != 300 {
			return fmt.Errorf("%d keys after reopen, want 300", n)
		}
		for i := range 300 {
			if v := b.Get(fmt.Appendf(nil, "%08d", i)); !bytes.Equal(v, value) {
				return fmt.Errorf("key %d reads %d bytes, want the value written", i, len(v))
			}
		}
		for err := range tx.Check() {
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
