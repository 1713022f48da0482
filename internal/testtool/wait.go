package testtool

import (
	"testing"
	"time"
)

// pollEvery is how often WaitUntil checks its condition.
const pollEvery = 20 * time.Millisecond

// deadlineMargin is kept between WaitUntil's end and the test binary's own
// deadline (go test -timeout), so that the caller's failure, which says what
// it waited for, is reported instead of the binary's panic.
const deadlineMargin = 5 * time.Second

// WaitUntil is a poll with a deadline, for state a test can read but is not
// told of (a process's /state, a D-Bus property, a file another process
// writes): it checks cond at once, then every 20 ms, and reports whether cond
// held within the time given (never past the test's own deadline, less a
// margin). The caller says what it waited for when WaitUntil reports false.
// cond runs on the caller's goroutine: it may fail the test.
func WaitUntil(t testing.TB, within time.Duration, cond func() bool) bool {
	t.Helper()
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if end, ok := d.Deadline(); ok {
			within = min(within, max(time.Until(end)-deadlineMargin, 0))
		}
	}
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline.C:
			return cond()
		case <-tick.C:
		}
	}
	return true
}
