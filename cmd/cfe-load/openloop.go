package main

import (
	"context"
	"math"
	"sync"
	"time"
)

// The open-loop mode (-rate) sends requests on a timetable, as cashiers do,
// whatever the agent's answers: request i is due rate·i seconds after the
// start, whether or not earlier ones have been answered. A free connection
// takes the next due request; when none is free, the request waits for one.
// Its latency is counted from the time it was due, not from the time it was
// sent, so that a stall of the agent shows in the latency of every request it
// delayed instead of silently thinning the load (coordinated omission).

// lateAfter is how long after its due time a request may start and still
// count as on time: timers and the scheduler wake a goroutine a few tens of
// microseconds late on an idle machine; a request that waits for a free
// connection waits longer.
const lateAfter = time.Millisecond

// schedule is an open-loop timetable: count requests, request i due at
// start + i/rate seconds.
type schedule struct {
	start time.Time
	rate  float64 // requests per second, > 0
	count int
}

// newSchedule plans the requests of a run of the given rate that starts at
// start: every request due before start+duration, but no more than total
// when total > 0.
func newSchedule(start time.Time, rate float64, duration time.Duration, total int) schedule {
	// The requests due before the end are those with i/rate < duration;
	// the small epsilon keeps 10/s over 1 s at 10 requests despite rounding.
	n := int(math.Ceil(duration.Seconds()*rate - 1e-9))
	if total > 0 {
		n = min(n, total)
	}
	return schedule{start: start, rate: rate, count: max(n, 0)}
}

// due is when request i should start.
func (s schedule) due(i int) time.Time {
	return s.start.Add(time.Duration(math.Round(float64(i) * float64(time.Second) / s.rate)))
}

// runOpenLoop sends the requests of sched over conns connections. A free
// connection takes the next request of the timetable and sends it at its due
// time (at once when that has passed: the request waited for a connection);
// do sends it and reports its outcome, with its latency measured from the
// moment do was called. runOpenLoop then sets on each sample its due time and
// start delay (called minus due), and counts its latency from its due time.
// The samples are by connection, in the order each sent them. No request
// starts after ctx ends; those sent finish. wait blocks until a due time and
// reports false when ctx ended first (waitUntil; tests pass timerWait).
//
// Each connection waits for its own request's due time, rather than a
// dispatcher handing requests out: one goroutine fewer to wake on the way,
// and so less of the load tool's own scheduling in the latencies.
func runOpenLoop(ctx context.Context, sched schedule, conns int, wait waitFunc, do func() sample) [][]sample {
	var mu sync.Mutex
	next := 0
	take := func() (time.Time, bool) {
		mu.Lock()
		defer mu.Unlock()
		if next >= sched.count || ctx.Err() != nil {
			return time.Time{}, false
		}
		next++
		return sched.due(next - 1), true
	}
	perConn := make([][]sample, conns)
	var wg sync.WaitGroup
	for c := range perConn {
		wg.Go(func() {
			for {
				due, ok := take()
				if !ok || !wait(ctx, due) {
					return
				}
				started := time.Now()
				s := do()
				s.due, s.delay = due, started.Sub(due)
				s.latency += s.delay
				perConn[c] = append(perConn[c], s)
			}
		})
	}
	wg.Wait()
	return perConn
}

// waitFunc blocks until due, or until ctx ends: then it reports false.
type waitFunc func(ctx context.Context, due time.Time) bool

// timerWait waits with a runtime timer. On Linux a Go process with nothing
// else to do sleeps in epoll_pwait, whose timeout is in whole milliseconds
// (runtime/netpoll_epoll.go): such a timer fires up to a millisecond late,
// half a millisecond on average.
func timerWait(ctx context.Context, due time.Time) bool {
	d := time.Until(due)
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// preciseWithin is the last stretch before a due time that waitUntil sleeps
// in the kernel rather than on a runtime timer.
const preciseWithin = 3 * time.Millisecond

// waitUntil waits on a runtime timer until preciseWithin before due (so that
// ctx can stop it), then sleeps the rest in the kernel (sleepPrecisely), so
// that requests start on time rather than up to a millisecond late.
func waitUntil(ctx context.Context, due time.Time) bool {
	if !timerWait(ctx, due.Add(-preciseWithin)) {
		return false
	}
	if d := time.Until(due); d > 0 {
		sleepPrecisely(d)
	}
	return ctx.Err() == nil
}
