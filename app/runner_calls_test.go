package app

import (
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// TestRunner_callsDuringReopen: the tray's in-process calls (State here)
// run while the tray switches the profile from another goroutine, and each
// switch reopens the agent. A reopen waits for the calls that use the old
// session before it closes its store, so every report reads the store
// (without the wait, a report that reads it after the close says "no se
// pudo leer el estado del agente"; under -race the closing and the reading
// are also reported). The switches fall at random points of the calls: before
// the wait, most runs of this test failed, not all.
func TestRunner_callsDuringReopen(t *testing.T) {
	r := openTestRunner(t)

	stop := make(chan struct{})
	var reports atomic.Int64
	var callers sync.WaitGroup
	failures := make(chan string, 4)
	for range 2 {
		callers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				rep, err := r.State(context.Background())
				if err != nil {
					failures <- err.Error()
					return
				}
				b, err := json.Marshal(rep)
				if err != nil {
					failures <- err.Error()
					return
				}
				if strings.Contains(string(b), "no se pudo leer el estado") {
					failures <- string(b)
					return
				}
				reports.Add(1)
			}
		})
	}
	const switches = 50
	for i := range switches {
		// Let the callers run on the session this switch closes.
		for n := reports.Load(); reports.Load() < n+3; {
			select {
			case f := <-failures:
				close(stop)
				callers.Wait()
				t.Fatalf("a report during switch %d failed: %s", i+1, f)
			default:
				runtime.Gosched()
			}
		}
		if err := r.UseProfile("sandbox"); err != nil {
			t.Fatalf("switch %d: %v", i+1, err)
		}
	}
	close(stop)
	callers.Wait()
	close(failures)
	for f := range failures {
		t.Errorf("a report during a switch failed: %s", f)
	}
	t.Logf("%d reports during %d switches", reports.Load(), switches)
}

// TestRunner_hold: while a call holds the session, a reopen that has begun
// (it holds r.mu) leaves the session's store open and does not finish; it
// finishes once the call releases the session.
func TestRunner_hold(t *testing.T) {
	r := openTestRunner(t)
	s, _, release, err := r.hold()
	if err != nil {
		t.Fatal(err)
	}
	reopened := make(chan error, 1)
	go func() { reopened <- r.UseProfile("sandbox") }()
	for r.mu.TryLock() { // wait until the reopen has the lock
		r.mu.Unlock()
		runtime.Gosched()
	}
	for range 20 {
		if _, err := s.a.DB.Stats(context.Background()); err != nil {
			release()
			t.Fatalf("the held session's store during the reopen: %v", err)
		}
	}
	select {
	case err := <-reopened:
		t.Errorf("the reopen finished (%v) while a call held the session", err)
	default:
	}
	release()
	if err := <-reopened; err != nil {
		t.Fatal(err)
	}
	if _, err := s.a.DB.Stats(context.Background()); err == nil {
		t.Error("the old session's store is still open after the reopen")
	}
	cur, err := r.current()
	if err != nil || cur == s {
		t.Errorf("after the reopen: session %p (the old one %p), %v", cur, s, err)
	}
}
