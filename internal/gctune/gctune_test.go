package gctune_test

import (
	"os"
	"runtime/debug"
	"testing"

	"github.com/cfe-agent/cfe-agent/internal/gctune"
)

// The tests change the process's garbage-collector settings and its
// environment, which every test of the process shares: none runs in
// parallel, and each puts the settings back.

// settings returns the collector's current settings without changing them,
// and restores them when the test ends.
func settings(t *testing.T) (gcPercent int, memoryLimit int64) {
	t.Helper()
	gc := debug.SetGCPercent(-1)
	debug.SetGCPercent(gc)
	return gc, debug.SetMemoryLimit(-1) // -1 reads the limit without changing it
}

func restore(t *testing.T) {
	t.Helper()
	gc, limit := settings(t)
	t.Cleanup(func() { debug.SetGCPercent(gc); debug.SetMemoryLimit(limit) })
}

// unset removes name from the environment for the test.
func unset(t *testing.T, name string) {
	t.Helper()
	t.Setenv(name, "") // restores the original value at the end
	if err := os.Unsetenv(name); err != nil {
		t.Fatal(err)
	}
}

func TestApply(t *testing.T) {
	restore(t)
	unset(t, "GOGC")
	unset(t, "GOMEMLIMIT")
	debug.SetGCPercent(100)
	debug.SetMemoryLimit(1 << 40)
	gctune.Apply()
	if gc, limit := settings(t); gc != 400 || limit != 256<<20 {
		t.Errorf("after Apply: GOGC %d, memory limit %d; want 400 and 256 MiB", gc, limit)
	}
}

// TestApply_userSettings: what the user set in GOGC or GOMEMLIMIT stays.
func TestApply_userSettings(t *testing.T) {
	restore(t)
	t.Setenv("GOGC", "150")
	t.Setenv("GOMEMLIMIT", "1GiB")
	debug.SetGCPercent(150)
	debug.SetMemoryLimit(1 << 30)
	gctune.Apply()
	if gc, limit := settings(t); gc != 150 || limit != 1<<30 {
		t.Errorf("after Apply with GOGC and GOMEMLIMIT set: GOGC %d, memory limit %d; want them unchanged", gc, limit)
	}

	unset(t, "GOMEMLIMIT") // only GOGC given: the limit is still the agent's
	gctune.Apply()
	if gc, limit := settings(t); gc != 150 || limit != 256<<20 {
		t.Errorf("after Apply with only GOGC set: GOGC %d, memory limit %d; want 150 and 256 MiB", gc, limit)
	}
}
