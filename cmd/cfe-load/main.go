// Command cfe-load puts the local module of cfe-agent under load and checks
// what it answers. Each request signs one CFE under a fresh uuid; the run
// reports requests, errors by kind, throughput and latency percentiles, and
// checks that the numbers answered in each (tipo_cfe, serie) are distinct and
// consecutive from the lowest one seen.
//
// With -agent it benchmarks a built agent binary instead: it starts the agent
// on fresh temporary data directories and times each start to a healthy
// GET /health, reads the agent's RSS idle and after the same load run, times
// restarts on the data directory the load filled, and prints a Markdown
// table (scripts/bench-agent.sh builds and runs it).
//
// Usage:
//
//	cfe-load [-url http://127.0.0.1:18787] [-c 8] [-d 30s] [-n N] [-rate R] [-body FILE] [-token T]
//	cfe-load -agent BIN [-starts 10] [-settle 3s] [-c 8] [-d 30s] [-n N] [-body FILE]
//	cfe-load -agent BIN -latency-report [-rates 10,50] [-c 4] [-d 30s] [-floor-n 2000] [-dir DIR] [-count-flushes=true] [-count-d 10s]
//
// With -latency-report it measures the latency of one sale (latency.go): the
// floor of one RSA signature and one fdatasync, then POST /sign-cfe at each
// rate, open loop, and prints a Markdown table. After each rate's timed run,
// strace attached to the agent counts its flushes (fsync, fdatasync…) per
// acknowledged sale in an extra run of -count-d (flushes.go); without strace
// the table says they were not counted (with CFE_STRICT_TOOLS=1, or
// -count-flushes given, that is an error).
//
// The run is bounded: no request starts after -d, nor after -n requests.
// With -rate R (open loop) the requests are sent on a timetable instead, R per
// second over the -c connections, each latency counted from the request's
// due time; -d and -n bound the requests planned, and a request planned
// within -d waits for a free connection if it must (openloop.go).
// Only loopback agents are loaded unless -allow-remote is given.
//
// Exit status: 0 when every request signed and the numbers are distinct and
// gap-free; 1 when a request failed or a number is missing or repeated; 2
// when the flags are wrong or the run could not start.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const usage = `Loads the local module of cfe-agent, or benchmarks a built agent binary.

Usage:
  cfe-load [-url URL] [-c 8] [-d 30s] [-n N] [-rate R] [-body FILE] [-token T] [-allow-remote]
  cfe-load -agent BIN [-starts 10] [-settle 3s] [-c 8] [-d 30s] [-n N] [-body FILE]
  cfe-load -agent BIN -latency-report [-rates 10,50] [-c 4] [-d 30s] [-floor-n 2000] [-dir DIR]
           [-count-flushes=true] [-count-d 10s]

Exit status: 0 every request signed, numbers gap-free; 1 a failed request or a
missing or repeated number; 2 wrong flags, or the run could not start.

