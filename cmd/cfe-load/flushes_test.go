package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/internal/testtool"
)

// TestParseStraceSummary reads summaries strace 6.1 wrote with -c -o FILE:
// that of the agent at 50 req/s, the empty file of an idle agent (no call
// seen), and one with failed calls (a script's fsync of a pipe); and refuses
// what is not such a summary.
func TestParseStraceSummary(t *testing.T) {
	t.Parallel()
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	agent := read("strace-c-agent-50rps.txt")
	for _, tt := range []struct {
		name, in string
		want     map[string]int
	}{
		{"the agent at 50 req/s", agent, map[string]int{"fdatasync": 290, "fsync": 8}},
		{"no call seen", read("strace-c-no-calls.txt"), map[string]int{}},
		{"failed calls", read("strace-c-failed-calls.txt"), map[string]int{"fsync": 4, "sync": 1, "fdatasync": 1}},
		{"without a final newline", strings.TrimSuffix(agent, "\n"), map[string]int{"fdatasync": 290, "fsync": 8}},
	} {
		got, err := parseStraceSummary([]byte(tt.in))
		if err != nil || !maps.Equal(got, tt.want) {
			t.Errorf("%s: %v, %v; want %v", tt.name, got, err, tt.want)
		}
	}
	for _, tt := range []struct{ name, in, wantErr string }{
		{"a total that is not the sum", strings.Replace(agent, "298", "299", 1), "add up to 298 calls, the total says 299"},
		{"no total", agent[:strings.LastIndex(agent, "100.00")], "no total line"},
		{"no header", agent[strings.Index(agent, "\n")+1:], "is not strace -c's header"},
		{"a trace instead of a summary", "fdatasync(3) = 0\n", "is not strace -c's header"},
		{"a row after the total", agent + " 1.00 0.1 1 1 fsync\n", "after the total"},
		{"a count that is not a number", strings.Replace(agent, "290", "2x0", 1), `calls "2x0" is not a count`},
		{"a short row", strings.Replace(agent, "   161       290   ", " ", 1), "want % time"},
	} {
		if got, err := parseStraceSummary([]byte(tt.in)); err == nil || !strings.Contains(err.Error(), tt.wantErr) {
			t.Errorf("%s: %v, %v; want an error with %q", tt.name, got, err, tt.wantErr)
		}
	}
}

// TestFlushSetup: the flushes are counted when strace is found; when it is
// missing the report says so, unless they must be counted (-count-flushes
// given, or CFE_STRICT_TOOLS=1): then it is an error.
func TestFlushSetup(t *testing.T) {
	t.Parallel()
	found := func(string) (string, error) { return "/usr/bin/strace", nil }
	missing := func(name string) (string, error) { return "", &exec.Error{Name: name, Err: exec.ErrNotFound} }
	quiet := log.New(io.Discard, "", 0)
	for _, tt := range []struct {
		name                  string
		wanted, given, strict bool
		lookPath              func(string) (string, error)
		wantBin, wantNot      string
		wantErr               bool
	}{
		{"by default", true, false, false, found, "/usr/bin/strace", "", false},
		{"strace missing", true, false, false, missing, "", "strace missing", false},
		{"strace missing, strict", true, false, true, missing, "", "", true},
		{"strace missing, -count-flushes given", true, true, false, missing, "", "", true},
		{"-count-flushes=false", false, true, true, found, "", "-count-flushes=false", false},
	} {
		bin, not, err := flushSetup(tt.wanted, tt.given, tt.strict, tt.lookPath, quiet)
		if err != nil && !strings.Contains(err.Error(), "strace") {
			t.Errorf("%s: the error does not name strace: %v", tt.name, err)
		}
		if bin != tt.wantBin || not != tt.wantNot || (err != nil) != tt.wantErr {
			t.Errorf("%s: %q, %q, %v; want %q, %q, error %v", tt.name, bin, not, err, tt.wantBin, tt.wantNot, tt.wantErr)
		}
	}
}

// TestCountFlushesFlags: counted by default in runs of 10 s; -count-d and
// -count-flushes only with -latency-report.
func TestCountFlushesFlags(t *testing.T) {
	t.Parallel()
	o, err := parseFlags([]string{"-agent", "x", "-latency-report"}, &bytes.Buffer{})
	if err != nil || !o.countFlushes || o.countFlushesGiven || o.countFor != 10*time.Second {
		t.Errorf("defaults: %v, given %v, %s, %v; want counted, not given, 10s", o.countFlushes, o.countFlushesGiven, o.countFor, err)
	}
	o, err = parseFlags([]string{"-agent", "x", "-latency-report", "-count-flushes=false", "-count-d", "2s"}, &bytes.Buffer{})
	if err != nil || o.countFlushes || !o.countFlushesGiven || o.countFor != 2*time.Second {
		t.Errorf("-count-flushes=false -count-d 2s: %v, given %v, %s, %v", o.countFlushes, o.countFlushesGiven, o.countFor, err)
	}
	for _, args := range [][]string{
		{"-agent", "x", "-latency-report", "-count-d", "0s"},
		{"-agent", "x", "-count-d", "2s"},
		{"-agent", "x", "-count-flushes"},
		{"-count-flushes=false"},
	} {
		if _, err := parseFlags(args, &bytes.Buffer{}); err == nil {
			t.Errorf("%q: accepted", args)
		}
	}
}

