package main

import (
	"bytes"
	"context"
	"io"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestLatencyFlags: the latency report loads over 4 connections unless -c
// says otherwise, at 10 and 50 req/s unless -rates does.
func TestLatencyFlags(t *testing.T) {
	t.Parallel()
	o, err := parseFlags([]string{"-agent", "x", "-latency-report"}, &bytes.Buffer{})
	if err != nil || o.conns != 4 || !slices.Equal(o.rates, []float64{10, 50}) {
		t.Errorf("defaults: conns %d, rates %v, err %v; want 4, [10 50]", o.conns, o.rates, err)
	}
	o, err = parseFlags([]string{"-agent", "x", "-latency-report", "-c", "2", "-rates", "5,20.5"}, &bytes.Buffer{})
	if err != nil || o.conns != 2 || !slices.Equal(o.rates, []float64{5, 20.5}) {
		t.Errorf("-c 2 -rates 5,20.5: conns %d, rates %v, err %v", o.conns, o.rates, err)
	}
	if o, _ := parseFlags(nil, &bytes.Buffer{}); o.conns != 8 {
		t.Errorf("closed loop: %d connections by default, want 8", o.conns)
	}
}

// TestTimeSyncs times fdatasyncs in a folder and leaves nothing behind.
func TestTimeSyncs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	times, err := timeSyncs(dir, 5, time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if len(times) != 5 || !slices.IsSorted(times) || times[0] <= 0 {
		t.Errorf("times = %v, want 5 positive durations, sorted", times)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
	if _, err := timeSyncs(filepath.Join(dir, "missing"), 1, 0); err == nil {
		t.Error("timeSyncs in a missing folder: no error")
	}
	times, err = timeCommitIO(dir, 3)
	if err != nil || len(times) != 3 || !slices.IsSorted(times) || times[0] <= 0 {
		t.Errorf("timeCommitIO: %v, %v; want 3 positive durations, sorted", times, err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestRunLatency runs the latency report on the real agent binary, built
// here, briefly: the floor is timed with the agent's own key, every request
// of each rate signs, and the table shows each row.
func TestRunLatency(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and starts the agent")
	}
	bin := buildAgent(t)
	tmpl, err := newBodyTemplate(defaultBody)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := latencyConfig{agent: bin, dir: dir, rates: []float64{20, 40}, floorN: 10,
		load:       loadConfig{conns: 4, duration: 500 * time.Millisecond, timeout: 30 * time.Second, body: tmpl},
		notCounted: "strace missing"} // TestRunLatency_countsFlushes counts them
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	r, err := runLatency(ctx, cfg, log.New(io.Discard, "", 0))
	if err != nil {
		t.Fatal(err)
	}
	if r.keyBits != 2048 || r.algorithm != "rsa-sha1" {
		t.Errorf("floor signed with RSA-%d %s, want the sandbox profile's RSA-2048 rsa-sha1", r.keyBits, r.algorithm)
	}
	if len(r.rsaIdle) != 1 || len(r.fsyncIdle) != 1 {
		t.Errorf("%d signatures and %d fdatasyncs timed after idle, want floor-n/20 = 1 each", len(r.rsaIdle), len(r.fsyncIdle))
	}
	if len(r.rsa) != 10 || len(r.fsync) != 10 || len(r.commitIO) != 10 {
		t.Errorf("%d signatures, %d fdatasyncs and %d commits' I/O timed, want 10 each", len(r.rsa), len(r.fsync), len(r.commitIO))
	}
	if len(r.runs) != 2 || !r.ok() {
		t.Fatalf("%d runs, ok %v; want 2 runs that signed every request", len(r.runs), r.ok())
	}
	for i, want := range []int{10, 20} { // 0.5 s at 20 and at 40 req/s
		if s := r.runs[i]; s.scheduled != want || s.signed != want {
			t.Errorf("run at %v req/s: %d planned, %d signed; want %d", r.rates[i], s.scheduled, s.signed, want)
		}
	}
	// The warm-up's 100 and the runs' numbers follow each other.
	if n := r.runs[1].numbers; len(n) != 1 || n[0].lowest != 111 || n[0].highest != 130 {
		t.Errorf("numbers of the second run: %+v, want 111..130", n)
	}
	table := latencyTable(r)
	for _, want := range []string{"| floor: RSA-2048 signature (rsa-sha1 of a 4 KB document), one core |",
		"| floor: one fdatasync of a 4 KB write in the data directory |", "| **floor: one signature + one fdatasync** |",
		"| **floor after idle: one signature + one fdatasync, 100ms apart** |",
		"| for comparison: the I/O of one bbolt commit (17 spread 4 KB writes, fdatasync, meta page, fdatasync) |",
		"| **POST /sign-cfe at 20 req/s**, open loop, 4 connections, 500ms |", "| **POST /sign-cfe at 40 req/s**,",
		"20 signed of 20 planned, 0 errors", "\nflushes: not counted (strace missing)\n"} {
		if !strings.Contains(table, want) {
			t.Errorf("the table lacks %q:\n%s", want, table)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("the agent's temporary data directory was left behind: %v", left)
	}
}
