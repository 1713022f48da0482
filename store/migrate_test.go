package store_test

import (
	"encoding/json"
	"fmt"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/store"
)

// downgradeToV1 rewrites the store file at path in schema 1's layout: the
// signed XML inside each JSON record (base64, as encoding/json writes
// []byte), no xml bucket. The first keep records (in uuid order) are left in
// schema 2's form, as an interrupted migration leaves them.
func downgradeToV1(t *testing.T, path string, keep int) {
	t.Helper()
	raw, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	err = raw.Update(func(tx *bolt.Tx) error {
		cfes, xmls := tx.Bucket([]byte("cfes")), tx.Bucket([]byte("xml"))
		type kv struct{ k, v []byte }
		var recs []kv
		if err := cfes.ForEach(func(k, v []byte) error {
			recs = append(recs, kv{append([]byte(nil), k...), append([]byte(nil), v...)})
			return nil
		}); err != nil {
			return err
		}
		moved := map[string][]byte{} // XML that stays in the xml bucket, by key
		for i, r := range recs {
			var fields map[string]json.RawMessage
			if err := json.Unmarshal(r.v, &fields); err != nil {
				return err
			}
			if _, ok := fields["xml"]; ok {
				return fmt.Errorf("record %s already has an xml field", r.k)
			}
			var seq uint64
			if err := json.Unmarshal(fields["outbox_seq"], &seq); err != nil {
				return err
			}
			key := seqKeyBytes(seq)
			stored := xmls.Get(key)
			if stored == nil {
				return fmt.Errorf("record %s: no XML", r.k)
			}
			xml, err := store.DecodeXML(tx, stored) // schema 1 and 2 kept it as it was signed
			if err != nil {
				return err
			}
			if i < keep {
				moved[string(key)] = append([]byte(nil), xml...)
				continue
			}
			if fields["xml"], err = json.Marshal(xml); err != nil {
				return err
			}
			v, err := json.Marshal(fields)
			if err != nil {
				return err
			}
			if err := cfes.Put(r.k, v); err != nil {
				return err
			}
		}
		if err := tx.DeleteBucket([]byte("xml")); err != nil {
			return err
		}
		if len(moved) > 0 {
			b, err := tx.CreateBucket([]byte("xml"))
			if err != nil {
				return err
			}
			for k, v := range moved {
				if err := b.Put([]byte(k), v); err != nil {
					return err
				}
			}
		}
		return tx.Bucket([]byte("meta")).Put([]byte("schema"), []byte("1"))
	})
	if err != nil {
		t.Fatalf("downgrade: %v", err)
	}
}

func seqKeyBytes(n uint64) []byte {
	b := make([]byte, 8)
	for i := 7; i >= 0; i-- {
		b[i], n = byte(n), n>>8
	}
	return b
}

// rawSchema reads the schema version and whether any CFE record still holds
// its XML.
func rawSchema(t *testing.T, path string) (version string, withXML int) {
	t.Helper()
	raw, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	err = raw.View(func(tx *bolt.Tx) error {
		version = string(tx.Bucket([]byte("meta")).Get([]byte("schema")))
		return tx.Bucket([]byte("cfes")).ForEach(func(_, v []byte) error {
			var fields map[string]json.RawMessage
			if err := json.Unmarshal(v, &fields); err != nil {
				return err
			}
			if _, ok := fields["xml"]; ok {
				withXML++
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	return version, withXML
}

func TestOpen_MigratesSchema1(t *testing.T) {
	t.Parallel()
	for _, keep := range []int{0, 4} { // a whole file; one whose migration was interrupted
		t.Run(fmt.Sprintf("already-moved-%d", keep), func(t *testing.T) {
			t.Parallel()
			db, path := openStore(t, store.Options{})
			putRanges(t, db, newRange(cfe.ETicket, "A", 1, 100, farAway), newRange(cfe.EFactura, "A", 1, 100, farAway))
			var want []*cfe.Issued
			for i := range 11 {
				typ := cfe.ETicket
				if i%3 == 0 {
					typ = cfe.EFactura
				}
				want = append(want, issue(t, db, typ, fmt.Sprintf("mig-%02d", i)))
			}
			if err := db.MarkDelivered(ctx, "mig-03", 77); err != nil {
				t.Fatal(err)
			}
			if err := db.MarkRejected(ctx, "mig-05", "RUC inválido"); err != nil {
				t.Fatal(err)
			}
			db.Close()
			downgradeToV1(t, path, keep)
			if v, n := rawSchema(t, path); v != "1" || n != 11-keep {
				t.Fatalf("downgraded file: schema %q with %d records holding XML, want 1 and %d", v, n, 11-keep)
			}

			db, err := store.Open(path, store.WithMigrateBatch(store.Options{}, 3)) // several transactions
			if err != nil {
				t.Fatalf("Open schema 1: %v", err)
			}
			for _, w := range want {
				got, err := db.FindByUUID(ctx, w.UUID)
				if err != nil {
					t.Fatalf("FindByUUID %s after migration: %v", w.UUID, err)
				}
				sameIssued(t, got, w)
			}
			if got, _ := db.FindByUUID(ctx, "mig-03"); got.Delivery.State != cfe.DeliveryAccepted || got.Delivery.HostedID != 77 {
				t.Errorf("delivery of mig-03 after migration = %+v", got.Delivery)
			}
			st, err := db.Stats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if st.CFEs != 11 || st.Pending != 9 || st.Rejected != 1 {
				t.Errorf("stats after migration: %d CFEs, %d pending, %d rejected; want 11, 9, 1", st.CFEs, st.Pending, st.Rejected)
			}
			// Numbering continues after the migrated CFEs.
			next := issue(t, db, cfe.ETicket, "after-migration")
			if next.Nro != 8 { // 7 e-Tickets were issued before
				t.Errorf("next e-Ticket number = %d, want 8", next.Nro)
			}
			db.Close()
			if v, n := rawSchema(t, path); v != "4" || n != 0 {
				t.Errorf("migrated file: schema %q with %d records holding XML, want 4 and 0", v, n)
			}
		})
	}
}
