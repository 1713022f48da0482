package store_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/store"
)

// dumpBuckets reads every bucket of the file at path with bbolt alone:
// bucket → key → value.
func dumpBuckets(t *testing.T, path string) map[string]map[string]string {
	t.Helper()
	raw, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	out := map[string]map[string]string{}
	err = raw.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			m := map[string]string{}
			out[string(name)] = m
			return b.ForEach(func(k, v []byte) error { m[string(k)] = string(v); return nil })
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDB_BulkLoad proves that BulkLoad writes what Commit writes: the same
// CFEs, committed one by one in one file and loaded in bulk in another at the
// same clock, give files whose every bucket holds the same bytes.
func TestDB_BulkLoad(t *testing.T) {
	t.Parallel()
	samples := sampleXMLs(t)
	clock := func() time.Time { return time.Date(2026, 3, 10, 15, 0, 0, 0, time.UTC) }
	dir := t.TempDir()
	journal := func(name string) string { return filepath.Join(dir, name+"-journal.json") }
	one, err := store.Open(filepath.Join(dir, "one.db"), store.Options{Now: clock, Journal: journal("one")})
	if err != nil {
		t.Fatal(err)
	}
	bulk, err := store.Open(filepath.Join(dir, "bulk.db"), store.Options{Now: clock, Journal: journal("bulk")})
	if err != nil {
		t.Fatal(err)
	}
	ranges := []cfe.CAERange{newRange(cfe.ETicket, "A", 1, 1000, farAway), newRange(cfe.EFactura, "B", 1, 1000, farAway)}
	putRanges(t, one, ranges...)
	putRanges(t, bulk, ranges...)
	var docs []*cfe.Issued
	for i := range 30 {
		typ := cfe.ETicket
		if i%4 == 0 {
			typ = cfe.EFactura
		}
		r := reserve(t, one, typ)
		doc := issuedFor(r, fmt.Sprintf("bulk-%02d", i), signAt.Add(time.Duration(i)*time.Minute))
		doc.XML = fmt.Appendf(bytes.Clone(samples[i%len(samples)]), "<!--%d-->", i)
		if err := one.Commit(ctx, r, doc); err != nil {
			t.Fatal(err)
		}
		docs = append(docs, doc)
	}
	for _, part := range [][]*cfe.Issued{docs[:7], docs[7:]} { // two transactions
		if err := bulk.BulkLoad(ctx, part); err != nil {
			t.Fatalf("BulkLoad: %v", err)
		}
	}
	// Numbering goes on after the loaded CFEs.
	if next := issue(t, bulk, cfe.EFactura, "after-bulk"); next.Nro != 9 {
		t.Errorf("next e-Factura after the bulk load = %d, want 9", next.Nro)
	}
	issue(t, one, cfe.EFactura, "after-bulk")
	for _, db := range []*store.DB{one, bulk} {
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	a, b := dumpBuckets(t, filepath.Join(dir, "one.db")), dumpBuckets(t, filepath.Join(dir, "bulk.db"))
	for name, av := range a {
		bv := b[name]
		if name == "meta" { // the file's own identity and its commit log's differ
			for _, k := range []string{"store_id", "wal.id", "wal.applied"} {
				delete(av, k)
				delete(bv, k)
			}
		}
		if len(av) != len(bv) {
			t.Errorf("bucket %s: %d keys written by Commit, %d by BulkLoad", name, len(av), len(bv))
		}
		for k, v := range av {
			if bv[k] != v {
				t.Errorf("bucket %s key %q differs:\nCommit   %q\nBulkLoad %q", name, k, v, bv[k])
			}
		}
	}
	if len(a["xml"]) != 31 || len(a["cfes"]) != 31 {
		t.Fatalf("the files hold %d CFEs, %d XMLs; want 31", len(a["cfes"]), len(a["xml"]))
	}
	checkFile(t, filepath.Join(dir, "bulk.db"))
}

func TestDB_BulkLoadRefuses(t *testing.T) {
	t.Parallel()
	db, path := openStore(t, store.Options{})
	putRanges(t, db, newRange(cfe.ETicket, "A", 1, 10, farAway))
	r := reserve(t, db, cfe.ETicket)
	doc := func(nro int64, uuid string) *cfe.Issued {
		return issuedFor(&cfe.Reservation{Type: cfe.ETicket, Serie: "A", Nro: nro, Range: r.Range}, uuid, signAt)
	}
	wantCode(t, db.BulkLoad(ctx, []*cfe.Issued{doc(2, "while-reserved")}), cfe.EUNAVAILABLE)
	db.Release(r)
	for _, tc := range []struct {
		name string
		docs []*cfe.Issued
		code string
	}{
		{"gap", []*cfe.Issued{doc(1, "g-1"), doc(3, "g-3")}, cfe.EINVALID},
		{"not-first", []*cfe.Issued{doc(2, "n-2")}, cfe.EINVALID},
		{"outside-range", []*cfe.Issued{doc(1, "o-1"), doc(2, "o-2"), doc(3, "o-3"), doc(4, "o-4"), doc(5, "o-5"),
			doc(6, "o-6"), doc(7, "o-7"), doc(8, "o-8"), doc(9, "o-9"), doc(10, "o-10"), doc(11, "o-11")}, cfe.EINVALID},
		{"same-uuid", []*cfe.Issued{doc(1, "dup"), doc(2, "dup")}, cfe.ECONFLICT},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantCode(t, db.BulkLoad(ctx, tc.docs), tc.code)
			if st, err := db.Stats(ctx); err != nil || st.CFEs != 0 || st.Pending != 0 {
				t.Fatalf("after a refused load: %+v, %v; want nothing stored", st, err)
			}
		})
	}
	// Refusals changed nothing: numbering starts at 1.
	if got := issue(t, db, cfe.ETicket, "first"); got.Nro != 1 {
		t.Errorf("first number after refused loads = %d, want 1", got.Nro)
	}
	db.Close()
	checkFile(t, path)
}
