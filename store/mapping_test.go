package store_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/store"
)

// TestOpen_Restarts: clean restarts keep the file's size when no data was
// added, and start fast (verified.go). bbolt maps room past the data for a
// fast start, and on Windows its mapping makes the file as large: room asked
// from the file's size made it grow at every restart (1 MiB, 512 MiB, 1 GiB,
// 2 GiB) and never match its record again (mapping.go). Under Wine the first
// subtest runs the Windows rules for real; elsewhere the second emulates
// bbolt's Windows mapping.
func TestOpen_Restarts(t *testing.T) {
	t.Parallel()
	// CFEs committed at each of the restarts.
	commits := []int{0, 0, 0, 100, 0, 0}
	for _, tc := range []struct {
		name    string
		windows bool
	}{
		{"as bbolt maps on this system", false},
		{"as bbolt maps on Windows", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var rules store.Options
			if tc.windows {
				var emulated bool
				if rules, emulated = store.EmulateWindowsMapping(rules); !emulated {
					t.Skip("on Windows bbolt extends the file to its mapping itself: the other subtest runs the Windows rules")
				}
			}
			path, journal := verifiedStore(t, rules)
			rules.Journal = journal
			sizes := make([]int64, len(commits))
			for i, n := range commits {
				db, err := store.Open(path, rules)
				if err != nil {
					t.Fatalf("restart %d: %v", i, err)
				}
				if !store.StartedFast(db) {
					t.Errorf("restart %d: Open checked the whole file at start after a verified clean close", i)
				}
				for j := range n {
					issue(t, db, cfe.ETicket, fmt.Sprintf("restart-%d-%03d", i, j))
				}
				store.WaitChecked(t, db)
				if err := db.Damaged(); err != nil {
					t.Fatalf("restart %d: the background check: %v", i, err)
				}
				if err := db.Close(); err != nil {
					t.Fatal(err)
				}
				wantRecord(t, path, true)
				fi, err := os.Stat(path)
				if err != nil {
					t.Fatal(err)
				}
				sizes[i] = fi.Size()
				// bbolt's own allocation: its mapping (a power of two) or
				// its 16 MiB growth step, the Windows room (16 MiB here)
				// and the headroom's zeros (up to 4 MiB) all fit.
				data := dataSize(t, path)
				if limit := 2 * (data + 16<<20); sizes[i] > limit {
					t.Errorf("restart %d: the file is %d bytes for %d bytes of data (more than %d)", i, sizes[i], data, limit)
				}
				if i > 0 && n == 0 && commits[i-1] == 0 && sizes[i] != sizes[i-1] {
					t.Errorf("restart %d without new data: the file went from %d to %d bytes", i, sizes[i-1], sizes[i])
				}
			}
			t.Logf("file sizes after each restart: %v", sizes)
		})
	}
}

// TestOpen_VerifiedWindowsRules runs TestOpen_Verified's cases with bbolt's
// Windows mapping emulated (the killed helper process of one case keeps this
// system's rules): the fast start, commits during the background check, and
// every way back to the whole check at start hold under the Windows rules.
func TestOpen_VerifiedWindowsRules(t *testing.T) {
	t.Parallel()
	rules, emulated := store.EmulateWindowsMapping(store.Options{})
	if !emulated {
		t.Skip("on Windows TestOpen_Verified runs the Windows rules for real")
	}
	testOpenVerified(t, rules)
}
