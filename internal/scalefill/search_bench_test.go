package scalefill_test

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/scalefill"
	"github.com/cfe-agent/cfe-agent/store"
)

// BenchmarkSearch3M times one page (20 CFEs, read whole) of store.Search
// over a store of 3 M CFEs (CFE_BENCH_N to change it), the /caja page's
// query (issue 33's target: ≤ 50 ms). It runs only with CFE_BENCH_3M=1:
// the store is filled once into $TMPDIR/cfe-bench-search-<n>/ and kept
// there for later runs (≈ 10 GB at 3 M; hours on a loaded machine). A fill
// that was stopped resumes where it stopped; with CFE_BENCH_PARTIAL=1 the
// benchmark searches what is there without filling more.
func BenchmarkSearch3M(b *testing.B) {
	if os.Getenv("CFE_BENCH_3M") != "1" {
		b.Skip("set CFE_BENCH_3M=1 to fill (once) and search a store of 3 M CFEs")
	}
	n := 3_000_000
	if v := os.Getenv("CFE_BENCH_N"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatal(err)
		}
	}
	dir := filepath.Join(os.TempDir(), "cfe-bench-search-"+strconv.Itoa(n))
	path := filepath.Join(dir, "agent.db")
	p := plan(n)
	db := fillSearchStore(b, dir, path, p)
	defer db.Close()
	st, err := db.Stats(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if int(st.CFEs) != n {
		p = plan(int(st.CFEs)) // CFE_BENCH_PARTIAL: searched as far as it was filled
		b.Logf("searching %d CFEs of %d (CFE_BENCH_PARTIAL)", st.CFEs, n)
	}
	n = int(st.CFEs)
	last := p.Last()
	month := cfe.Date{Year: last.Year, Month: last.Month, Day: 1}
	cases := []struct {
		name string
		q    store.SearchQuery
	}{
		{"all/first-page", store.SearchQuery{}},
		{"all/page-50000", store.SearchQuery{Page: 50000}},
		{"all/last-page", store.SearchQuery{Page: n / 20}},
		{"one-day", store.SearchQuery{From: last, To: last}},
		{"one-month/page-10", store.SearchQuery{From: month, To: last, Page: 10}},
		{"type-serie", store.SearchQuery{Type: cfe.ETicket, Serie: "A"}},
		{"number", store.SearchQuery{Nro: int64(n / 2)}},
		{"text/word-in-every-9th", store.SearchQuery{Text: "yerba"}},
		{"text/two-words", store.SearchQuery{Text: "yer arroz"}},
		{"text/word-one-month", store.SearchQuery{Text: "yerba", From: month, To: last}},
		{"text/no-match", store.SearchQuery{Text: "zzzz"}},
	}
	for _, c := range cases {
		q := c.q
		if q.Page == 0 {
			q.Page = 1
		}
		q.PageSize = 20
		b.Run(c.name, func(b *testing.B) {
			var res store.SearchResult
			for b.Loop() {
				if res, err = db.Search(ctx, q); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(res.Total), "total")
			b.ReportMetric(float64(len(res.CFEs)), "page")
		})
	}
}

// fillSearchStore opens the store at path in dir, filling it (or the rest
// of it) with p's CFEs unless CFE_BENCH_PARTIAL=1.
func fillSearchStore(b *testing.B, dir, path string, p scalefill.Plan) *store.DB {
	b.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	_, signedAt := p.Day(0)
	tpls, err := templates(dir, nTemplates)
	if err != nil {
		if tpls, err = scalefill.Templates(ctx, dir, nTemplates, signedAt); err != nil {
			b.Fatal(err)
		}
	}
	db, err := store.Open(path, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	st, err := db.Stats(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if st.Ranges == 0 {
		if err := db.PutRange(ctx, fillRange); err != nil {
			b.Fatal(err)
		}
	}
	have := int(st.CFEs)
	if have >= p.N || os.Getenv("CFE_BENCH_PARTIAL") == "1" {
		return db
	}
	start := time.Now()
	if err := scalefill.NewGenerator(p, tpls, fillRange).Fill(ctx, db, have, p.N, 5000); err != nil {
		b.Fatal(err)
	}
	b.Logf("filled CFEs %d to %d in %s", have+1, p.N, time.Since(start).Round(time.Second))
	return db
}
