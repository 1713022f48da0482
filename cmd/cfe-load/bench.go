package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const (
	pollEvery    = 2 * time.Millisecond // between GET /health while an agent starts
	startTimeout = 15 * time.Second     // for an agent to become healthy
	stopTimeout  = 15 * time.Second     // for an agent to exit after SIGTERM
)

// benchConfig says how to measure a built agent binary.
type benchConfig struct {
	agent  string        // the built cfe-agent binary
	starts int           // measured starts, on fresh and on existing data directories
	settle time.Duration // idle time before each RSS reading
	load   loadConfig    // baseURL is that of the agent started for the load
}

// benchResult is what a benchmark of the agent measured.
type benchResult struct {
	firstStarts []time.Duration // process start to healthy, fresh data directory
	restarts    []time.Duration // the same on the data directory of the load run
	idle        memory          // settle after the agent became healthy
	settled     memory          // settle after the load ended
	restarted   memory          // settle after a restart on the data directory of the load run
	dataBytes   int64           // size of the data directory after the load
	settle      time.Duration   // between start or load and memory readings
	loadAvg     [2]string       // /proc/loadavg before and after the load
	load        *summary
	loadCfg     loadConfig
}

// runBench measures the agent binary in a new temporary directory: starts to
// a healthy /health on fresh data directories; then, on one more, memory
// idle, the load run and memory after it; then restarts on that directory,
// now holding every CFE of the load, and memory idle after one. Progress
// goes to progress. When something fails, the directory (with every agent's
// log) is kept and named in the error.
func runBench(ctx context.Context, cfg benchConfig, progress *log.Logger) (r *benchResult, err error) {
	root, err := os.MkdirTemp("", "cfe-load-bench-")
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("%w (agent data and logs kept in %s)", err, root)
			return
		}
		err = os.RemoveAll(root)
	}()

	r = &benchResult{loadCfg: cfg.load, settle: cfg.settle}
	for i := range cfg.starts {
		progress.Printf("start %d/%d on a fresh data directory", i+1, cfg.starts)
		d, err := timeStart(ctx, cfg.agent, filepath.Join(root, "fresh-"+strconv.Itoa(i)))
		if err != nil {
			return nil, err
		}
		r.firstStarts = append(r.firstStarts, d)
	}
	loadDir := filepath.Join(root, "load")
	if err := r.measureLoad(ctx, cfg, loadDir, progress); err != nil {
		return nil, err
	}
	for i := range cfg.starts {
		progress.Printf("restart %d/%d on the data directory of the load run", i+1, cfg.starts)
		d, err := timeStart(ctx, cfg.agent, loadDir)
		if err != nil {
			return nil, err
		}
		r.restarts = append(r.restarts, d)
	}
	if r.restarted, err = idleMemory(ctx, cfg, loadDir); err != nil {
		return nil, err
	}
	return r, nil
}

// measureLoad starts the agent on a fresh dataDir, reads its memory idle,
// runs the load, reads its memory again and the size of dataDir, and stops it.
func (r *benchResult) measureLoad(ctx context.Context, cfg benchConfig, dataDir string, progress *log.Logger) (err error) {
	a, _, err := startAgent(ctx, cfg.agent, dataDir)
	if err != nil {
		return err
	}
	defer func() {
		if stopErr := a.stop(); err == nil {
			err = stopErr
		}
	}()
	if err := sleep(ctx, cfg.settle); err != nil {
		return err
	}
	if r.idle, err = a.memory(); err != nil {
		return err
	}
	r.loadAvg[0] = loadAverage()
	progress.Printf("load: %d connections for %s", cfg.load.conns, cfg.load.duration)
	r.loadCfg.baseURL = a.baseURL
	if r.load, err = runLoad(ctx, r.loadCfg); err != nil {
		return err
	}
	r.loadAvg[1] = loadAverage()
	if err := sleep(ctx, cfg.settle); err != nil {
		return err
	}
	if r.settled, err = a.memory(); err != nil {
		return err
	}
	r.dataBytes, err = dirSize(dataDir)
	return err
}

// idleMemory starts the agent on dataDir and reads its memory after settling.
func idleMemory(ctx context.Context, cfg benchConfig, dataDir string) (m memory, err error) {
	a, _, err := startAgent(ctx, cfg.agent, dataDir)
	if err != nil {
		return memory{}, err
	}
	defer func() {
		if stopErr := a.stop(); err == nil {
			err = stopErr
		}
	}()
	if err := sleep(ctx, cfg.settle); err != nil {
		return memory{}, err
	}
	return a.memory()
}