// TestAttachStrace_fails: strace that cannot attach (here to a process that
// has exited) is an error that says what strace said and what to do.
func TestAttachStrace_fails(t *testing.T) {
	t.Parallel()
	bin := testtool.Require(t, "strace")
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	_, err := attachStrace(ctx, bin, gone.Process.Pid, filepath.Join(t.TempDir(), "summary.txt"))
	if err == nil {
		t.Fatalf("strace attached to process %d, which has exited", gone.Process.Pid)
	}
	for _, want := range []string{"strace could not attach to the agent", "No such process", "ptrace may be restricted", "-count-flushes=false"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error lacks %q: %v", want, err)
		}
	}
}

// TestRunLatency_countsFlushes runs the latency report on the real agent
// binary with strace attached for an extra 2 s at 20 req/s: strace counts
// the agent's flushes, the sales are the signed answers (every one a 2xx),
// and the table shows the count per sale.
func TestRunLatency_countsFlushes(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and starts the agent")
	}
	straceBin := testtool.Require(t, "strace")
	bin := buildAgent(t)
	tmpl, err := newBodyTemplate(defaultBody)
	if err != nil {
		t.Fatal(err)
	}
	cfg := latencyConfig{agent: bin, dir: t.TempDir(), rates: []float64{20}, floorN: 1,
		load:   loadConfig{conns: 4, duration: 250 * time.Millisecond, timeout: 30 * time.Second, body: tmpl},
		strace: straceBin, mustCount: true, countFor: 2 * time.Second}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	r, err := runLatency(ctx, cfg, log.New(io.Discard, "", 0))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.flushes) != 1 || r.notCounted != "" {
		t.Fatalf("%d counted runs (not counted: %q), want 1", len(r.flushes), r.notCounted)
	}
	f := r.flushes[0]
	s := f.run
	if s.scheduled != 40 || s.signed != 40 || s.answered2xx != s.signed || !s.ok() {
		t.Errorf("counted run: %d planned, %d signed, %d answers 2xx, ok %v; want 40 each, ok",
			s.scheduled, s.signed, s.answered2xx, s.ok())
	}
	// The warm-up's 100 and the timed run's 5 come first.
	if len(s.numbers) != 1 || s.numbers[0].lowest != 106 || s.numbers[0].highest != 145 {
		t.Errorf("numbers of the counted run: %+v, want 106..145", s.numbers)
	}
	sum := 0
	for _, n := range f.calls {
		sum += n
	}
	// Every acknowledged sale is on the disk: some flush ran.
	if sum == 0 || f.total() != sum || f.perSale() != float64(sum)/40 {
		t.Errorf("flushes counted: %v, total %d, %.3f per sale; want some, %d/40 per sale", f.calls, f.total(), f.perSale(), sum)
	}
	table := latencyTable(r)
	row := fmt.Sprintf("| **flushes per acknowledged sale at 20 req/s** (strace, an extra 2s run, not timed) | **%.3f** | | | | ", float64(sum)/40)
	note := fmt.Sprintf(" = %d calls for 40 sales signed (40 planned, 0 errors, 40 answers 2xx) |", sum)
	if len(f.calls) == 1 {
		note = " calls for 40 sales signed (40 planned, 0 errors, 40 answers 2xx) |"
	}
	if !strings.Contains(table, row) || !strings.Contains(table, note) {
		t.Errorf("the table lacks the row %q…%q:\n%s", row, note, table)
	}
	if !strings.Contains(table, "Flushes: the agent's calls of fsync, fdatasync, sync_file_range, msync, syncfs, sync during the run") {
		t.Errorf("the table does not say what a flush is:\n%s", table)
	}
}

// TestFlushCount: the calls of a counted run, listed the most frequent
// first, and per signed sale.
func TestFlushCount(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		calls   map[string]int
		signed  int
		line    string
		perSale float64
	}{
		{map[string]int{"fsync": 8, "fdatasync": 290}, 149, "fdatasync 290 + fsync 8 = 298 calls", 2},
		{map[string]int{"fsync": 3, "sync": 3, "fdatasync": 500}, 500, "fdatasync 500 + fsync 3 + sync 3 = 506 calls", 1.012},
		{map[string]int{"fdatasync": 80}, 40, "fdatasync 80 calls", 2},
		{map[string]int{}, 40, "0 calls", 0},
		{map[string]int{"fdatasync": 3}, 0, "fdatasync 3 calls", 0}, // nothing signed: no ratio
	} {
		f := &flushCount{calls: tt.calls, run: &summary{signed: tt.signed}}
		if got := f.callsLine(); got != tt.line {
			t.Errorf("%v: %q, want %q", tt.calls, got, tt.line)
		}
		if got := f.perSale(); got != tt.perSale {
			t.Errorf("%v over %d sales: %v per sale, want %v", tt.calls, tt.signed, got, tt.perSale)
		}
	}
}
