package store_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/store"
)

// wantSearch is what a search must find among docs, worked out here apart
// from the store's indexes: every doc read whole and matched by hand,
// newest first.
func wantSearch(t *testing.T, docs []*cfe.Issued, q store.SearchQuery) []string {
	t.Helper()
	var match []*cfe.Issued
	for _, d := range docs {
		day := cfe.DateOf(d.TmstFirma.In(cfe.Montevideo))
		if !q.From.IsZero() && day.Before(q.From) || !q.To.IsZero() && q.To.Before(day) ||
			q.Type != 0 && d.Type != q.Type || q.Serie != "" && d.Serie != q.Serie || q.Nro != 0 && d.Nro != q.Nro {
			continue
		}
		st, err := cfe.ReadSearchText(d.XML)
		if err != nil {
			t.Fatal(err)
		}
		hay := strings.Fields(strings.ToLower(st.Receiver + " " + strings.Join(st.Items, " ")))
		hay = append(hay, strings.ToLower(st.Document))
		ok := true
		for _, w := range strings.Fields(strings.ToLower(q.Text)) {
			if !slices.ContainsFunc(hay, func(h string) bool { return strings.HasPrefix(h, w) }) {
				ok = false
			}
		}
		if ok {
			match = append(match, d)
		}
	}
	slices.SortFunc(match, func(a, b *cfe.Issued) int { return b.TmstFirma.Compare(a.TmstFirma) })
	var out []string
	for _, d := range match {
		out = append(out, d.UUID)
	}
	return out
}

// checkSearches runs a table of searches over db and compares every page
// with wantSearch's answer.
func checkSearches(t *testing.T, db *store.DB, docs []*cfe.Issued) {
	t.Helper()
	d := func(y int, m time.Month, day int) cfe.Date { return cfe.Date{Year: y, Month: m, Day: day} }
	queries := []store.SearchQuery{
		{},
		{From: d(2025, time.January, 1), To: d(2025, time.December, 31)},
		{From: d(2024, time.March, 1)},
		{To: d(2024, time.June, 30)},
		{Type: cfe.EFactura},
		{Serie: "A", From: d(2025, time.June, 1)},
		{Nro: 5},
		{Nro: 5, Type: cfe.ETicket},
		{Nro: 7, Text: "juan"},
		{Text: "manz"},
		{Text: "MANZANAS"},
		{Text: "juan per"},
		{Text: "dgi uvas"},
		{Text: "manzanas", From: d(2025, time.January, 1), To: d(2025, time.December, 31), Type: cfe.ETicket},
		{Text: "2148443600"}, // the document of DGI's receivers, begun
		{Text: "nadie"},
	}
	empty := 0
	for _, q := range queries {
		want := wantSearch(t, docs, q)
		if len(want) == 0 {
			empty++
		}
		for _, size := range []int{7, 100} {
			for page := 1; page <= len(want)/size+2; page++ {
				q.Page, q.PageSize = page, size
				res, err := db.Search(ctx, q)
				if err != nil {
					t.Fatalf("Search %+v: %v", q, err)
				}
				if res.Total != len(want) || res.Limited {
					t.Errorf("Search %+v: total %d (limited %v), want %d", q, res.Total, res.Limited, len(want))
				}
				var got []string
				for _, c := range res.CFEs {
					got = append(got, c.UUID)
					if len(c.XML) == 0 {
						t.Errorf("Search %+v: %s comes without its XML", q, c.UUID)
					}
				}
				from := min((page-1)*size, len(want))
				if w := want[from:min(len(want), from+size)]; !slices.Equal(got, w) {
					t.Errorf("Search %+v: page %v, want %v", q, got, w)
				}
			}
		}
	}
	if empty > 1 { // only "nadie" finds nothing
		t.Fatalf("%d searches expect nothing: the table proves little", empty)
	}
}

// TestDB_Search: searches by date, type, serie, number and text over three
// years of CFEs, two of them moved to yearly archives, page by page, equal
// what reading every CFE finds; again after a schema-3 file (without the
// search bucket) is migrated; and a CFE signed after that is found.
func TestDB_Search(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "agent.db")
	now := time.Time{}
	db, docs := threeYears(t, path, &now, store.Options{})
	res, err := db.Archive(ctx, cfe.Date{Year: 2026, Month: time.January, Day: 1})
	if err != nil || res.Moved == 0 {
		t.Fatalf("Archive: moved %d, %v", res.Moved, err)
	}
	checkSearches(t, db, docs)

	db.Close()
	downgradeToV3(t, path)
	db, err = store.Open(path, store.WithMigrateBatch(store.Options{Now: func() time.Time { return now }}, 7))
	if err != nil {
		t.Fatal(err)
	}
	checkAtEnd(t, db, path)
	checkSearches(t, db, docs)

	r, err := db.Reserve(ctx, cfe.ETicket, cfe.DateOf(now))
	if err != nil {
		t.Fatal(err)
	}
	doc := issuedFor(r, "after-migration", now)
	doc.XML = asStored(sampleXMLs(t)[0], r.Type, r.Serie, r.Nro, "x")
	if err := db.Commit(ctx, r, doc); err != nil {
		t.Fatal(err)
	}
	checkSearches(t, db, append(docs, doc))

	for _, q := range []store.SearchQuery{
		{Page: 0, PageSize: 10},
		{Page: 1, PageSize: 0},
		{Page: 1, PageSize: store.MaxSearchPage + 1},
		{Page: 1, PageSize: 10, From: cfe.Date{Year: 2026, Month: 2, Day: 1}, To: cfe.Date{Year: 2026, Month: 1, Day: 1}},
		{Page: 1, PageSize: 10, Text: " ; - "},
	} {
		if _, err := db.Search(ctx, q); cfe.ErrorCode(err) != cfe.EINVALID {
			t.Errorf("Search %+v: %v, want EINVALID", q, err)
		}
	}
}

// downgradeToV3 makes the store at path a schema-3 file: no search bucket.
func downgradeToV3(t *testing.T, path string) {
	t.Helper()
	raw, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	err = raw.Update(func(tx *bolt.Tx) error {
		if err := tx.DeleteBucket([]byte("search")); err != nil {
			return err
		}
		return tx.Bucket([]byte("meta")).Put([]byte("schema"), []byte("3"))
	})
	if err != nil {
		t.Fatal(fmt.Errorf("downgrade: %w", err))
	}
}

// TestDB_SearchConcurrentCommits: CFEs committed from many goroutines at
// once (each commit reads its words) are all found by their words.
func TestDB_SearchConcurrentCommits(t *testing.T) {
	t.Parallel()
	db, _ := openStore(t, store.Options{})
	putRanges(t, db, newRange(cfe.ETicket, "A", 1, 1000, farAway))
	samples := sampleXMLs(t)
	const n = 24
	errs := make(chan error, n)
	for i := range n {
		go func() {
			r, err := db.Reserve(ctx, cfe.ETicket, today)
			if err != nil {
				errs <- err
				return
			}
			doc := issuedFor(r, fmt.Sprintf("conc-%02d", i), signAt)
			doc.XML = asStored(samples[0], r.Type, r.Serie, r.Nro, fmt.Sprint(i)) // Juan Perez: Bananas, Manzanas
			errs <- db.Commit(ctx, r, doc)
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	for _, text := range []string{"juan", "pérez bananas", "MANZ"} {
		res, err := db.Search(ctx, store.SearchQuery{Text: text, Page: 1, PageSize: 100})
		if err != nil || res.Total != n {
			t.Errorf("Search %q: %d found (%v), want %d", text, res.Total, err, n)
		}
	}
}
