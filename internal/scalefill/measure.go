package scalefill

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/store"
)

// Measures are what Measure finds on a filled store.
type Measures struct {
	N         int
	FileBytes int64 // the file's size
	// DiskBytes is the space it takes on disk; BytesPerCFE is DiskBytes per
	// CFE.
	DiskBytes   int64
	BytesPerCFE float64
	// Open is store.Open; Start is Open plus the first state (what the
	// agent reads for its first /health): the time from start to healthy of
	// the store. FastStart says whether Open started fast (the file a
	// verified clean Close left: store/verified.go); Checked is then the
	// time from the start until the whole-file check, run in the
	// background, has ended (Open when it ran at start). RSSStart is the
	// resident memory right after the start (kB).
	Open, Start, Checked time.Duration
	FastStart            bool
	RSSStart             int64
	// FullOpen is store.Open of the same file without the record of the
	// last verified Close (as after a crash): the whole-file check at start.
	FullOpen time.Duration
	// State is the median of the reads /state makes (RangeStatus, Stats,
	// CountByDate of today, Last 10).
	State time.Duration
	// LookupUUID and LookupFolio are medians of lookups of random CFEs.
	LookupUUID, LookupFolio time.Duration
	// DayScan is the median read of one whole day (ListByDate), DayCFEs its size.
	DayScan time.Duration
	DayCFEs int
	// RSSIdle is the process's resident memory after Open and the first
	// state; RSSAfterScan after the day scans (kB, Linux; 0 elsewhere).
	// Most of it is the store file's pages mapped by bbolt (Open reads
	// every page once); AnonIdle and AnonAfterScan are the process's own
	// memory (RssAnon).
	RSSIdle, RSSAfterScan   int64
	AnonIdle, AnonAfterScan int64
}

// Measure opens the store at path (filled by plan with g) and measures it.
// It checks what it reads: each lookup must return the generated CFE with
// its exact XML, the day scan every CFE of the day in order.
func Measure(ctx context.Context, path string, plan Plan, g *Generator, opts store.Options) (_ Measures, err error) {
	m := Measures{N: plan.N}
	fi, err := os.Stat(path)
	if err != nil {
		return m, err
	}
	m.FileBytes, m.DiskBytes = fi.Size(), diskBytes(fi)
	m.BytesPerCFE = float64(m.DiskBytes) / float64(plan.N)
	today := plan.Last()
	if opts.Now == nil {
		_, end := plan.Day(plan.N - 1)
		opts.Now = func() time.Time { return end }
	}

	t0 := time.Now()
	db, err := store.Open(path, opts)
	if err != nil {
		return m, err
	}
	defer func() { err = errors.Join(err, db.Close()) }()
	m.Open = time.Since(t0)
	if err := state(ctx, db, today); err != nil {
		return m, err
	}
	m.Start = time.Since(t0)
	m.RSSStart = rssKB("VmRSS:")
	fast, checked := db.FileCheck()
	m.FastStart = fast
	<-checked
	m.Checked = time.Since(t0)
	if err := db.Damaged(); err != nil {
		return m, err
	}
	runtime.GC()
	m.RSSIdle, m.AnonIdle = rssKB("VmRSS:"), rssKB("RssAnon:")

	m.State, err = median(21, func(int) error { return state(ctx, db, today) })
	if err != nil {
		return m, err
	}
	rng := rand.New(rand.NewPCG(plan.Seed, 99))
	m.LookupUUID, err = median(301, func(int) error {
		i := rng.IntN(plan.N)
		got, err := db.FindByUUID(ctx, UUID(plan.Seed, i))
		return same(got, err, g, i)
	})
	if err != nil {
		return m, err
	}
	m.LookupFolio, err = median(301, func(int) error {
		i := rng.IntN(plan.N)
		got, err := db.FindByNumber(ctx, g.rg.Type, g.rg.Serie, int64(i+1))
		return same(got, err, g, i)
	})
	if err != nil {
		return m, err
	}
	// A day in the middle of the plan, a different one each time.
	days := (plan.N + plan.PerDay - 1) / plan.PerDay
	m.DayScan, err = median(5, func(k int) error {
		d := max(0, days/2-k)
		day := plan.First.AddDays(d)
		list, err := db.ListByDate(ctx, day, day, plan.PerDay+1)
		if err != nil {
			return err
		}
		want := min(plan.PerDay, plan.N-d*plan.PerDay)
		if len(list) != want {
			return fmt.Errorf("day %s: %d CFEs listed, want %d", day, len(list), want)
		}
		for j, c := range list {
			if c.Nro != int64(d*plan.PerDay+j+1) || len(c.XML) == 0 {
				return fmt.Errorf("day %s: CFE %d of the list is number %d", day, j, c.Nro)
			}
		}
		m.DayCFEs = len(list)
		return nil
	})
	if err != nil {
		return m, err
	}
	m.RSSAfterScan, m.AnonAfterScan = rssKB("VmRSS:"), rssKB("RssAnon:")
	return m, nil
}

