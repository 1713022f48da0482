package store_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/store"
)

// sampleXMLs returns DGI's sample CFEs (shared/dgi/samples/extracted-cfe),
// real CFE XML to compress.
func sampleXMLs(t *testing.T) [][]byte {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(testtool.SharedDir(t), "dgi", "samples", "extracted-cfe", "*.xml"))
	if err != nil || len(files) < 3 {
		t.Fatalf("DGI samples: %v (%d files)", err, len(files))
	}
	var out [][]byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

// sampleHead matches the IdDoc elements of a DGI sample (with a prefix or
// not), which asStored rewrites.
var sampleHead = regexp.MustCompile(`(<(?:\w+:)?TipoCFE>)\d+(</)|(<(?:\w+:)?Serie>)\w+(</)|(<(?:\w+:)?Nro>)\d+(</)`)

// asStored returns a copy of DGI's sample CFE as the CFE numbered t, serie,
// nro (its IdDoc rewritten, so that it agrees with the record the store
// keeps for it, as a backup's check requires) with a comment holding mark
// before its end tag, so that each stored XML is distinct. Its signature no
// longer verifies.
func asStored(sample []byte, t cfe.Type, serie string, nro int64, mark string) []byte {
	done := map[byte]bool{}
	out := sampleHead.ReplaceAllFunc(sample, func(m []byte) []byte {
		sub := sampleHead.FindSubmatch(m)
		for i, v := range []string{strconv.Itoa(int(t)), serie, strconv.FormatInt(nro, 10)} {
			if open := sub[1+2*i]; open != nil && !done[byte(i)] {
				done[byte(i)] = true
				return slices.Concat(open, []byte(v), sub[2+2*i])
			}
		}
		return m
	})
	end := bytes.LastIndex(out, []byte("</"))
	return slices.Concat(out[:end], []byte("<!--"+mark+"-->"), out[end:])
}

// issueXML commits the next e-Ticket under uuid with xml as its signed XML.
func issueXML(t *testing.T, db *store.DB, uuid string, xml []byte) *cfe.Issued {
	t.Helper()
	r := reserve(t, db, cfe.ETicket)
	doc := issuedFor(r, uuid, signAt)
	doc.XML = xml
	if err := db.Commit(ctx, r, doc); err != nil {
		t.Fatalf("Commit %s: %v", uuid, err)
	}
	return doc
}

