package main

import (
	"context"
	"crypto"
	"crypto/rand"
	_ "crypto/sha1" // the hash of DGI's rsa-sha1 profile
	_ "crypto/sha256"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/cfe-agent/cfe-agent/profiles"
	"github.com/cfe-agent/cfe-agent/signer"
)

// The latency report (-latency-report) measures, in one run on one machine,
// what one sale costs at least and what the agent answers:
//
//   - the floor: one RSA-2048 signature of a CFE-sized document with the key
//     the agent signs with, on one core, and one fdatasync of a 4 KB write in
//     the agent's data directory; each repeated;
//   - POST /sign-cfe over HTTP at each rate of -rates, open loop, over -c
//     connections (4 unless given);
//   - after each rate's timed run, unless -count-flushes=false, the agent's
//     flushes (fsync, fdatasync…) per acknowledged sale, counted by strace in
//     an extra run of -count-d at the same rate (flushes.go).
//
// The agent is started on a fresh data directory (generating its sandbox
// test certificate and ranges), warmed up, then measured.

// latencyConfig says what the latency report measures.
type latencyConfig struct {
	agent  string    // the built cfe-agent binary
	dir    string    // parent of the temporary data directory; "" for the system's
	rates  []float64 // open-loop rates to load the agent at
	floorN int       // repetitions of each floor measurement
	load   loadConfig
	// strace is strace's path: the flushes of each rate are counted in an
	// extra run of countFor; "" when they are not, notCounted saying why.
	// With mustCount (CFE_STRICT_TOOLS=1, or -count-flushes given), strace
	// failing to attach to the agent is an error; otherwise the report says
	// the flushes were not counted, and why.
	strace     string
	notCounted string
	mustCount  bool
	countFor   time.Duration
}

// idleGap is the pause before each signature and fdatasync of the idle
// floor: the time between two sales at 10 req/s.
const idleGap = 100 * time.Millisecond

// cfeSize is the size of the document digested for the floor's signature:
// an e-Ticket of a few lines, as the agent signs it, is about 4 KB.
const cfeSize = 4 << 10

// latencyResult is what the latency report measured.
type latencyResult struct {
	algorithm string          // of the profile: rsa-sha1 or rsa-sha256
	keyBits   int             // size of the signing key
	dataDir   string          // where the fdatasyncs were measured
	rsa       []time.Duration // one signature each, sorted
	fsync     []time.Duration // one 4 KB pwrite + fdatasync each, sorted
	commitIO  []time.Duration // the I/O of one bbolt commit each (timeCommitIO), sorted
	// The same signatures and fdatasyncs, each idleGap after the last: the
	// floor of a lone request at 10 req/s, whose CPU and disk were idle.
	rsaIdle, fsyncIdle []time.Duration
	runs               []*summary // one per rate
	rates              []float64
	conns              int
	duration           time.Duration
	loadAvg            [2]string // /proc/loadavg before the floor and after the last run
	// The flushes counted after each run, by rate (none when not counted,
	// notCounted saying why), each in a run of countFor.
	flushes    []*flushCount
	notCounted string
	countFor   time.Duration
}

