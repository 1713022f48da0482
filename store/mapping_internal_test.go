package store

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// TestVerifiedRecord_MatchesOpened: after the lock, the Windows rules accept
// what bbolt's own open on Windows does to the file (a later modification
// time, a file extended to the mapping) and nothing else; the other rules
// accept no change at all.
func TestVerifiedRecord_MatchesOpened(t *testing.T) {
	t.Parallel()
	put := func(t *testing.T, path, key string) {
		t.Helper()
		bdb, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		err = bdb.Update(func(tx *bolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists([]byte("b"))
			if err != nil {
				return err
			}
			return b.Put([]byte(key), []byte("v"))
		})
		if cerr := bdb.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	resize := func(delta int64) func(*testing.T, string) {
		return func(t *testing.T, path string) {
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(path, fi.Size()+delta); err != nil {
				t.Fatal(err)
			}
			later := fi.ModTime().Add(time.Second)
			if err := os.Chtimes(path, later, later); err != nil {
				t.Fatal(err)
			}
		}
	}
	tests := []struct {
		name            string
		change          func(*testing.T, string)
		windows, others bool // matchesOpened under each rule
	}{
		{"unchanged", func(*testing.T, string) {}, true, true},
		{"end rewritten at the same size (a later time)", resize(0), true, false},
		{"extended to a larger mapping", resize(1 << 20), true, false},
		{"shortened", resize(-4096), false, false},
		{"a commit by another process", func(t *testing.T, path string) { put(t, path, "other") }, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "agent.db")
			put(t, path, "first")
			rec, ok := fileState(path)
			if !ok {
				t.Fatal("fileState of a new bbolt file failed")
			}
			tc.change(t, path)
			for _, rule := range []struct {
				windows bool
				want    bool
			}{{true, tc.windows}, {false, tc.others}} {
				if got := rec.matchesOpened(path, rule.windows); got != rule.want {
					t.Errorf("matchesOpened with Windows rules %v = %v, want %v", rule.windows, got, rule.want)
				}
			}
		})
	}
}

// TestInitialMmapSize: a full start maps the file as it is; a fast one asks
// for the recorded size + backgroundCheckRoom where the mapping leaves the
// file alone, and for the data's end + windowsCheckRoom where it does not,
// whatever the file's size.
func TestInitialMmapSize(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "agent.db")
	bdb, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	var data int64
	err = bdb.View(func(tx *bolt.Tx) error { data = tx.Size(); return nil })
	if cerr := bdb.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, 64<<20); err != nil { // a file a mapping made large
		t.Fatal(err)
	}
	known := verifiedRecord{Size: 64 << 20}
	tests := []struct {
		name          string
		windows, fast bool
		want          int
	}{
		{"full start", false, false, 0},
		{"full start, Windows rules", true, false, 0},
		{"fast start", false, true, 64<<20 + backgroundCheckRoom},
		{"fast start, Windows rules", true, true, int(data) + boltAllocSize},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := initialMmapSize(path, known, tc.fast, tc.windows); got != tc.want {
				t.Errorf("initialMmapSize = %d, want %d (data %d)", got, tc.want, data)
			}
		})
	}
}

// TestWindowsCheckRoom: an eighth of the data, between bbolt's growth step
// and backgroundCheckRoom.
func TestWindowsCheckRoom(t *testing.T) {
	t.Parallel()
	tests := []struct{ data, want int64 }{
		{0, boltAllocSize},
		{64 << 20, boltAllocSize},
		{1 << 30, 128 << 20},
		{8 << 30, backgroundCheckRoom},
	}
	for _, tc := range tests {
		if got := windowsCheckRoom(tc.data); got != tc.want {
			t.Errorf("windowsCheckRoom(%d) = %d, want %d", tc.data, got, tc.want)
		}
	}
}
