package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The latency report counts the flushes of one sale (issue 35: "≤ 1.05
// fsync/fdatasync calls per acknowledged sale at 50 req/s, counted with
// strace -f -e trace=fsync,fdatasync on the running agent"), the way an
// outside check does: strace attached to the agent's process with -f -c,
// started before a run of POST /sign-cfe and interrupted (SIGINT) a second
// after its last answer (flushSettle); its -c summary gives the calls by system call, the
// run's answers the sales. strace stops the agent at every system call it
// makes, so the counted run is an extra one, after the timed run of the same
// rate, and its latencies are not reported.

// flushSyscalls are the system calls counted as flushes: those that ask the
// kernel to write data to the disk.
const flushSyscalls = "fsync,fdatasync,sync_file_range,msync,syncfs,sync"

// attachTimeout bounds the wait for strace to attach to the agent.
const attachTimeout = 15 * time.Second

// flushCount is what one counted run saw.
type flushCount struct {
	calls map[string]int // flush system calls of the agent by name, failed ones included
	run   *summary       // the counted run's answers
}

// total is the number of flush calls of the run.
func (f *flushCount) total() int {
	n := 0
	for _, c := range f.calls {
		n += c
	}
	return n
}

// perSale is the flush calls per acknowledged (signed) sale; 0 when none
// was signed.
func (f *flushCount) perSale() float64 {
	if f.run.signed == 0 {
		return 0
	}
	return float64(f.total()) / float64(f.run.signed)
}

// callsLine lists the calls by system call, the most frequent first, and
// their sum: "fdatasync 1000 + fsync 20 = 1020 calls" ("fdatasync 1000
// calls" for one).
func (f *flushCount) callsLine() string {
	names := slices.SortedFunc(maps.Keys(f.calls), func(a, b string) int {
		if d := f.calls[b] - f.calls[a]; d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = fmt.Sprintf("%s %d", name, f.calls[name])
	}
	switch len(parts) {
	case 0:
		return "0 calls"
	case 1:
		return parts[0] + " calls"
	}
	return fmt.Sprintf("%s = %d calls", strings.Join(parts, " + "), f.total())
}

// flushSettle is how long strace keeps counting after the last answer of a
// counted run: past the store's checkpoint after the last sale (200 ms).
const flushSettle = time.Second

// countFlushes runs load (its rate, its duration) against the agent of
// process pid with strace (the binary straceBin) attached to it, the
// summary written to outFile, and returns the flushes it counted.
func countFlushes(ctx context.Context, straceBin string, pid int, outFile string, load loadConfig) (*flushCount, error) {
	tr, err := attachStrace(ctx, straceBin, pid, outFile)
	if err != nil {
		return nil, err
	}
	s, runErr := runLoad(ctx, load)
	// What the run's sales still make the agent write after the last
	// answer (the store's checkpoint of its commit log once sales stop)
	// counts too.
	select {
	case <-time.After(flushSettle):
	case <-ctx.Done():
	}
	calls, err := tr.stop()
	if runErr != nil {
		return nil, runErr
	}
	if err != nil {
		return nil, err
	}
	return &flushCount{calls: calls, run: s}, nil
}

// probeStrace attaches strace to the agent and detaches it at once: it tells
// before anything is measured whether the flushes can be counted.
func probeStrace(ctx context.Context, straceBin string, pid int, outFile string) error {
	tr, err := attachStrace(ctx, straceBin, pid, outFile)
	if err != nil {
		return err
	}
	_, err = tr.stop()
	return err
}

// straceProc is strace attached to a process.
type straceProc struct {
	cmd     *exec.Cmd
	outFile string
	stderr  *attachWatch
	done    chan struct{} // closed when strace has exited
	waitErr error         // cmd.Wait's result, set before done is closed
}

// attachStrace starts "strace -f -c -e trace=flushSyscalls -p pid -o
// outFile" and waits until strace says it attached to every thread of pid.
func attachStrace(ctx context.Context, straceBin string, pid int, outFile string) (*straceProc, error) {
	cmd := exec.Command(straceBin, "-f", "-c", "-e", "trace="+flushSyscalls, "-p", strconv.Itoa(pid), "-o", outFile)
	// strace names itself by its argv[0]: "/usr/bin/strace: Process 123
	// attached with 9 threads".
	w := &attachWatch{want: fmt.Sprintf(": Process %d attached", pid), attached: make(chan struct{})}
	cmd.Stderr = w
	t := &straceProc{cmd: cmd, outFile: outFile, stderr: w, done: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting strace: %w", err)
	}
	go func() {
		t.waitErr = cmd.Wait()
		close(t.done)
	}()
	timer := time.NewTimer(attachTimeout)
	defer timer.Stop()
	select {
	case <-w.attached:
		return t, nil
	case <-t.done:
		return nil, fmt.Errorf("strace could not attach to the agent (process %d): %s: %s; "+
			"ptrace may be restricted here (kernel.yama.ptrace_scope, a container without CAP_SYS_PTRACE): "+
			"run as root or where ptrace is allowed, or pass -count-flushes=false",
			pid, exitText(t.waitErr), w.text())
	case <-ctx.Done():
		t.kill()
		return nil, ctx.Err()
	case <-timer.C:
		t.kill()
		return nil, fmt.Errorf("strace did not attach to the agent (process %d) within %s: %s", pid, attachTimeout, w.text())
	}
}

// stop interrupts strace (SIGINT, as Ctrl-C does), which detaches from the
// agent and writes its summary, and returns the calls the summary counts.
func (t *straceProc) stop() (map[string]int, error) {
	select {
	case <-t.done:
		return nil, fmt.Errorf("strace exited (%s) before the run ended: %s", exitText(t.waitErr), t.stderr.text())
	default:
	}
	if err := t.cmd.Process.Signal(os.Interrupt); err != nil {
		t.kill()
		return nil, fmt.Errorf("interrupting strace: %w", err)
	}
	timer := time.NewTimer(stopTimeout)
	defer timer.Stop()
	select {
	case <-t.done:
	case <-timer.C:
		t.kill()
		return nil, fmt.Errorf("strace did not exit within %s of SIGINT and was killed", stopTimeout)
	}
	if !interrupted(t.waitErr) {
		return nil, fmt.Errorf("strace exited with %s after SIGINT: %s", exitText(t.waitErr), t.stderr.text())
	}
	b, err := os.ReadFile(t.outFile)
	if err != nil {
		return nil, fmt.Errorf("reading strace's summary: %w", err)
	}
	calls, err := parseStraceSummary(b)
	if err != nil {
		return nil, fmt.Errorf("strace's summary in %s: %w", t.outFile, err)
	}
	return calls, nil
}

func (t *straceProc) kill() {
	_ = t.cmd.Process.Kill()
	<-t.done
}

// interrupted reports whether strace's exit is that of an interrupted
// strace: it exits 0, or 130 (128 + SIGINT), or dies of the SIGINT it
// re-raises.
func interrupted(waitErr error) bool {
	var exit *exec.ExitError
	if waitErr == nil {
		return true
	}
	if !errors.As(waitErr, &exit) {
		return false
	}
	if exit.ExitCode() == 128+int(syscall.SIGINT) {
		return true
	}
	ws, ok := exit.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGINT
}

func exitText(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// attachWatch is strace's standard error: it keeps the text, and closes
// attached once a whole line holds want.
type attachWatch struct {
	want     string
	attached chan struct{}

	mu   sync.Mutex
	buf  bytes.Buffer
	seen bool
}

func (w *attachWatch) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if !w.seen {
		for line := range strings.Lines(w.buf.String()) {
			if strings.HasSuffix(line, "\n") && (strings.Contains(line, w.want+" ") || strings.Contains(line, w.want+"\n")) {
				w.seen = true
				close(w.attached)
				break
			}
		}
	}
	return len(p), nil
}

// text is what strace wrote to its standard error, without its "detached"
// lines (one per thread), on one line.
func (w *attachWatch) text() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var keep []string
	for line := range strings.Lines(w.buf.String()) {
		if line = strings.TrimSpace(line); line != "" && !strings.HasSuffix(line, " detached") {
			keep = append(keep, line)
		}
	}
	if len(keep) == 0 {
		return "(strace said nothing)"
	}
	return strings.Join(keep, "; ")
}

// parseStraceSummary reads the table strace -c writes, and returns the calls
// of each system call in it:
//
//	% time     seconds  usecs/call     calls    errors syscall
//	------ ----------- ----------- --------- --------- ----------------
//	 93.57    0.046974         161       290           fdatasync
//	  6.43    0.003229         403         8           fsync
//	------ ----------- ----------- --------- --------- ----------------
//	100.00    0.050203         168       298           total
//
// (errors is blank when no call failed). strace writes nothing at all when
// it saw no call: an empty summary is an empty map. The rows must add up to
// the total.
func parseStraceSummary(b []byte) (map[string]int, error) {
	calls := map[string]int{}
	if len(bytes.TrimSpace(b)) == 0 {
		return calls, nil
	}
	header, total, sum := false, -1, 0
	for i, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0 || strings.Trim(line, "- ") == "":
			continue
		case !header:
			if !slices.Equal(f, []string{"%", "time", "seconds", "usecs/call", "calls", "errors", "syscall"}) {
				return nil, fmt.Errorf("line %d: %q is not strace -c's header", i+1, line)
			}
			header = true
			continue
		case total >= 0:
			return nil, fmt.Errorf("line %d: %q after the total", i+1, line)
		case len(f) != 5 && len(f) != 6:
			return nil, fmt.Errorf("line %d: %q: want %% time, seconds, usecs/call, calls, [errors,] syscall", i+1, line)
		}
		n, err := strconv.Atoi(f[3])
		if err != nil || n < 0 {
			return nil, fmt.Errorf("line %d: %q: calls %q is not a count", i+1, line, f[3])
		}
		name := f[len(f)-1]
		switch {
		case name == "total":
			total = n
		case calls[name] != 0:
			return nil, fmt.Errorf("line %d: %s twice", i+1, name)
		default:
			calls[name] = n
			sum += n
		}
	}
	switch {
	case !header:
		return nil, errors.New("no header")
	case total < 0:
		return nil, errors.New("no total line")
	case total != sum:
		return nil, fmt.Errorf("the rows add up to %d calls, the total says %d", sum, total)
	}
	return calls, nil
}