// rawXMLValues returns the values of the xml bucket, read with bbolt alone.
func rawXMLValues(t *testing.T, path string) [][]byte {
	t.Helper()
	raw, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var out [][]byte
	err = raw.View(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("xml")).ForEach(func(_, v []byte) error {
			out = append(out, bytes.Clone(v))
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestDB_XMLCompression(t *testing.T) {
	t.Parallel()
	samples := sampleXMLs(t)
	db, path := openStore(t, store.Options{})
	putRanges(t, db, newRange(cfe.ETicket, "A", 1, 1000, farAway))
	var want []*cfe.Issued
	var rawSize int
	for i := range 40 {
		// Each sample with a distinct number and a distinct trailing
		// comment, so no two XMLs are equal; plus a few odd ones: bytes
		// compression must not touch (a BOM, CRLF, trailing spaces).
		xml := fmt.Appendf(bytes.Clone(samples[i%len(samples)]), "<!-- %d -->", i)
		switch i {
		case 7:
			xml = append([]byte("\xef\xbb\xbf"), xml...)
		case 8:
			xml = bytes.ReplaceAll(xml, []byte("\n"), []byte("\r\n"))
		case 9:
			xml = append(xml, "  \n\t"...)
		}
		rawSize += len(xml)
		want = append(want, issueXML(t, db, fmt.Sprintf("z-%02d", i), xml))
	}
	for _, w := range want {
		got, err := db.FindByUUID(ctx, w.UUID)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.XML, w.XML) {
			t.Fatalf("%s: read XML differs from the signed bytes", w.UUID)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	values := rawXMLValues(t, path)
	stored := 0
	for i, v := range values {
		if len(v) == 0 || v[0] != 0x01 {
			t.Fatalf("xml value %d is not in the compressed form (starts %q)", i, v[:min(len(v), 8)])
		}
		stored += len(v)
	}
	// DGI's samples compress 7–9× with a dictionary made of another one;
	// 3× is a floor that only a broken dictionary misses.
	if stored*3 > rawSize {
		t.Errorf("stored XML %d bytes for %d signed bytes: less than 3× smaller", stored, rawSize)
	}
	t.Logf("XML %d bytes stored in %d (%.1f×)", rawSize, stored, float64(rawSize)/float64(stored))

	// Reopened: every read is still exact (the dictionaries come from the file).
	db2, err := store.Open(path, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkAtEnd(t, db2, path)
	defer db2.Close()
	for _, w := range want {
		got, err := db2.FindByUUID(ctx, w.UUID)
		if err != nil || !bytes.Equal(got.XML, w.XML) {
			t.Fatalf("%s after reopening: %v, exact=%v", w.UUID, err, err == nil && bytes.Equal(got.XML, w.XML))
		}
	}
}

// TestDB_XMLChecksum damages stored XML values in ways that still
// decompress or not: a read answers an error, never other bytes.
func TestDB_XMLChecksum(t *testing.T) {
	t.Parallel()
	samples := sampleXMLs(t)
	for _, tc := range []struct {
		name   string
		damage func(v []byte) []byte
	}{
		{"checksum", func(v []byte) []byte { v[2] ^= 0x40; return v }},
		{"payload", func(v []byte) []byte { v[len(v)-3] ^= 0x01; return v }},
		{"truncated", func(v []byte) []byte { return v[:len(v)-5] }},
		{"header-only", func(v []byte) []byte { return v[:6] }},
		{"unknown-dictionary", func(v []byte) []byte { v[8] ^= 0xff; return v }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			db, path := openStore(t, store.Options{})
			putRanges(t, db, newRange(cfe.ETicket, "A", 1, 1000, farAway))
			issueXML(t, db, "ok-1", samples[0])
			issueXML(t, db, "bad-2", samples[1])
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			raw, err := bolt.Open(path, 0o600, nil)
			if err != nil {
				t.Fatal(err)
			}
			err = raw.Update(func(tx *bolt.Tx) error {
				b := tx.Bucket([]byte("xml"))
				k, v := b.Cursor().Last() // bad-2's
				return b.Put(bytes.Clone(k), tc.damage(bytes.Clone(v)))
			})
			if cerr := raw.Close(); err != nil || cerr != nil {
				t.Fatal(err, cerr)
			}
			db, err = store.Open(path, store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			got, err := db.FindByUUID(ctx, "bad-2")
			if err == nil {
				t.Fatalf("damaged XML read without error (exact: %v)", bytes.Equal(got.XML, samples[1]))
			}
			if ok, err := db.FindByUUID(ctx, "ok-1"); err != nil || !bytes.Equal(ok.XML, samples[0]) {
				t.Errorf("undamaged CFE: %v", err)
			}
		})
	}
}

// downgradeToV2 rewrites the xml bucket of the store file at path as schema
// 2 kept it: each XML as it was signed, no dictionaries. The first keep
// values stay compressed, as an interrupted migration leaves them (their
// dictionaries are then kept).
func downgradeToV2(t *testing.T, path string, keep int) {
	t.Helper()
	raw, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	err = raw.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("xml"))
		var keys, plain [][]byte
		i := 0
		err := b.ForEach(func(k, v []byte) error {
			x, err := store.DecodeXML(tx, v)
			if i >= keep {
				keys, plain = append(keys, bytes.Clone(k)), append(plain, x)
			}
			i++
			return err
		})
		if err != nil {
			return err
		}
		for i, k := range keys {
			if err := b.Put(k, plain[i]); err != nil {
				return err
			}
		}
		meta := tx.Bucket([]byte("meta"))
		if keep == 0 {
			var dictKeys [][]byte
			_ = meta.ForEach(func(k, _ []byte) error {
				if strings.HasPrefix(string(k), "xmldict") {
					dictKeys = append(dictKeys, bytes.Clone(k))
				}
				return nil
			})
			for _, k := range dictKeys {
				if err := meta.Delete(k); err != nil {
					return err
				}
			}
		}
		return meta.Put([]byte("schema"), []byte("2"))
	})
	if err != nil {
		t.Fatalf("downgrade: %v", err)
	}
}

func TestOpen_MigratesSchema2(t *testing.T) {
	t.Parallel()
	samples := sampleXMLs(t)
	for _, keep := range []int{0, 5} { // a whole file; one whose migration was interrupted
		t.Run(fmt.Sprintf("already-compressed-%d", keep), func(t *testing.T) {
			t.Parallel()
			db, path := openStore(t, store.Options{})
			putRanges(t, db, newRange(cfe.ETicket, "A", 1, 1000, farAway))
			var want []*cfe.Issued
			for i := range 13 {
				want = append(want, issueXML(t, db, fmt.Sprintf("m2-%02d", i), fmt.Appendf(bytes.Clone(samples[i%len(samples)]), "<!--%d-->", i)))
			}
			db.Close()
			downgradeToV2(t, path, keep)
			plain := 0
			for _, v := range rawXMLValues(t, path) {
				if v[0] == '<' {
					plain++
				}
			}
			if plain != 13-keep {
				t.Fatalf("downgraded file has %d XMLs as signed, want %d", plain, 13-keep)
			}
			// A schema-2 reader's view: the old form is read as it is, too.
			db, err := store.Open(path, store.WithMigrateBatch(store.Options{}, 4)) // several transactions
			if err != nil {
				t.Fatalf("Open schema 2: %v", err)
			}
			for _, w := range want {
				got, err := db.FindByUUID(ctx, w.UUID)
				if err != nil {
					t.Fatal(err)
				}
				sameIssued(t, got, w)
			}
			next := issueXML(t, db, "after", samples[0])
			if next.Nro != 14 {
				t.Errorf("next number = %d, want 14", next.Nro)
			}
			db.Close()
			for i, v := range rawXMLValues(t, path) {
				if v[0] != 0x01 {
					t.Errorf("xml value %d not compressed after the migration", i)
				}
			}
			if v, _ := rawSchema(t, path); v != "4" {
				t.Errorf("schema after migration = %q, want 4", v)
			}
		})
	}
}
