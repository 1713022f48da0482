package service

import (
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/windows/svc"
)

// TestStateWaiter_check: a pending service is waited for as long as its
// CheckPoint advances within stateWait, and never beyond stateWaitCap.
func TestStateWaiter_check(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 11, 25, 3, 0, 0, 0, time.UTC)
	pending := func(cp uint32) svc.Status { return svc.Status{State: svc.StartPending, CheckPoint: cp} }
	type seen struct {
		after time.Duration
		cp    uint32
	}
	cases := []struct {
		name    string
		seen    []seen
		wantErr string // "" while still waiting after the last one
	}{
		{"no progress within stateWait", []seen{{stateWait, 0}}, ""},
		{"no progress beyond stateWait", []seen{{stateWait + time.Second, 0}}, "without progress"},
		{"progress keeps it waiting", []seen{{25 * time.Second, 1}, {50 * time.Second, 2}, {75 * time.Second, 3}, {100 * time.Second, 3}}, ""},
		{"progress that stops", []seen{{25 * time.Second, 1}, {50 * time.Second, 1}, {56 * time.Second, 1}}, "without progress"},
		{"the cap, progress or not", []seen{{stateWaitCap, 40}, {stateWaitCap + time.Second, 41}}, "after 10m0s"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := newStateWaiter(t0, stateWait)
			var err error
			for i, s := range c.seen {
				if err != nil {
					t.Fatalf("gave up at step %d of %d: %v", i, len(c.seen), err)
				}
				err = w.check(t0.Add(s.after), pending(s.cp))
			}
			switch {
			case c.wantErr == "" && err != nil:
				t.Errorf("gave up: %v", err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Errorf("err = %v, want one with %q", err, c.wantErr)
			}
		})
	}
}
