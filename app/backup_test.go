package app

import (
	"testing"
	"time"
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