// timeStart starts the agent on dataDir, and stops it once healthy.
func timeStart(ctx context.Context, bin, dataDir string) (time.Duration, error) {
	a, took, err := startAgent(ctx, bin, dataDir)
	if err != nil {
		return 0, err
	}
	return took, a.stop()
}

// agentProc is a running agent started by this program.
type agentProc struct {
	cmd     *exec.Cmd
	baseURL string
	logPath string
	done    chan struct{} // closed when the process has exited
	waitErr error         // cmd.Wait's result, set before done is closed
}

// startAgent starts "bin --data-dir dataDir serve" on a free loopback port in
// the Montevideo time zone, and waits until GET /health answers ok. It
// returns the time from just before the process was created to the first
// healthy answer. The agent's output goes to dataDir + ".log", its numbering
// witness to dataDir + "-witness" (beside the throwaway data directory, never
// the user's own: a fresh data directory is a first start, and the user's
// agent never sees this one's numbers).
func startAgent(ctx context.Context, bin, dataDir string) (*agentProc, time.Duration, error) {
	addr, err := freeLoopbackAddr()
	if err != nil {
		return nil, 0, err
	}
	logPath := dataDir + ".log"
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, 0, err
	}
	defer logFile.Close() // the child has its own descriptor
	cmd := exec.Command(bin, "--data-dir", dataDir, "serve", "--listen", addr)
	cmd.Env = append(os.Environ(), "TZ=America/Montevideo", "CFE_AGENT_WITNESS_DIR="+dataDir+"-witness")
	cmd.Stdout, cmd.Stderr = logFile, logFile
	a := &agentProc{cmd: cmd, baseURL: "http://" + addr, logPath: logPath, done: make(chan struct{})}

	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, 0, fmt.Errorf("starting the agent: %w", err)
	}
	go func() {
		a.waitErr = cmd.Wait()
		close(a.done)
	}()
	took, err := a.waitHealthy(ctx, start)
	if err != nil {
		_ = cmd.Process.Kill()
		<-a.done
		return nil, 0, err
	}
	return a, took, nil
}

// waitHealthy polls GET /health every pollEvery until it answers ok, and
// returns the time since start.
func (a *agentProc) waitHealthy(ctx context.Context, start time.Time) (time.Duration, error) {
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		if healthy(ctx, client, a.baseURL) {
			return time.Since(start), nil
		}
		select {
		case <-a.done:
			return 0, fmt.Errorf("the agent exited (%w) before /health answered ok; its log ends:\n%s",
				a.waitErr, logTail(a.logPath))
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-tick.C:
		}
		if time.Since(start) > startTimeout {
			return 0, fmt.Errorf("the agent was not healthy %s after it started; its log ends:\n%s",
				startTimeout, logTail(a.logPath))
		}
	}
}

// healthy reports whether GET /health answers 200 with "ok": true.
func healthy(ctx context.Context, client *http.Client, base string) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/health", nil)
	if err != nil {
		return false
	}
	resp, err := client.Do(req)
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	var h struct {
		OK bool `json:"ok"`
	}
	return resp.StatusCode == http.StatusOK && json.NewDecoder(io.LimitReader(resp.Body, maxAnswer)).Decode(&h) == nil && h.OK
}

// stop sends SIGTERM and waits for the agent to exit; it kills an agent that
// does not exit in time. An exit other than a clean one is an error.
func (a *agentProc) stop() error {
	select {
	case <-a.done:
	default:
		_ = a.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-a.done:
		case <-time.After(stopTimeout):
			_ = a.cmd.Process.Kill()
			<-a.done
			return fmt.Errorf("the agent did not exit within %s of SIGTERM and was killed", stopTimeout)
		}
	}
	if a.waitErr != nil {
		return fmt.Errorf("the agent exited with %w; its log ends:\n%s", a.waitErr, logTail(a.logPath))
	}
	return nil
}

// memory is a reading of the agent's resident memory, in bytes.
type memory struct {
	rss  int64 // VmRSS: resident set, anon + file (+ shmem)
	anon int64 // RssAnon: mostly the Go heap and stacks
	file int64 // RssFile: mapped files, among them bbolt's memory map of the store
	hwm  int64 // VmHWM: the highest rss so far
}

// memory reads the running agent's /proc/PID/status.
func (a *agentProc) memory() (memory, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", a.cmd.Process.Pid))
	if err != nil {
		return memory{}, fmt.Errorf("reading the agent's memory: %w", err)
	}
	var m memory
	for key, dst := range map[string]*int64{"VmRSS": &m.rss, "RssAnon": &m.anon, "RssFile": &m.file, "VmHWM": &m.hwm} {
		if *dst, err = procStatusBytes(status, key); err != nil {
			return memory{}, err
		}
	}
	return m, nil
}

