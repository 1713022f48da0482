package data_test

import (
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/sandbox/data"
)

func open(t *testing.T, dir, env string) *data.DB {
	t.Helper()
	db, err := data.Open(dir, env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// A file belongs to one environment: opening it as the other is refused,
// naming both.
func TestOpen_environment(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db, err := data.Open(dir, "sandbox")
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	// Another environment's file is another file; this one's name is taken.
	if err := copyAs(dir, "sandbox", "produccion"); err != nil {
		t.Fatal(err)
	}
	if _, err := data.Open(dir, "produccion"); err == nil || !strings.Contains(err.Error(), `belongs to environment "sandbox", not "produccion"`) {
		t.Errorf("a sandbox file opened as produccion: %v", err)
	}
}

// A room's own bucket does not exist until its first write: a read before
// it finds nothing (ENOTFOUND naming the record), the write creates it.
func TestRoomBuckets(t *testing.T) {
	t.Parallel()
	db := open(t, t.TempDir(), "sandbox")
	bucket, key := []byte("room-own"), data.IDKey(7)
	var got struct{ N int }
	err := db.View(func(tx *bolt.Tx) error { return data.GetJSON(tx, bucket, key, "el registro", &got) })
	if cfe.ErrorCode(err) != cfe.ENOTFOUND || cfe.ErrorMessage(err) != "el registro no existe" {
		t.Fatalf("read before the first write: %v", err)
	}
	if err := db.Update(func(tx *bolt.Tx) error { return data.PutJSON(tx, bucket, key, struct{ N int }{42}) }); err != nil {
		t.Fatal(err)
	}
	if err := db.View(func(tx *bolt.Tx) error { return data.GetJSON(tx, bucket, key, "el registro", &got) }); err != nil || got.N != 42 {
		t.Errorf("read back %+v, %v", got, err)
	}
}

// A CFE's uuid and its number are each one company's once.
func TestAddCFE_conflicts(t *testing.T) {
	t.Parallel()
	db := open(t, t.TempDir(), "sandbox")
	rec := func(uuid string, nro int64, company int64) *data.CFERecord {
		day := cfe.Date{Year: 2026, Month: time.March, Day: 2}
		return &data.CFERecord{Company: company, UUID: uuid, Type: cfe.ETicket, Serie: "H", Nro: nro, FchEmis: day,
			CAE: cfe.CAEData{CAEID: "90260000001", DNro: 1, HNro: 1000, FecVenc: day}}
	}
	add := func(r *data.CFERecord) error {
		return db.Update(func(tx *bolt.Tx) error { return data.AddCFE(tx, r) })
	}
	first := rec("u-1", 1, 1)
	if err := add(first); err != nil || first.ID != 1 {
		t.Fatalf("first CFE: id %d, %v", first.ID, err)
	}
	for name, c := range map[string]struct {
		r    *data.CFERecord
		resp string
	}{
		"the uuid again":   {rec("u-1", 2, 1), cfe.RespConflictoUUID},
		"the number again": {rec("u-2", 1, 1), cfe.RespRechazoValidacion},
	} {
		if err := add(c.r); cfe.ErrorCode(err) != cfe.ECONFLICT || cfe.RespuestaOf(err) != c.resp {
			t.Errorf("%s: %v (respuesta %s), want ECONFLICT %s", name, err, cfe.RespuestaOf(err), c.resp)
		}
	}
	// Another company numbers its own ranges and names its own uuids.
	if err := add(rec("u-1", 1, 2)); err != nil {
		t.Errorf("another company's CFE with the same uuid and number: %v", err)
	}
	err := db.View(func(tx *bolt.Tx) error {
		got, err := data.CFEByFolio(tx, 1, cfe.ETicket, "H", 1)
		if err != nil || got == nil || got.UUID != "u-1" || got.Company != 1 {
			t.Errorf("by folio: %+v, %v", got, err)
		}
		n := 0
		err = data.CompanyCFEs(tx, 2, func(*data.CFERecord) error { n++; return nil })
		if n != 1 {
			t.Errorf("company 2 has %d CFEs, want 1", n)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}