// runLatency starts the agent on a fresh data directory, warms it up,
// measures the floor and loads it at each rate.
func runLatency(ctx context.Context, cfg latencyConfig, progress *log.Logger) (r *latencyResult, err error) {
	root, err := os.MkdirTemp(cfg.dir, "cfe-load-latency-")
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
	dataDir := filepath.Join(root, "agent")
	a, _, err := startAgent(ctx, cfg.agent, dataDir)
	if err != nil {
		return nil, err
	}
	defer func() {
		if stopErr := a.stop(); err == nil {
			err = stopErr
		}
	}()
	load := cfg.load
	load.baseURL = a.baseURL
	pid := a.cmd.Process.Pid
	straceBin, notCounted := cfg.strace, cfg.notCounted
	if straceBin != "" {
		progress.Printf("flushes: attaching strace to the agent (process %d)", pid)
		if err := probeStrace(ctx, straceBin, pid, filepath.Join(root, "strace-probe.txt")); err != nil {
			if cfg.mustCount {
				return nil, err
			}
			straceBin, notCounted = "", err.Error()
			progress.Printf("flushes: not counted (%s)", notCounted)
		}
	}

	// The first signatures of a fresh agent fill caches, grow the store
	// file and the journal: they are not what a sale costs every day.
	warm := load
	warm.rate, warm.total, warm.duration = 50, 100, time.Minute
	progress.Printf("warm-up: %d requests at %s req/s", warm.total, rateString(warm.rate))
	if s, err := runLoad(ctx, warm); err != nil {
		return nil, err
	} else if !s.ok() {
		return nil, fmt.Errorf("warm-up failed:\n%s", report(warm, s))
	}

	r = &latencyResult{dataDir: dataDir, rates: cfg.rates, conns: load.conns, duration: load.duration,
		notCounted: notCounted, countFor: cfg.countFor}
	r.loadAvg[0] = loadAverage()
	key, alg, err := agentKey(dataDir)
	if err != nil {
		return nil, err
	}
	r.algorithm, r.keyBits = alg.name, key.Public().(interface{ Size() int }).Size()*8
	progress.Printf("floor: %d RSA-%d signatures on one core", cfg.floorN, r.keyBits)
	if r.rsa, err = timeSignatures(key, alg.hash, cfg.floorN, 0); err != nil {
		return nil, err
	}
	progress.Printf("floor: %d fdatasyncs of a 4 KB write in %s", cfg.floorN, dataDir)
	if r.fsync, err = timeSyncs(dataDir, cfg.floorN, 0); err != nil {
		return nil, err
	}
	idleN := max(cfg.floorN/20, 1)
	progress.Printf("floor after idle: %d signatures and %d fdatasyncs, %s apart", idleN, idleN, idleGap)
	if r.rsaIdle, err = timeSignatures(key, alg.hash, idleN, idleGap); err != nil {
		return nil, err
	}
	if r.fsyncIdle, err = timeSyncs(dataDir, idleN, idleGap); err != nil {
		return nil, err
	}
	progress.Printf("the I/O of %d bbolt commits (%d pages, fdatasync, meta page, fdatasync) in %s", cfg.floorN, commitPages, dataDir)
	if r.commitIO, err = timeCommitIO(dataDir, cfg.floorN); err != nil {
		return nil, err
	}
	for _, rate := range cfg.rates {
		run := load
		run.rate = rate
		progress.Printf("POST /sign-cfe at %s req/s over %d connections for %s", rateString(rate), run.conns, run.duration)
		s, err := runLoad(ctx, run)
		if err != nil {
			return nil, err
		}
		progress.Print(report(run, s))
		r.runs = append(r.runs, s)
		if straceBin == "" {
			continue
		}
		counted := run
		counted.duration = cfg.countFor
		progress.Printf("flushes at %s req/s: strace -f -c -e trace=%s -p %d during %s of POST /sign-cfe (not timed)",
			rateString(rate), flushSyscalls, pid, counted.duration)
		f, err := countFlushes(ctx, straceBin, pid, filepath.Join(root, "strace-"+rateString(rate)+".txt"), counted)
		if err != nil {
			return nil, fmt.Errorf("counting the flushes at %s req/s: %w", rateString(rate), err)
		}
		progress.Printf("flushes at %s req/s: %s for %d sales signed: %.3f per sale",
			rateString(rate), f.callsLine(), f.run.signed, f.perSale())
		if !f.run.ok() {
			progress.Print(report(counted, f.run))
		}
		r.flushes = append(r.flushes, f)
	}
	r.loadAvg[1] = loadAverage()
	return r, nil
}

// hashAlg is a profile's signature algorithm.
type hashAlg struct {
	name string
	hash crypto.Hash
}

// agentKey loads the signing key of the active profile of the agent's data
// directory, as the agent does.
func agentKey(dataDir string) (crypto.Signer, hashAlg, error) {
	cfg, err := profiles.Load(dataDir)
	if err != nil {
		return nil, hashAlg{}, err
	}
	p, ok := cfg.ActiveProfile()
	if !ok {
		return nil, hashAlg{}, fmt.Errorf("the agent's data directory has no active profile")
	}
	c := p.Resolve(dataDir).Certificate
	if c.KeyPath != "" || !strings.HasSuffix(strings.ToLower(c.Path), ".p12") {
		return nil, hashAlg{}, fmt.Errorf("the latency report reads the sandbox's PKCS#12 certificate, not %s", c.Path)
	}
	b, err := os.ReadFile(c.Path)
	if err != nil {
		return nil, hashAlg{}, err
	}
	creds, err := signer.LoadPKCS12(b, c.Password.Value())
	if err != nil {
		return nil, hashAlg{}, err
	}
	alg := hashAlg{string(signer.RSASHA1), crypto.SHA1}
	if signer.Algorithm(c.Algorithm) == signer.RSASHA256 {
		alg = hashAlg{string(signer.RSASHA256), crypto.SHA256}
	}
	return creds.Key, alg, nil
}