Flags:
`

// options are the command-line flags.
type options struct {
	url         string
	conns       int
	duration    time.Duration
	total       int
	rate        float64
	timeout     time.Duration
	bodyFile    string
	token       string
	allowRemote bool

	agent  string
	starts int
	settle time.Duration

	latencyReport bool
	rates         []float64
	floorN        int
	dir           string
	// countFlushes: count the agent's flushes per sale with strace;
	// countFlushesGiven: -count-flushes was on the command line.
	countFlushes      bool
	countFlushesGiven bool
	countFor          time.Duration
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the whole command; it returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	logger := log.New(stderr, "cfe-load: ", 0)
	opts, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		logger.Print(err)
		return 2
	}
	body := defaultBody
	if opts.bodyFile != "" {
		if body, err = os.ReadFile(opts.bodyFile); err != nil {
			logger.Print("-body: ", err)
			return 2
		}
	}
	tmpl, err := newBodyTemplate(body)
	if err != nil {
		logger.Print("-body: ", err)
		return 2
	}
	cfg := loadConfig{baseURL: opts.url, conns: opts.conns, duration: opts.duration, total: opts.total, rate: opts.rate,
		timeout: opts.timeout, token: opts.token, body: tmpl}

	var s *summary
	var out string
	if opts.latencyReport {
		lcfg := latencyConfig{agent: opts.agent, dir: opts.dir, rates: opts.rates, floorN: opts.floorN, load: cfg,
			countFor: opts.countFor, mustCount: opts.countFlushesGiven || strictTools()}
		if lcfg.strace, lcfg.notCounted, err = flushSetup(opts.countFlushes, opts.countFlushesGiven, strictTools(), exec.LookPath, logger); err != nil {
			logger.Print(err)
			return 2
		}
		r, err := runLatency(ctx, lcfg, logger)
		if err != nil {
			logger.Print(err)
			return 2
		}
		if _, err := io.WriteString(stdout, latencyTable(r)); err != nil {
			logger.Print(err)
			return 2
		}
		if !r.ok() {
			return 1
		}
		return 0
	}
	if opts.agent != "" {
		r, err := runBench(ctx, benchConfig{agent: opts.agent, starts: opts.starts, settle: opts.settle, load: cfg}, logger)
		if err != nil {
			logger.Print(err)
			return 2
		}
		logger.Print(report(r.loadCfg, r.load))
		s, out = r.load, benchTable(r)
	} else {
		if s, err = runLoad(ctx, cfg); err != nil {
			logger.Print(err)
			return 2
		}
		out = report(cfg, s)
	}
	if _, err := io.WriteString(stdout, out); err != nil {
		logger.Print(err)
		return 2
	}
	if !s.ok() {
		return 1
	}
	return 0
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("cfe-load", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		_, _ = io.WriteString(fs.Output(), usage) // nowhere to report a failed write to stderr
		fs.PrintDefaults()
	}
	fs.StringVar(&o.url, "url", "http://127.0.0.1:18787", "base URL of the agent's local module")
	fs.IntVar(&o.conns, "c", 8, "connections, each with one request in flight")
	fs.DurationVar(&o.duration, "d", 30*time.Second, "duration: no request starts after it")
	fs.IntVar(&o.total, "n", 0, "stop after this many requests (0: only the duration bounds the run)")
	fs.Float64Var(&o.rate, "rate", 0, "open loop: send this many requests per second over the -c connections, each counted from its due time (0: closed loop, each connection sends as soon as it is answered)")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Second, "timeout of each request")
	fs.StringVar(&o.bodyFile, "body", "", "signing request to send, JSON (default: an embedded e-Ticket); its uuid is replaced")
	fs.StringVar(&o.token, "token", "", "LAN token of the terminal, sent as Authorization: Bearer")
	fs.BoolVar(&o.allowRemote, "allow-remote", false, "allow a -url that is not a loopback address")
	fs.StringVar(&o.agent, "agent", "", "benchmark this built cfe-agent binary instead of loading -url")
	fs.IntVar(&o.starts, "starts", 10, "with -agent: starts to time on fresh data directories, and restarts on that of the load run")
	fs.DurationVar(&o.settle, "settle", 3*time.Second, "with -agent: idle time before reading the agent's RSS")
	fs.BoolVar(&o.latencyReport, "latency-report", false, "with -agent: measure the floor (one RSA signature, one fdatasync) and POST /sign-cfe at each of -rates, open loop over -c connections (4 unless given), and print the table")
	rates := fs.String("rates", "10,50", "with -latency-report: the open-loop rates, in requests per second, separated by commas")
	fs.IntVar(&o.floorN, "floor-n", 2000, "with -latency-report: how many signatures and fdatasyncs the floor times")
	fs.BoolVar(&o.countFlushes, "count-flushes", true, "with -latency-report: after each rate's timed run, count the agent's fsync, fdatasync… per acknowledged sale with strace attached to it, in an extra run of -count-d (without strace on PATH: not counted, said in the report)")
	fs.DurationVar(&o.countFor, "count-d", 10*time.Second, "with -latency-report: duration of each rate's run counted by strace")
	fs.StringVar(&o.dir, "dir", "", "with -agent: the folder to make the agent's temporary data directory in (default: the system's temporary folder); its disk is the one measured")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	for _, f := range strings.Split(*rates, ",") {
		r, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || !(r > 0) || math.IsInf(r, 0) {
			return o, fmt.Errorf("-rates %q: each rate must be a positive number of requests per second", *rates)
		}
		o.rates = append(o.rates, r)
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if o.latencyReport && !set["c"] {
		o.conns = 4 // the measure: 4 connections
	}
	o.countFlushesGiven = set["count-flushes"]
	return o, o.validate(set)
}

// validate checks the options; set names the flags given on the command line.
func (o options) validate(set map[string]bool) error {
	switch {
	case o.conns < 1:
		return errors.New("-c must be at least 1")
	case o.duration <= 0:
		return errors.New("-d must be positive")
	case o.total < 0:
		return errors.New("-n must not be negative")
	case o.rate < 0 || math.IsNaN(o.rate) || math.IsInf(o.rate, 0):
		return errors.New("-rate must be a positive number of requests per second, or 0")
	case o.timeout <= 0:
		return errors.New("-timeout must be positive")
	}
	if o.latencyReport {
		switch {
		case o.agent == "":
			return errors.New("-latency-report needs -agent: it starts the agent itself")
		case o.rate != 0 || set["n"] || set["starts"] || set["settle"]:
			return errors.New("-latency-report sets its own rates (-rates) and measures no starts: -rate, -n, -starts and -settle do not go with it")
		case o.floorN < 1:
			return errors.New("-floor-n must be at least 1")
		case o.countFor <= 0:
			return errors.New("-count-d must be positive")
		}
	} else {
		for _, name := range []string{"rates", "floor-n", "count-flushes", "count-d"} {
			if set[name] {
				return fmt.Errorf("-%s goes only with -latency-report", name)
			}
		}
	}
	if set["dir"] && o.agent == "" {
		return errors.New("-dir goes only with -agent")
	}
	if o.agent != "" {
		for _, name := range []string{"url", "token", "allow-remote"} {
			if set[name] {
				return fmt.Errorf("-%s does not go with -agent: the agent is started on a loopback port", name)
			}
		}
		if o.starts < 1 {
			return errors.New("-starts must be at least 1")
		}
		if o.settle < 0 {
			return errors.New("-settle must not be negative")
		}
		return nil
	}
	for _, name := range []string{"starts", "settle"} {
		if set[name] {
			return fmt.Errorf("-%s goes only with -agent", name)
		}
	}
	return checkTarget(o.url, o.allowRemote)
}

// checkTarget accepts an http(s) base URL whose host is a loopback address or
// "localhost"; any other host only when remote targets are allowed.
func checkTarget(raw string, allowRemote bool) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("-url %q is not an http(s) URL", raw)
	}
	if u.Path != "" && u.Path != "/" || u.RawQuery != "" {
		return fmt.Errorf("-url %q: give the agent's base URL, without a path or query", raw)
	}
	if allowRemote || isLoopback(u.Hostname()) {
		return nil
	}
	return fmt.Errorf("-url %q is not a loopback address: pass -allow-remote to load another machine", raw)
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
