package testtool

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

func TestWaitUntil(t *testing.T) {
	t.Parallel()
	t.Run("holds once another goroutine sets it", func(t *testing.T) {
		t.Parallel()
		var set atomic.Bool
		go set.Store(true)
		if !WaitUntil(t, time.Minute, set.Load) {
			t.Fatal("WaitUntil reported false for a condition set by another goroutine")
		}
	})
	t.Run("reports false once the time given passes", func(t *testing.T) {
		t.Parallel()
		calls := 0
		if WaitUntil(t, 50*time.Millisecond, func() bool { calls++; return false }) {
			t.Fatal("WaitUntil reported true for a condition that never holds")
		}
		if calls < 2 {
			t.Errorf("the condition was checked %d times, want it checked again before giving up", calls)
		}
	})
}

func TestSyncBuffer_Await(t *testing.T) {
	t.Parallel()
	t.Run("returns once a write makes it match", func(t *testing.T) {
		t.Parallel()
		var b SyncBuffer
		fmt.Fprint(&b, "starting\n")
		go func() { fmt.Fprint(&b, "listening on http://127.0.0.1:1\n") }()
		got, ok := b.Await(nil, time.Minute, func(s string) bool { return len(s) > len("starting\n") })
		if !ok || got != "starting\nlistening on http://127.0.0.1:1\n" {
			t.Fatalf("Await = %q, %v; want both lines and true", got, ok)
		}
	})
	t.Run("ends when stop is closed", func(t *testing.T) {
		t.Parallel()
		var b SyncBuffer
		stop := make(chan struct{})
		close(stop)
		if got, ok := b.Await(stop, time.Minute, func(s string) bool { return s != "" }); ok || got != "" {
			t.Fatalf("Await = %q, %v; want nothing and false", got, ok)
		}
	})
	t.Run("ends when the time given passes", func(t *testing.T) {
		t.Parallel()
		var b SyncBuffer
		fmt.Fprint(&b, "a")
		if got, ok := b.Await(nil, 10*time.Millisecond, func(s string) bool { return s == "ab" }); ok || got != "a" {
			t.Fatalf("Await = %q, %v; want \"a\" and false", got, ok)
		}
	})
	t.Run("Next is closed by the next write, not an earlier one", func(t *testing.T) {
		t.Parallel()
		var b SyncBuffer
		fmt.Fprint(&b, "before")
		next := b.Next()
		select {
		case <-next:
			t.Fatal("Next's channel is closed before any write after it")
		default:
		}
		fmt.Fprint(&b, "after")
		select {
		case <-next:
		default:
			t.Fatal("Next's channel is open after a write")
		}
	})
}