// timeSignatures times n signatures by key, one after the other on one
// locked thread: each hashes a CFE-sized document and signs the digest
// (PKCS#1 v1.5, as XML-DSig's rsa-sha1 and rsa-sha256 do), gap after the
// last. It returns the times sorted.
func timeSignatures(key crypto.Signer, h crypto.Hash, n int, gap time.Duration) ([]time.Duration, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	doc := make([]byte, cfeSize)
	for i := range doc {
		doc[i] = byte('a' + i%26)
	}
	times := make([]time.Duration, n)
	for i := range times {
		time.Sleep(gap)
		doc[i%len(doc)]++ // a different document each time
		start := time.Now()
		d := h.New()
		d.Write(doc)
		if _, err := key.Sign(rand.Reader, d.Sum(nil), h); err != nil {
			return nil, err
		}
		times[i] = time.Since(start)
	}
	slices.Sort(times)
	return times, nil
}

// timeSyncs times n rounds of a 4 KB write at the start of a file in dir
// followed by fdatasync, the file's block allocated beforehand (as bbolt's
// pages are, past its headroom), gap after the last. It returns the times
// sorted.
func timeSyncs(dir string, n int, gap time.Duration) ([]time.Duration, error) {
	return timeWrites(dir, n, 1, 1, gap)
}

// commitPages is how many pages one bbolt commit of one CFE writes before its
// first fdatasync (strace of the agent at 10 req/s: 17 pwrites, each
// bucket's last leaf and branch pages, the root, the freelist), spread over
// the file.
const commitPages = 17

// timeCommitIO times n rounds of the I/O of one bbolt commit without bbolt:
// commitPages 4 KB writes spread over an allocated 4 MB file, fdatasync,
// then one 4 KB write at its start (the meta page), fdatasync. It returns the
// times sorted.
func timeCommitIO(dir string, n int) ([]time.Duration, error) {
	return timeWrites(dir, n, commitPages, 1024, 0)
}

// timeWrites times n rounds of: pages 4 KB writes at distinct offsets of a
// file of fileBlocks allocated 4 KB blocks in dir, fdatasync; and, when pages
// > 1, one more write at offset 0 and fdatasync; gap after the last round.
// It returns the times sorted, and removes the file.
func timeWrites(dir string, n, pages, fileBlocks int, gap time.Duration) (times []time.Duration, err error) {
	f, err := os.CreateTemp(dir, "fdatasync-*.tmp")
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if rerr := os.Remove(f.Name()); err == nil {
			err = rerr
		}
	}()
	const block = 4096
	page := make([]byte, block)
	if _, err := f.WriteAt(make([]byte, fileBlocks*block), 0); err != nil {
		return nil, err
	}
	if err := f.Sync(); err != nil { // the blocks and the size reach the disk
		return nil, err
	}
	stride := max(fileBlocks/pages, 1)
	times = make([]time.Duration, n)
	for i := range times {
		time.Sleep(gap)
		page[0] = byte(i)
		start := time.Now()
		for p := range pages {
			// Spread the pages, and move them a little each round.
			off := int64((p*stride+i%stride)%fileBlocks) * block
			if _, err := f.WriteAt(page, off); err != nil {
				return nil, err
			}
		}
		if err := fdatasync(f); err != nil {
			return nil, err
		}
		if pages > 1 {
			if _, err := f.WriteAt(page, 0); err != nil {
				return nil, err
			}
			if err := fdatasync(f); err != nil {
				return nil, err
			}
		}
		times[i] = time.Since(start)
	}
	slices.Sort(times)
	return times, nil
}

