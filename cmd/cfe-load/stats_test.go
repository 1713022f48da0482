package main

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"
)

func msList(ns ...int) []time.Duration {
	d := make([]time.Duration, len(ns))
	for i, n := range ns {
		d[i] = time.Duration(n) * time.Millisecond
	}
	return d
}

func TestLatencies(t *testing.T) {
	t.Parallel()
	oneToHundred := make([]int, 100)
	for i := range oneToHundred {
		oneToHundred[i] = i + 1
	}
	rand.Shuffle(len(oneToHundred), func(i, j int) { oneToHundred[i], oneToHundred[j] = oneToHundred[j], oneToHundred[i] })

	// Nearest rank: the p-th percentile of n samples is the one of rank
	// ceil(p*n/100), counting from 1 in increasing order.
	tests := []struct {
		name               string
		samples            []time.Duration
		p50, p90, p99, max int // ms
	}{
		// ranks 50, 90, 99 of 1..100 ms.
		{"hundred shuffled", msList(oneToHundred...), 50, 90, 99, 100},
		// ranks ceil(5)=5, ceil(9)=9, ceil(9.9)=10.
		{"ten", msList(10, 9, 8, 7, 6, 5, 4, 3, 2, 1), 5, 9, 10, 10},
		// ranks ceil(1.5)=2, ceil(2.7)=3, ceil(2.97)=3.
		{"three", msList(30, 10, 20), 20, 30, 30, 30},
		{"one", msList(7), 7, 7, 7, 7},
		// A slow outlier shows at p99 and max only: ranks 50, 90, 99 of
		// 99 samples of 2 ms and one of 500 ms are all 2 ms, the 100th is 500.
		{"outlier", append(msList(500), msList(repeat(2, 99)...)...), 2, 2, 2, 500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := latencies(tt.samples)
			want := latencyStats{count: len(tt.samples), p50: ms1(tt.p50), p90: ms1(tt.p90), p99: ms1(tt.p99), max: ms1(tt.max)}
			if got != want {
				t.Errorf("latencies = %+v, want %+v", got, want)
			}
		})
	}
	if got := latencies(nil); got != (latencyStats{}) {
		t.Errorf("latencies(nil) = %+v, want zero", got)
	}
}

func ms1(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func repeat(v, n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = v
	}
	return s
}

func TestCheckNumbers(t *testing.T) {
	t.Parallel()
	ticketA := series{101, "A"}
	tests := []struct {
		name string
		nums []int64
		want seriesCheck
	}{
		{"consecutive from 1, any order", []int64{3, 1, 2, 5, 4},
			seriesCheck{series: ticketA, count: 5, lowest: 1, highest: 5}},
		{"consecutive from the lowest seen", []int64{43, 41, 42},
			seriesCheck{series: ticketA, count: 3, lowest: 41, highest: 43}},
		// 3, 4 and 7, 8 were never answered.
		{"gaps", []int64{9, 1, 6, 2, 5},
			seriesCheck{series: ticketA, count: 5, lowest: 1, highest: 9, missing: 4, firstMissing: []int64{3, 4, 7, 8}}},
		// 2 answered twice, 3 three times: three answers repeated a number.
		{"repeats", []int64{3, 1, 2, 3, 2, 3},
			seriesCheck{series: ticketA, count: 6, lowest: 1, highest: 3, duplicates: 3, firstDuplicates: []int64{2, 3}}},
		// 2..999 missing: 998 numbers, the first ten listed.
		{"wide gap", []int64{1000, 1},
			seriesCheck{series: ticketA, count: 2, lowest: 1, highest: 1000, missing: 998,
				firstMissing: []int64{2, 3, 4, 5, 6, 7, 8, 9, 10, 11}}},
		{"one number", []int64{17}, seriesCheck{series: ticketA, count: 1, lowest: 17, highest: 17}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := checkNumbers(map[series][]int64{ticketA: tt.nums})
			if len(got) != 1 || !reflect.DeepEqual(got[0], tt.want) {
				t.Fatalf("checkNumbers = %+v, want [%+v]", got, tt.want)
			}
			wantOK := tt.want.missing == 0 && tt.want.duplicates == 0
			if got[0].ok() != wantOK {
				t.Errorf("ok() = %v, want %v", got[0].ok(), wantOK)
			}
		})
	}

	t.Run("series are checked apart, in order", func(t *testing.T) {
		// The same numbers in two series are no repeat; a gap in one series
		// is not filled by the other.
		got := checkNumbers(map[series][]int64{
			{111, "A"}: {1, 3},
			{101, "B"}: {1, 2},
			{101, "A"}: {2, 1},
		})
		want := []seriesCheck{
			{series: series{101, "A"}, count: 2, lowest: 1, highest: 2},
			{series: series{101, "B"}, count: 2, lowest: 1, highest: 2},
			{series: series{111, "A"}, count: 2, lowest: 1, highest: 3, missing: 1, firstMissing: []int64{2}},
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("checkNumbers =\n%+v\nwant\n%+v", got, want)
		}
	})
}

func TestMedian(t *testing.T) {
	t.Parallel()
	tests := []struct {
		samples []time.Duration
		want    time.Duration
	}{
		{msList(30, 10, 20), 20 * time.Millisecond},
		{msList(40, 10, 30, 20), 25 * time.Millisecond}, // (20+30)/2
		{msList(5), 5 * time.Millisecond},
		{nil, 0},
	}
	for _, tt := range tests {
		if got := median(tt.samples); got != tt.want {
			t.Errorf("median(%v) = %v, want %v", tt.samples, got, tt.want)
		}
	}
}

func TestProcStatusBytes(t *testing.T) {
	t.Parallel()
	status := []byte("Name:\tcfe-agent\nVmPeak:\t 1261096 kB\nVmHWM:\t   25104 kB\nVmRSS:\t   14424 kB\nThreads:\t7\n")
	for key, want := range map[string]int64{"VmRSS": 14424 * 1024, "VmHWM": 25104 * 1024} {
		if got, err := procStatusBytes(status, key); err != nil || got != want {
			t.Errorf("procStatusBytes(%s) = %d, %v; want %d", key, got, err, want)
		}
	}
	for _, key := range []string{"VmSwap", "Vm", "Threads"} { // absent, a prefix, not in kB
		if got, err := procStatusBytes(status, key); err == nil {
			t.Errorf("procStatusBytes(%s) = %d, want an error", key, got)
		}
	}
}