// flushSetup decides whether the latency report counts flushes: wanted is
// -count-flushes, given says it was set on the command line, lookPath finds
// strace (exec.LookPath). It returns strace's path, or why the flushes are
// not counted; an error when they must be counted (given, or strict:
// CFE_STRICT_TOOLS=1) and strace is missing.
func flushSetup(wanted, given, strict bool, lookPath func(string) (string, error), progress *log.Logger) (straceBin, notCounted string, err error) {
	if !wanted {
		return "", "-count-flushes=false", nil
	}
	p, err := lookPath("strace")
	if err != nil {
		switch {
		case given:
			return "", "", fmt.Errorf("-count-flushes: strace is not installed (%w)", err)
		case strict:
			return "", "", fmt.Errorf("counting the flushes per sale needs strace, which is not installed (%w); "+
				"%s=1 makes that an error: install strace, or pass -count-flushes=false", err, envStrict)
		}
		progress.Print("flushes: not counted (strace missing)")
		return "", "strace missing", nil
	}
	return p, "", nil
}

// strictTools reports whether CFE_STRICT_TOOLS=1 (as CI sets): a tool the
// report needs that is missing is an error rather than a line saying what
// was not measured.
func strictTools() bool { return os.Getenv(envStrict) == "1" }

// envStrict is internal/testtool's EnvStrict, which a command does not import.
const envStrict = "CFE_STRICT_TOOLS"
