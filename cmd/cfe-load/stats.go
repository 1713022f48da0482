package main

import (
	"cmp"
	"slices"
	"time"
)

// series is one numbering sequence of the agent: a CFE type and a serie.
type series struct {
	tipo  int
	serie string
}

// latencyStats summarises the latencies of the answered requests.
type latencyStats struct {
	count              int
	p50, p90, p99, max time.Duration
}

// latencies computes the nearest-rank percentiles of d. It sorts d in place.
func latencies(d []time.Duration) latencyStats {
	slices.Sort(d)
	s := latencyStats{count: len(d), p50: percentile(d, 50), p90: percentile(d, 90), p99: percentile(d, 99)}
	if len(d) > 0 {
		s.max = d[len(d)-1]
	}
	return s
}

// percentile returns the p-th percentile (0 < p <= 100) of sorted by the
// nearest-rank method: the smallest sample with at least p% of the samples
// at or below it, that is the one of rank ceil(p*n/100). Zero when empty.
func percentile(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := (p*len(sorted) + 99) / 100
	return sorted[max(rank, 1)-1]
}

// maxListed bounds the numbers a seriesCheck lists, so that a run that went
// badly wrong still prints a short report.
const maxListed = 10

// seriesCheck is the verdict on the numbers answered in one series: every
// number from the lowest to the highest must have been answered exactly once.
type seriesCheck struct {
	series
	count           int   // numbers answered, repeats included
	lowest, highest int64 // 0 when count is 0
	duplicates      int   // answers that repeated a number already answered
	missing         int64 // numbers between lowest and highest never answered
	// The first few repeated and missing numbers, in increasing order.
	firstDuplicates, firstMissing []int64
}

func (c seriesCheck) ok() bool { return c.duplicates == 0 && c.missing == 0 }

// checkNumbers checks, for each series, that the numbers answered are
// distinct and consecutive from the lowest one seen. It sorts the slices of
// nums in place and returns one verdict per series, ordered by type and serie.
func checkNumbers(nums map[series][]int64) []seriesCheck {
	checks := make([]seriesCheck, 0, len(nums))
	for s, ns := range nums {
		checks = append(checks, checkSeries(s, ns))
	}
	slices.SortFunc(checks, func(a, b seriesCheck) int {
		return cmp.Or(cmp.Compare(a.tipo, b.tipo), cmp.Compare(a.serie, b.serie))
	})
	return checks
}

func checkSeries(s series, ns []int64) seriesCheck {
	c := seriesCheck{series: s, count: len(ns)}
	if len(ns) == 0 {
		return c
	}
	slices.Sort(ns)
	c.lowest, c.highest = ns[0], ns[len(ns)-1]
	for i := 1; i < len(ns); i++ {
		prev, n := ns[i-1], ns[i]
		if n == prev {
			c.duplicates++
			if len(c.firstDuplicates) < maxListed && !slices.Contains(c.firstDuplicates, n) {
				c.firstDuplicates = append(c.firstDuplicates, n)
			}
			continue
		}
		c.missing += n - prev - 1
		for m := prev + 1; m < n && len(c.firstMissing) < maxListed; m++ {
			c.firstMissing = append(c.firstMissing, m)
		}
	}
	return c
}