// latencyTable presents the latency report as a Markdown table.
func latencyTable(r *latencyResult) string {
	var w strings.Builder
	fmt.Fprintln(&w, "| measure | p50 | p90 | p99 | max | notes |")
	fmt.Fprintln(&w, "|---|---|---|---|---|---|")
	rsa, fs := latencies(r.rsa), latencies(r.fsync)
	fmt.Fprintf(&w, "| floor: RSA-%d signature (%s of a 4 KB document), one core | %s | %s | %s | %s | %d times |\n",
		r.keyBits, r.algorithm, ms2(rsa.p50), ms2(rsa.p90), ms2(rsa.p99), ms2(rsa.max), rsa.count)
	fmt.Fprintf(&w, "| floor: one fdatasync of a 4 KB write in the data directory | %s | %s | %s | %s | %d times |\n",
		ms2(fs.p50), ms2(fs.p90), ms2(fs.p99), ms2(fs.max), fs.count)
	floor := rsa.p50 + fs.p50
	fmt.Fprintf(&w, "| **floor: one signature + one fdatasync** | **%s** | | %s | | sum of the medians; of the p99s |\n",
		ms2(floor), ms2(rsa.p99+fs.p99))
	ri, fi := latencies(r.rsaIdle), latencies(r.fsyncIdle)
	fmt.Fprintf(&w, "| the same signature, each %s after the last | %s | %s | %s | %s | %d times |\n",
		idleGap, ms2(ri.p50), ms2(ri.p90), ms2(ri.p99), ms2(ri.max), ri.count)
	fmt.Fprintf(&w, "| the same fdatasync, each %s after the last | %s | %s | %s | %s | %d times |\n",
		idleGap, ms2(fi.p50), ms2(fi.p90), ms2(fi.p99), ms2(fi.max), fi.count)
	fmt.Fprintf(&w, "| **floor after idle: one signature + one fdatasync, %s apart** | **%s** | | %s | | sum of the medians; of the p99s |\n",
		idleGap, ms2(ri.p50+fi.p50), ms2(ri.p99+fi.p99))
	c := latencies(r.commitIO)
	fmt.Fprintf(&w, "| for comparison: the I/O of one bbolt commit (%d spread 4 KB writes, fdatasync, meta page, fdatasync) | %s | %s | %s | %s | %d times |\n",
		commitPages, ms2(c.p50), ms2(c.p90), ms2(c.p99), ms2(c.max), c.count)
	for i, s := range r.runs {
		l := s.latency
		note := fmt.Sprintf("%d signed of %d planned, %d errors; %d late starts; p50 = %.2f × floor",
			s.signed, s.scheduled, s.requests-s.signed, s.late, float64(l.p50)/float64(floor))
		if !s.ok() {
			note += "; FAILED: " + numbersLine(s.numbers)
		}
		fmt.Fprintf(&w, "| **POST /sign-cfe at %s req/s**, open loop, %d connections, %s | **%s** | %s | **%s** | %s | %s |\n",
			rateString(r.rates[i]), r.conns, r.duration, ms2(l.p50), ms2(l.p90), ms2(l.p99), ms2(l.max), note)
		if i < len(r.flushes) {
			w.WriteString(flushRow(r.rates[i], r.countFor, r.flushes[i]))
		}
	}
	if r.notCounted != "" {
		fmt.Fprintf(&w, "\nflushes: not counted (%s)\n", r.notCounted)
	} else if len(r.flushes) > 0 {
		fmt.Fprintf(&w, "\nFlushes: the agent's calls of %s during the run (strace -f -c -e trace=%s -p PID), over the sales it signed in it.\n",
			strings.ReplaceAll(flushSyscalls, ",", ", "), flushSyscalls)
	}
	fmt.Fprintf(&w, "\nLoad average (1 5 15 min) before the floor: %s; after the last run: %s. CPUs: %d.\n",
		r.loadAvg[0], r.loadAvg[1], runtime.NumCPU())
	return w.String()
}

// ms2 prints a duration in milliseconds with two decimals.
func ms2(d time.Duration) string {
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
}

// latencyOK reports whether every run of the report signed with gap-free
// numbers.
func (r *latencyResult) ok() bool {
	for _, s := range r.runs {
		if !s.ok() {
			return false
		}
	}
	for _, f := range r.flushes {
		if !f.run.ok() {
			return false
		}
	}
	return len(r.runs) > 0
}

// flushRow is the table's row of the flushes counted at rate, in a run of d.
func flushRow(rate float64, d time.Duration, f *flushCount) string {
	s := f.run
	note := fmt.Sprintf("%s for %d sales signed (%d planned, %d errors, %d answers 2xx)",
		f.callsLine(), s.signed, s.scheduled, s.requests-s.signed, s.answered2xx)
	if !s.ok() {
		note += "; FAILED: " + numbersLine(s.numbers)
	}
	return fmt.Sprintf("| **flushes per acknowledged sale at %s req/s** (strace, an extra %s run, not timed) | **%.3f** | | | | %s |\n",
		rateString(rate), d, f.perSale(), note)
}
