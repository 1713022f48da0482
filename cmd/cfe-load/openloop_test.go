package main

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func TestNewSchedule(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 11, 25, 2, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		rate      float64
		duration  time.Duration
		total     int
		wantCount int
		wantDue   map[int]time.Duration // index → due time after start
	}{
		{"10/s for 1 s", 10, time.Second, 0, 10, map[int]time.Duration{0: 0, 1: 100 * time.Millisecond, 9: 900 * time.Millisecond}},
		{"50/s for 30 s", 50, 30 * time.Second, 0, 1500, map[int]time.Duration{1: 20 * time.Millisecond, 1499: 29980 * time.Millisecond}},
		{"-n bounds the plan", 50, 30 * time.Second, 7, 7, map[int]time.Duration{6: 120 * time.Millisecond}},
		{"-n larger than the plan", 10, time.Second, 100, 10, nil},
		{"a part of a period counts", 3, 1100 * time.Millisecond, 0, 4, map[int]time.Duration{3: time.Second}},
		{"a rate below one per duration", 0.5, time.Second, 0, 1, map[int]time.Duration{0: 0}},
		{"uneven periods round to the nanosecond", 3, time.Second, 0, 3, map[int]time.Duration{1: 333333333, 2: 666666667}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSchedule(start, tt.rate, tt.duration, tt.total)
			if s.count != tt.wantCount {
				t.Errorf("count = %d, want %d", s.count, tt.wantCount)
			}
			for i, want := range tt.wantDue {
				if got := s.due(i).Sub(start); got != want {
					t.Errorf("due(%d) = start+%s, want start+%s", i, got, want)
				}
			}
			for i := 1; i < s.count; i++ {
				if !s.due(i).After(s.due(i - 1)) {
					t.Fatalf("due(%d) = %s is not after due(%d)", i, s.due(i), i-1)
				}
			}
		})
	}
}

// TestRunOpenLoop runs the open loop in a synctest bubble, whose clock moves
// only when every goroutine waits: the service times below are exact, and so
// are the latencies and start delays expected.
func TestRunOpenLoop(t *testing.T) {
	t.Parallel()
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	tests := []struct {
		name    string
		rate    float64
		conns   int
		service []time.Duration // of each request, in the order sent
		// By request, in order of due time: latency from the due time, and
		// start delay.
		wantLatency, wantDelay []time.Duration
		wantLate               int
	}{
		{
			// 10 ms apart; the first takes 35 ms on the only connection:
			// the next three are due at 10, 20 and 30 ms and start at 35.
			name: "a stall on one connection delays the requests due during it",
			rate: 100, conns: 1, service: []time.Duration{ms(35), 0, 0, ms(2), ms(1)},
			wantLatency: []time.Duration{ms(35), ms(25), ms(15), ms(7), ms(1)},
			wantDelay:   []time.Duration{0, ms(25), ms(15), ms(5), 0},
			wantLate:    3,
		},
		{
			// The same stall with a second connection: only one request
			// is due while the first holds its connection, and it finds the
			// other free.
			name: "a second connection absorbs the stall",
			rate: 100, conns: 2, service: []time.Duration{ms(35), ms(30), ms(5), 0, 0},
			// 0: 0–35; 1: 10–40; 2 due 20, starts 35 (first free) – 40;
			// 3 due 30, starts 40 – 40; 4 due 40, starts 40 – 40.
			wantLatency: []time.Duration{ms(35), ms(30), ms(20), ms(10), 0},
			wantDelay:   []time.Duration{0, 0, ms(15), ms(10), 0},
			wantLate:    2,
		},
		{
			name: "answers faster than the rate: nothing is late",
			rate: 50, conns: 4, service: []time.Duration{ms(3), ms(3), ms(3), ms(3)},
			wantLatency: []time.Duration{ms(3), ms(3), ms(3), ms(3)},
			wantDelay:   []time.Duration{0, 0, 0, 0},
		},
		{
			// A start exactly lateAfter after the due time is on time.
			name: "late means more than lateAfter",
			rate: 1000, conns: 1, service: []time.Duration{ms(2), ms(1), 0},
			wantLatency: []time.Duration{ms(2), ms(2), ms(1)},
			wantDelay:   []time.Duration{0, ms(1), ms(1)},
			wantLate:    0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sched := newSchedule(time.Now(), tt.rate, time.Minute, len(tt.service))
				var mu sync.Mutex
				sent := 0
				do := func() sample {
					mu.Lock()
					d := tt.service[sent]
					sent++
					mu.Unlock()
					start := time.Now()
					// The service time under test, on synctest's clock:
					// no wall-clock wait.
					time.Sleep(d)
					return sample{latency: time.Since(start), answered: true}
				}
				perConn := runOpenLoop(t.Context(), sched, tt.conns, timerWait, do)
				if len(perConn) != tt.conns {
					t.Fatalf("%d connections' samples, want %d", len(perConn), tt.conns)
				}
				var all []sample
				for _, samples := range perConn {
					all = append(all, samples...)
				}
				slices.SortFunc(all, func(a, b sample) int { return a.due.Compare(b.due) })
				var gotLatency, gotDelay []time.Duration
				for _, s := range all {
					if s.due.IsZero() {
						t.Errorf("sample %+v not marked as scheduled", s)
					}
					gotLatency = append(gotLatency, s.latency)
					gotDelay = append(gotDelay, s.delay)
				}
				if !reflect.DeepEqual(gotLatency, tt.wantLatency) {
					t.Errorf("latencies from the due times = %v, want %v", gotLatency, tt.wantLatency)
				}
				if !reflect.DeepEqual(gotDelay, tt.wantDelay) {
					t.Errorf("start delays = %v, want %v", gotDelay, tt.wantDelay)
				}
				if s := summarize(perConn); s.late != tt.wantLate || s.requests != len(tt.service) {
					t.Errorf("summary: %d requests, %d late; want %d, %d", s.requests, s.late, len(tt.service), tt.wantLate)
				}
			})
		})
	}

	t.Run("no request is dispatched after the context ends", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			sched := newSchedule(time.Now(), 10, time.Minute, 0) // 600 planned
			var mu sync.Mutex
			sent := 0
			go func() {
				// The cancel's moment is the subject, on synctest's clock
				// (no wall-clock wait): requests are due at 0, 100 and 200 ms.
				time.Sleep(250 * time.Millisecond)
				cancel()
			}()
			perConn := runOpenLoop(ctx, sched, 2, timerWait, func() sample {
				mu.Lock()
				sent++
				mu.Unlock()
				return sample{answered: true}
			})
			if sent != 3 || len(perConn[0])+len(perConn[1]) != 3 {
				t.Errorf("%d requests sent, want the 3 due before the cancel", sent)
			}
		})
	})
}

