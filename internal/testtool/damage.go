package testtool

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"os"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Parts of a stored CFE that DamageStoredCFE can damage.
const (
	StoredXML    = "xml"    // the compressed signed XML (bucket xml, under the commit sequence)
	StoredRecord = "record" // the JSON record (bucket cfes, under the uuid)
	StoredEntry  = "entry"  // the outbox entry (bucket outbox, under the commit sequence)
)

// DamageStoredCFE flips one bit, in place, in what the store file at path
// holds of the CFE uuid: inside its compressed signed XML (StoredXML), past
// the header, or in the first byte of its JSON record (StoredRecord) or of
// its outbox entry (StoredEntry), as a failing disk would. The page tree stays whole, so the file opens; only
// that CFE cannot be read back. Every copy of those bytes in the file is
// flipped (a page bbolt freed may still hold the same value). The store must
// not be open. It reads the file with bbolt directly, independently of the
// store's own code (the layout of store/doc.go), and returns the bytes it
// damaged as they were.
func DamageStoredCFE(t testing.TB, path, uuid, part string) []byte {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatalf("opening %s to damage it: %v", path, err)
	}
	var value []byte
	err = db.View(func(tx *bolt.Tx) error {
		rec := tx.Bucket([]byte("cfes")).Get([]byte(uuid))
		if rec == nil {
			t.Errorf("the store %s has no CFE %s", path, uuid)
			return nil
		}
		if part == StoredRecord {
			value = bytes.Clone(rec)
			return nil
		}
		var r struct {
			Seq uint64 `json:"outbox_seq"`
		}
		if err := json.Unmarshal(rec, &r); err != nil {
			return err
		}
		bucket := "xml"
		if part == StoredEntry {
			bucket = "outbox"
		}
		value = bytes.Clone(tx.Bucket([]byte(bucket)).Get(binary.BigEndian.AppendUint64(nil, r.Seq)))
		return nil
	})
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil || len(value) < 32 {
		t.Fatalf("reading the %s of CFE %s in %s: %v (%d bytes)", part, uuid, path, err, len(value))
	}
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	at, bit := len(value)/2, byte(0x10) // inside the zstd frame, past the 13-byte header
	if part != StoredXML {
		at, bit = 0, 0x01 // '{' becomes 'z': the JSON no longer decodes
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	for off := 0; ; {
		i := bytes.Index(file[off:], value)
		if i < 0 {
			break
		}
		pos := off + i + at
		if _, err := f.WriteAt([]byte{file[pos] ^ bit}, int64(pos)); err != nil {
			t.Fatal(err)
		}
		n++
		off += i + len(value)
	}
	if n == 0 {
		t.Fatalf("the %s of CFE %s is not stored contiguously in %s", part, uuid, path)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	return value
}
