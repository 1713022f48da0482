package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestLockInstance_windows: the named mutex of a data directory is taken
// once; the same directory spelled in other letter case is the same
// directory; after release it can be taken again; another directory has its
// own.
func TestLockInstance_windows(t *testing.T) {
	// Only the path names the mutex: no directory is created (and Wine 8
	// cannot remove t.TempDir's).
	dir := fmt.Sprintf(`C:\cfe-agent-test\%s-%d`, t.Name(), time.Now().UnixNano())
	release, err := lockInstance(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lockInstance(strings.ToUpper(dir)); !errors.Is(err, errInstanceHeld) {
		t.Fatalf("second lock of %s: %v, want errInstanceHeld", dir, err)
	}
	other, err := lockInstance(filepath.Join(dir, "otra"))
	if err != nil {
		t.Fatalf("another directory: %v", err)
	}
	other()
	release()
	again, err := lockInstance(dir)
	if err != nil {
		t.Fatalf("after release: %v", err)
	}
	again()
}
