package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/profiles"
	"github.com/cfe-agent/cfe-agent/store"
)

func TestBackupName(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 25, 1, 30, 5, 123e6, time.UTC)
	for _, auto := range []bool{false, true} {
		name := BackupName("caja1", at, auto)
		got, ok := BackupTime("caja1", name, auto)
		if !ok || !got.Equal(at) {
			t.Fatalf("BackupTime(%s) = %v %v, want %v", name, got, ok, at)
		}
		if _, ok := BackupTime("caja1", name, !auto); ok {
			t.Fatalf("%s read as automatic=%v too", name, !auto)
		}
		if _, ok := BackupTime("caja", name, auto); ok {
			t.Fatalf("%s read as a backup of profile caja", name)
		}
	}
	// Names sort by time, which rotation relies on.
	if a, b := BackupName("p", at, true), BackupName("p", at.Add(time.Millisecond), true); a >= b {
		t.Fatalf("%s does not sort before %s", a, b)
	}
}

// TestBackupManager_everyN: with backup.every_n at 3 and a period of a
// day, the automatic backups after the one at start follow the store's
// commits: each one is taken after 3 more CFEs are committed, signed by the
// issuer itself (no one tells the manager), and holds them; a replayed
// request, which commits nothing, does not count.
func TestBackupManager_everyN(t *testing.T) {
	t.Parallel()
	folder := t.TempDir()
	a := newTestAgent(t, func(p *profiles.Profile) {
		p.Backup = profiles.Backup{Folder: folder, EveryN: 3, Period: 24 * time.Hour}
	})
	m := newBackupManager(a, a.Log)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); m.Run(ctx) }()
	defer func() { cancel(); <-done }()

	backups := func() []int { // CFEs in each automatic backup, oldest first
		entries, err := os.ReadDir(folder)
		if err != nil {
			t.Fatal(err)
		}
		var out []int
		for _, e := range entries {
			if _, ok := BackupTime(a.Name, e.Name(), true); !ok {
				continue
			}
			info, err := store.VerifyBackup(filepath.Join(folder, e.Name()), CopyChecks)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, info.Counts.CFEs)
		}
		return out
	}
	waitFor(t, "the backup at start", func() bool { return len(backups()) == 1 })

	for i := range 3 {
		sign(t, a, fmt.Sprintf("copia-%d", i), 100+i)
	}
	waitFor(t, "a backup after 3 CFEs", func() bool { return len(backups()) == 2 })
	sign(t, a, "copia-0", 100) // a replay: nothing committed
	for i := 3; i < 6; i++ {
		sign(t, a, fmt.Sprintf("copia-%d", i), 100+i)
	}
	waitFor(t, "a backup after 3 more CFEs", func() bool { return len(backups()) == 3 })
	if got := backups(); !slices.Equal(got, []int{0, 3, 6}) {
		t.Fatalf("automatic backups hold %v CFEs, want [0 3 6]", got)
	}
	if st := m.Status(); st.LastError != "" || !st.Automatic || st.EveryN != 3 {
		t.Fatalf("status %+v", st)
	}
}