// dirSize is the total size of the regular files under dir.
func dirSize(dir string) (int64, error) {
	var total int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		info, err := d.Info()
		total += info.Size()
		return err
	})
	return total, err
}

// procStatusBytes finds "key:   N kB" in the text of /proc/PID/status and
// returns N*1024.
func procStatusBytes(status []byte, key string) (int64, error) {
	for line := range bytes.Lines(status) {
		name, value, ok := strings.Cut(string(line), ":")
		if !ok || name != key {
			continue
		}
		f := strings.Fields(value)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("/proc status: %s: unexpected value %q", key, strings.TrimSpace(value))
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc status: %s: %w", key, err)
		}
		return kb * 1024, nil
	}
	return 0, fmt.Errorf("/proc status: no %s", key)
}

// loadAverage returns the 1, 5 and 15 minute load averages of the machine,
// or "n/a" where /proc/loadavg does not exist.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "n/a"
}

func freeLoopbackAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := l.Addr().String()
	return addr, l.Close()
}

// logTail returns the last lines of an agent's log.
func logTail(path string) string {
	const lines = 10
	b, err := os.ReadFile(path)
	if err != nil {
		return "(no log: " + err.Error() + ")"
	}
	all := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(all[max(0, len(all)-lines):], "\n")
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// median of d (the mean of the two middle values when len(d) is even); it
// sorts d in place. Zero when empty.
func median(d []time.Duration) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	mid := len(d) / 2
	if len(d)%2 == 1 {
		return d[mid]
	}
	return (d[mid-1] + d[mid]) / 2
}

// benchTable presents a benchmark as a Markdown table.
func benchTable(r *benchResult) string {
	var w strings.Builder
	row := func(measure, value string) { fmt.Fprintf(&w, "| %s | %s |\n", measure, value) }
	row("measure", "value")
	w.WriteString("|---|---|\n")
	row(fmt.Sprintf("start to healthy `/health`, fresh data dir (first run), median of %d", len(r.firstStarts)),
		spread(r.firstStarts))
	row(fmt.Sprintf("start to healthy `/health`, data dir of the load run (%d CFEs), median of %d",
		r.load.signed, len(r.restarts)), spread(r.restarts))
	row(fmt.Sprintf("idle RSS, %s after healthy on a fresh data dir", r.settle), r.idle.String())
	row(fmt.Sprintf("RSS %s after the load ended", r.settle), r.settled.String())
	row("peak RSS during the load (VmHWM)", mib(r.settled.hwm))
	row(fmt.Sprintf("idle RSS, %s after healthy on the data dir of the load run", r.settle), r.restarted.String())
	s := r.load
	row("load", fmt.Sprintf("%d connections for %s, a fresh uuid per request", r.loadCfg.conns, r.loadCfg.duration))
	row("requests / signed / errors", fmt.Sprintf("%d / %d / %d", s.requests, s.signed, s.requests-s.signed))
	if len(s.errors) > 0 {
		row("errors by kind", errorKinds(s))
	}
	row("throughput", fmt.Sprintf("%.1f req/s", s.throughput()))
	row("latency p50 / p90 / p99 / max", fmt.Sprintf("%s / %s / %s / %s",
		ms(s.latency.p50), ms(s.latency.p90), ms(s.latency.p99), ms(s.latency.max)))
	row("numbers", numbersLine(s.numbers))
	row("data directory after the load", mib(r.dataBytes))
	row("load average before / after the load (1 5 15 min)", r.loadAvg[0]+" / "+r.loadAvg[1])
	return w.String()
}

func spread(d []time.Duration) string {
	m := median(d) // sorts d
	return fmt.Sprintf("%s (min %s, max %s)", ms(m), ms(d[0]), ms(d[len(d)-1]))
}

// mib prints a size in MiB and, to compare with targets in MB, in MB.
func mib(b int64) string {
	return fmt.Sprintf("%.1f MiB (%.1f MB)", float64(b)/(1<<20), float64(b)/1e6)
}

func (m memory) String() string {
	return fmt.Sprintf("%s: anon %.1f MiB, file %.1f MiB", mib(m.rss), float64(m.anon)/(1<<20), float64(m.file)/(1<<20))
}

func errorKinds(s *summary) string {
	var parts []string
	for kind, n := range s.errors {
		parts = append(parts, fmt.Sprintf("%s: %d", kind, n))
	}
	slices.Sort(parts)
	return strings.Join(parts, ", ")
}
