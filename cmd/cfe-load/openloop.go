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

// job is one request of the timetable.
type job struct {
	index int
	due   time.Time
}

// runOpenLoop sends the requests of sched over conns connections: a
// dispatcher hands each request to a free connection at its due time (or, if
// none is free then, as soon as one is), and do sends it. do reports the
// request's outcome, its latency measured from the moment it was called.
// runOpenLoop then sets on each sample its due time and start delay (called
// minus due), and counts its latency from its due time. The samples are by connection, in the
// order each sent them. No request is dispatched after ctx ends; those sent
// finish.
func runOpenLoop(ctx context.Context, sched schedule, conns int, do func() sample) [][]sample {
	jobs := make(chan job)
	perConn := make([][]sample, conns)
	var wg sync.WaitGroup
	for c := range perConn {
		wg.Go(func() {
			for j := range jobs {
				started := time.Now()
				s := do()
				s.due, s.delay = j.due, started.Sub(j.due)
				s.latency += s.delay
				perConn[c] = append(perConn[c], s)
			}
		})
	}
	dispatch(ctx, sched, jobs)
	close(jobs)
	wg.Wait()
	return perConn
}

// dispatch sends every job of sched on jobs at its due time, or as soon after
// as a connection takes it; it stops early when ctx ends.
func dispatch(ctx context.Context, sched schedule, jobs chan<- job) {
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for i := range sched.count {
		j := job{index: i, due: sched.due(i)}
		if wait := time.Until(j.due); wait > 0 {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				return
			case <-timer.C:
			}
		}
		select {
		case <-ctx.Done():
			return
		case jobs <- j:
		}
	}
}