// TestRunLoad_OpenLoop loads an HTTP server at a rate over real loopback
// connections: the plan is kept (every request sent once, on distinct
// uuids), and at most -c connections are opened.
func TestRunLoad_OpenLoop(t *testing.T) {
	t.Parallel()
	srv := &numberingServer{uuids: map[string]int{}}
	ts := httptest.NewUnstartedServer(srv)
	var mu sync.Mutex
	conns := map[string]bool{}
	ts.Config.ConnState = func(c net.Conn, st http.ConnState) {
		if st == http.StateNew {
			mu.Lock()
			conns[c.RemoteAddr().String()] = true
			mu.Unlock()
		}
	}
	ts.Start()
	defer ts.Close()
	tmpl, err := newBodyTemplate(defaultBody)
	if err != nil {
		t.Fatal(err)
	}
	// 40 requests at 400/s: 0.1 s.
	cfg := loadConfig{baseURL: ts.URL, conns: 4, duration: time.Minute, total: 40, rate: 400,
		timeout: 5 * time.Second, token: "lan-token", body: tmpl}
	s, err := runLoad(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !s.openLoop || s.scheduled != 40 || s.requests != 40 || s.signed != 40 || !s.ok() {
		t.Errorf("open loop %v: %d planned, %d requests, %d signed, errors %v; want 40 signed",
			s.openLoop, s.scheduled, s.requests, s.signed, s.errors)
	}
	if s.delays.count != 40 || s.latency.count != 40 {
		t.Errorf("%d start delays and %d latencies for 40 requests", s.delays.count, s.latency.count)
	}
	if len(srv.uuids) != 40 || len(srv.badReq) > 0 {
		t.Errorf("%d distinct uuids, malformed requests %q", len(srv.uuids), srv.badReq)
	}
	mu.Lock()
	defer mu.Unlock()
	// One more for GET /health, which may be reused by a request.
	if len(conns) > 4 {
		t.Errorf("%d connections opened with -c 4", len(conns))
	}
}

// TestReport_OpenLoop: the report of an open-loop run says the rate, the
// requests planned and the late starts.
func TestReport_OpenLoop(t *testing.T) {
	t.Parallel()
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	due := time.Date(2026, 11, 25, 2, 0, 0, 0, time.UTC)
	signedAs := func(n int64, latency, delay time.Duration) sample {
		return sample{latency: latency, answered: true, due: due, delay: delay,
			outcome: outcome{series: series{101, "A"}, numero: n}}
	}
	s := summarize([][]sample{{signedAs(1, ms(3), 0), signedAs(2, ms(9), ms(6)), signedAs(3, ms(4), ms(1))}})
	s.openLoop, s.scheduled, s.elapsed = true, 3, ms(300)
	got := report(loadConfig{baseURL: "http://127.0.0.1:18787", conns: 4, rate: 10}, s)
	for _, want := range []string{
		"open loop:   10 req/s, 3 requests planned; latency counted from each one's due time\n",
		"late starts: 1 of 3 more than 1ms after their due time (start delay p50 1.0 ms, p99 6.0 ms, max 6.0 ms)\n",
		"latency:     p50 4.0 ms, p90 9.0 ms, p99 9.0 ms, max 9.0 ms\n",
		"result: OK\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the report lacks %q:\n%s", want, got)
		}
	}
}

// TestWaitUntil: waitUntil never returns before the due time, and returns
// false at once for a context that has ended.
func TestWaitUntil(t *testing.T) {
	t.Parallel()
	for _, ahead := range []time.Duration{-time.Millisecond, 0, 200 * time.Microsecond, 2 * time.Millisecond, 5 * time.Millisecond} {
		due := time.Now().Add(ahead)
		if !waitUntil(t.Context(), due) {
			t.Errorf("waitUntil(now%+v) = false with a live context", ahead)
		}
		if now := time.Now(); now.Before(due) {
			t.Errorf("waitUntil(now%+v) returned %s before the due time", ahead, due.Sub(now))
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if waitUntil(ctx, time.Now().Add(time.Hour)) {
		t.Error("waitUntil = true with an ended context")
	}
}