// MeasureFullOpen times store.Open of the closed store at path without the
// record of its last verified Close: the whole-file check at start, as
// after a crash.
func MeasureFullOpen(path string, opts store.Options) (time.Duration, error) {
	if err := os.Remove(store.VerifiedPath(path)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return 0, err
	}
	t0 := time.Now()
	db, err := store.Open(path, opts)
	if err != nil {
		return 0, err
	}
	d := time.Since(t0)
	if fast, _ := db.FileCheck(); fast {
		err = errors.New("store.Open started fast without the record of a verified close")
	}
	return d, errors.Join(err, db.Close())
}

func state(ctx context.Context, db *store.DB, today cfe.Date) error {
	if _, err := db.RangeStatus(ctx, today); err != nil {
		return err
	}
	if _, err := db.Stats(ctx); err != nil {
		return err
	}
	if _, err := db.CountByDate(ctx, today, today); err != nil {
		return err
	}
	_, err := db.Last(ctx, 10)
	return err
}

func same(got *cfe.Issued, err error, g *Generator, i int) error {
	if err != nil {
		return err
	}
	want := g.CFE(i)
	if got.UUID != want.UUID || got.Nro != want.Nro || !bytes.Equal(got.XML, want.XML) || got.DatosQR != want.DatosQR {
		return fmt.Errorf("CFE %d read back differs from the one loaded (uuid %s, number %d)", i, got.UUID, got.Nro)
	}
	return nil
}

// median runs fn n times and returns the median duration.
func median(n int, fn func(int) error) (time.Duration, error) {
	ds := make([]time.Duration, n)
	for k := range n {
		t := time.Now()
		if err := fn(k); err != nil {
			return 0, err
		}
		ds[k] = time.Since(t)
	}
	slices.Sort(ds)
	return ds[n/2], nil
}

// rssKB reads a line of /proc/self/status (VmRSS:, RssAnon:) in kB; 0 when
// it cannot.
func rssKB(name string) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, name); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}

// StartRow formats m as a row of BENCHMARKS.md's start table.
func (m Measures) StartRow() string {
	ms := func(d time.Duration) string { return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 1, 64) }
	mb := func(kb int64) string { return strconv.FormatFloat(float64(kb)/1024, 'f', 0, 64) }
	return fmt.Sprintf("| %d | %v | %s | %s | %s | %s MB | %s |",
		m.N, m.FastStart, ms(m.Open), ms(m.Start), ms(m.Checked), mb(m.RSSStart), ms(m.FullOpen))
}

// Row formats m as a row of BENCHMARKS.md's scale table.
func (m Measures) Row() string {
	ms := func(d time.Duration) string { return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 3, 64) }
	mb := func(kb int64) string { return strconv.FormatFloat(float64(kb)/1024, 'f', 0, 64) }
	return fmt.Sprintf("| %d | %.0f / %.0f MB | %.0f | %s | %s | %s | %s | %s | %s (%d CFEs) | %s / %s MB | %s / %s MB |",
		m.N, float64(m.FileBytes)/1e6, float64(m.DiskBytes)/1e6, m.BytesPerCFE, ms(m.Open), ms(m.Start), ms(m.State), ms(m.LookupUUID),
		ms(m.LookupFolio), ms(m.DayScan), m.DayCFEs, mb(m.RSSIdle), mb(m.RSSAfterScan), mb(m.AnonIdle), mb(m.AnonAfterScan))
}
