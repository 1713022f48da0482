package main

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// report describes a load run for a person at a terminal.
func report(cfg loadConfig, s *summary) string {
	var w strings.Builder
	fmt.Fprintf(&w, "%d requests in %s over %d connections to %s\n",
		s.requests, s.elapsed.Round(time.Millisecond), cfg.conns, cfg.baseURL)
	if s.openLoop {
		fmt.Fprintf(&w, "  open loop:   %s req/s, %d requests planned; latency counted from each one's due time\n",
			rateString(cfg.rate), s.scheduled)
		fmt.Fprintf(&w, "  late starts: %s\n", lateLine(s))
	}
	if s.interrupted {
		fmt.Fprintln(&w, "  interrupted: stopped early by a signal")
	}
	fmt.Fprintf(&w, "  signed:      %d\n", s.signed)
	fmt.Fprintf(&w, "  errors:      %d\n", s.requests-s.signed)
	for _, kind := range slices.Sorted(maps.Keys(s.errors)) {
		fmt.Fprintf(&w, "    %-24s %d  (first: %s)\n", kind, s.errors[kind], s.errorSample[kind])
	}
	fmt.Fprintf(&w, "  throughput:  %.1f req/s\n", s.throughput())
	fmt.Fprintf(&w, "  latency:     %s\n", latencyLine(s.latency))
	fmt.Fprintf(&w, "  numbers:     %s\n", numbersLine(s.numbers))
	verdict := "OK"
	if !s.ok() {
		verdict = "FAILED"
	}
	fmt.Fprintf(&w, "result: %s\n", verdict)
	return w.String()
}

func latencyLine(l latencyStats) string {
	if l.count == 0 {
		return "no answers"
	}
	return fmt.Sprintf("p50 %s, p90 %s, p99 %s, max %s", ms(l.p50), ms(l.p90), ms(l.p99), ms(l.max))
}

// lateLine says how many requests of an open-loop run started late, and by
// how much the starts were delayed.
func lateLine(s *summary) string {
	return fmt.Sprintf("%d of %d more than %s after their due time (start delay p50 %s, p99 %s, max %s)",
		s.late, s.delays.count, lateAfter, ms(s.delays.p50), ms(s.delays.p99), ms(s.delays.max))
}

// rateString prints a request rate without needless decimals.
func rateString(r float64) string { return strconv.FormatFloat(r, 'f', -1, 64) }

// numbersLine describes the numbers of every series on one line.
func numbersLine(checks []seriesCheck) string {
	if len(checks) == 0 {
		return "none signed"
	}
	parts := make([]string, len(checks))
	for i, c := range checks {
		parts[i] = describeSeries(c)
	}
	return strings.Join(parts, "; ")
}

func describeSeries(c seriesCheck) string {
	d := fmt.Sprintf("tipo %d serie %s: %d numbers, %d..%d", c.tipo, c.serie, c.count, c.lowest, c.highest)
	if c.ok() {
		return d + ", distinct and gap-free"
	}
	if c.duplicates > 0 {
		d += fmt.Sprintf(", %d REPEATED (%s)", c.duplicates, list(c.firstDuplicates, int64(c.duplicates)))
	}
	if c.missing > 0 {
		d += fmt.Sprintf(", %d MISSING (%s)", c.missing, list(c.firstMissing, c.missing))
	}
	return d
}

// list prints the first numbers of a longer list of n.
func list(first []int64, n int64) string {
	s := make([]string, len(first))
	for i, v := range first {
		s[i] = fmt.Sprint(v)
	}
	out := strings.Join(s, ", ")
	if n > int64(len(first)) {
		out += ", …"
	}
	return out
}

// ms prints a duration in milliseconds with one decimal.
func ms(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}
