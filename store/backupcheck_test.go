package store_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/signer"
	"github.com/cfe-agent/cfe-agent/store"
)

// testSigner is a signer with a new test certificate of the tests' company.
func testSigner(t testing.TB) *signer.Signer {
	t.Helper()
	creds, err := signer.GenerateTestCertificate("219999830019", "Tienda de prueba", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	s, err := signer.New(signer.Config{Credentials: creds})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// signatures is the agent's check of a stored CFE's signature: the signer's
// Verify with the certificate KeyInfo carries.
var signatures = store.RecordChecks{Signature: func(xml []byte) (string, error) {
	v, err := signer.Verify(xml, signer.VerifyOptions{})
	if err != nil {
		return "", err
	}
	return v.DigestValue, nil
}}

// signedFor builds the CFE of reservation r, signed by s, as the issuer
// stores it: its security code is the first characters of its signature's
// digest. item distinguishes its content.
func signedFor(t testing.TB, s *signer.Signer, r *cfe.Reservation, uuid, item string) *cfe.Issued {
	t.Helper()
	doc := issuedFor(r, uuid, signAt)
	unsigned := fmt.Sprintf(`<CFE version="1.0" xmlns="http://cfe.dgi.gub.uy"><eTck><Encabezado><IdDoc>`+
		`<TipoCFE>%d</TipoCFE><Serie>%s</Serie><Nro>%d</Nro></IdDoc></Encabezado>`+
		`<Detalle><Item><NroLinDet>1</NroLinDet><NomItem>%s</NomItem></Item></Detalle></eTck></CFE>`,
		int(r.Type), r.Serie, r.Nro, item)
	signed, err := s.Sign([]byte(unsigned))
	if err != nil {
		t.Fatal(err)
	}
	doc.XML, doc.CodSeguridad = signed.XML, cfe.SecurityCode(signed.DigestValue)
	return doc
}

// commitSigned commits the next e-Ticket, signed by s, under uuid; change,
// when set, alters it before the commit (a damaged CFE).
func commitSigned(t testing.TB, db *store.DB, s *signer.Signer, uuid string, change func(*cfe.Issued)) *cfe.Issued {
	t.Helper()
	r := reserve(t, db, cfe.ETicket)
	doc := signedFor(t, s, r, uuid, "artículo "+uuid)
	if change != nil {
		change(doc)
	}
	if err := db.Commit(ctx, r, doc); err != nil {
		t.Fatalf("Commit %s: %v", uuid, err)
	}
	return doc
}

// twelveSigned fills db with e-Tickets A-1..A-12 signed by s: A-1..A-6
// delivered, A-7 refused by the service, A-8..A-12 pending.
func twelveSigned(t testing.TB, db *store.DB, s *signer.Signer) []*cfe.Issued {
	t.Helper()
	var docs []*cfe.Issued
	for i := range 12 {
		doc := commitSigned(t, db, s, fmt.Sprintf("venta-%02d", i+1), nil)
		switch {
		case i < 6:
			if err := db.MarkDelivered(ctx, doc.UUID, int64(100+i)); err != nil {
				t.Fatal(err)
			}
		case i == 6:
			if err := db.MarkRejected(ctx, doc.UUID, "rechazado por el servicio"); err != nil {
				t.Fatal(err)
			}
		}
		docs = append(docs, doc)
	}
	return docs
}

// editBolt changes the bbolt file at path (closed) with edit, in one
// transaction.
func editBolt(t testing.TB, path string, edit func(tx *bolt.Tx) error) {
	t.Helper()
	bdb, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	if err := bdb.Update(edit); err != nil {
		t.Fatal(err)
	}
}

// editBackup changes the backup at path with edit, then rewrites its backup
// record's counts and counters to what the file then holds, as a backup of a
// store in that state would have them: only the record checks can tell.
func editBackup(t testing.TB, path string, edit func(tx *bolt.Tx) error) {
	t.Helper()
	editBolt(t, path, func(tx *bolt.Tx) error {
		if err := edit(tx); err != nil {
			return err
		}
		count := func(name string) int {
			n, c := 0, tx.Bucket([]byte(name)).Cursor()
			for k, _ := c.First(); k != nil; k, _ = c.Next() {
				n++
			}
			return n
		}
		var counters []json.RawMessage
		err := tx.Bucket([]byte("counters")).ForEach(func(_, v []byte) error {
			counters = append(counters, bytes.Clone(v))
			return nil
		})
		if err != nil {
			return err
		}
		b := tx.Bucket([]byte("backup"))
		var rec map[string]any
		if err := json.Unmarshal(b.Get([]byte("record")), &rec); err != nil {
			return err
		}
		rec["counts"] = map[string]int{"cfes": count("cfes"), "outbox": count("outbox"), "rejected": count("rejected"), "ranges": count("ranges")}
		rec["counters"] = counters
		data, err := json.Marshal(rec)
		if err != nil {
			return err
		}
		return b.Put([]byte("record"), data)
	})
}

// outboxSeq returns the commit sequence (key of its XML and outbox entry) of
// the CFE stored under uuid in the bbolt file at path.
func outboxSeq(t testing.TB, path, uuid string) []byte {
	t.Helper()
	var seq []byte
	readBolt(t, path, func(tx *bolt.Tx) error {
		var rec struct {
			Seq uint64 `json:"outbox_seq"`
		}
		if err := json.Unmarshal(tx.Bucket([]byte("cfes")).Get([]byte(uuid)), &rec); err != nil {
			return err
		}
		seq = make([]byte, 8)
		for i := range 8 {
			seq[i] = byte(rec.Seq >> (56 - 8*i))
		}
		return nil
	})
	return seq
}

// storedXML returns the stored (compressed) value of the signed XML of uuid
// in the bbolt file at path.
func storedXML(t testing.TB, path, uuid string) []byte {
	t.Helper()
	seq := outboxSeq(t, path, uuid)
	var v []byte
	readBolt(t, path, func(tx *bolt.Tx) error {
		v = bytes.Clone(tx.Bucket([]byte("xml")).Get(seq))
		return nil
	})
	if len(v) == 0 {
		t.Fatalf("no stored XML for %s", uuid)
	}
	return v
}

func readBolt(t testing.TB, path string, read func(tx *bolt.Tx) error) {
	t.Helper()
	bdb, err := bolt.Open(path, 0o400, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer bdb.Close()
	if err := bdb.View(read); err != nil {
		t.Fatal(err)
	}
}

// wantDamagedRecord fails unless err refuses a damaged record (EINVALID or
// EUNAVAILABLE as code says, errors.Is ErrDamagedRecord) naming each of
// want, and none of notWant.
func wantDamagedRecord(t testing.TB, err error, code string, want []string, notWant ...string) {
	t.Helper()
	ce := wantCode(t, err, code)
	if !errors.Is(err, store.ErrDamagedRecord) {
		t.Fatalf("error %v does not wrap ErrDamagedRecord", err)
	}
	for _, w := range want {
		if !strings.Contains(ce.Message, w) {
			t.Errorf("message %q lacks %q", ce.Message, w)
		}
	}
	for _, w := range notWant {
		if strings.Contains(ce.Message, w) {
			t.Errorf("message %q names %q, which is not damaged", ce.Message, w)
		}
	}
}

// TestVerifyBackup_DamagedRecords: a backup whose page tree, counts and
// record are all valid, but with one record damaged, is refused naming the
// CFE (type, serie, number, uuid); a good one verifies every record,
// signatures included.
func TestVerifyBackup_DamagedRecords(t *testing.T) {
	t.Parallel()
	s := testSigner(t)
	db, _ := openStore(t, store.Options{})
	putRanges(t, db, newRange(cfe.ETicket, "A", 1, 1000, farAway))
	docs := twelveSigned(t, db, s)
	good := filepath.Join(t.TempDir(), "good.db")
	info, err := db.Backup(ctx, good, backupMeta, signatures)
	if err != nil {
		t.Fatal(err)
	}
	if c := info.Checked; c.CFEs != 12 || c.Signatures != 12 || c.WithoutChecksum != 0 ||
		!slices.Equal(c.Lowest, []cfe.LastNumber{{Type: cfe.ETicket, Serie: "A", Last: 1}}) {
		t.Fatalf("Checked = %+v, want 12 CFEs and signatures, e-Tickets A from 1", c)
	}
	name := func(i int) string {
		return fmt.Sprintf("e-Ticket serie A número %d (uuid %s)", docs[i].Nro, docs[i].UUID)
	}
	damaged := func(t *testing.T) string {
		p := filepath.Join(t.TempDir(), "copia.db")
		testtool.CopyFile(t, good, p)
		return p
	}

	t.Run("one bit flipped in a stored signed XML", func(t *testing.T) {
		t.Parallel()
		p := damaged(t)
		testtool.FlipBitIn(t, p, storedXML(t, p, docs[4].UUID))
		boltCheck(t, p) // the page tree is still valid: only the value is wrong
		for _, checks := range []store.RecordChecks{signatures, {}} {
			_, err := store.VerifyBackup(p, checks)
			wantDamagedRecord(t, err, cfe.EINVALID, []string{"1 registro dañado", name(4), "XML firmado", p}, name(3), name(5))
		}
	})
	t.Run("the counter below stored numbers", func(t *testing.T) {
		t.Parallel()
		p := damaged(t)
		editBackup(t, p, func(tx *bolt.Tx) error {
			return tx.Bucket([]byte("counters")).Put([]byte("101/A"), []byte(`{"type":101,"serie":"A","last":9}`))
		})
		_, err := store.VerifyBackup(p, signatures)
		wantDamagedRecord(t, err, cfe.EINVALID, []string{"3 registros dañados", name(9), name(10), name(11), "el contador de su serie está en 9"}, name(8))
	})
	t.Run("a pending CFE missing from the outbox", func(t *testing.T) {
		t.Parallel()
		p := damaged(t)
		editBackup(t, p, func(tx *bolt.Tx) error {
			return tx.Bucket([]byte("outbox")).Delete(outboxSeqOf(tx, docs[9].UUID))
		})
		_, err := store.VerifyBackup(p, signatures)
		wantDamagedRecord(t, err, cfe.EINVALID, []string{name(9), "no se enviaría nunca"})
	})
	t.Run("an outbox entry naming a delivered CFE", func(t *testing.T) {
		t.Parallel()
		p := damaged(t)
		editBackup(t, p, func(tx *bolt.Tx) error {
			e, _ := json.Marshal(map[string]any{"uuid": docs[2].UUID, "committed_at": signAt})
			return tx.Bucket([]byte("outbox")).Put(outboxSeqOf(tx, docs[2].UUID), e)
		})
		_, err := store.VerifyBackup(p, signatures)
		wantDamagedRecord(t, err, cfe.EINVALID, []string{name(2), "fue aceptado por el servicio pero sigue en la cola"})
	})
	t.Run("the number index naming another CFE", func(t *testing.T) {
		t.Parallel()
		p := damaged(t)
		editBackup(t, p, func(tx *bolt.Tx) error {
			return tx.Bucket([]byte("by_number")).Put([]byte("101/A/0000003"), []byte(docs[3].UUID))
		})
		_, err := store.VerifyBackup(p, signatures)
		wantDamagedRecord(t, err, cfe.EINVALID, []string{name(2), "el índice por número no lo nombra"}, name(3))
	})
	t.Run("a number twice", func(t *testing.T) {
		t.Parallel()
		p := damaged(t)
		// A second record of A-5 (another uuid, the same XML): the number
		// index can name only one of them.
		editBackup(t, p, func(tx *bolt.Tx) error {
			b := tx.Bucket([]byte("cfes"))
			var rec map[string]any
			if err := json.Unmarshal(b.Get([]byte(docs[4].UUID)), &rec); err != nil {
				return err
			}
			rec["uuid"] = "duplicado"
			data, _ := json.Marshal(rec)
			return b.Put([]byte("duplicado"), data)
		})
		_, err := store.VerifyBackup(p, signatures)
		wantDamagedRecord(t, err, cfe.EINVALID, []string{"e-Ticket serie A número 5 (uuid duplicado)", "el índice por número no lo nombra"}, name(4))
	})
	t.Run("the signed XML of another CFE", func(t *testing.T) {
		t.Parallel()
		p := damaged(t)
		editBackup(t, p, func(tx *bolt.Tx) error {
			x := tx.Bucket([]byte("xml"))
			k0, k1 := outboxSeqOf(tx, docs[0].UUID), outboxSeqOf(tx, docs[1].UUID)
			v0, v1 := bytes.Clone(x.Get(k0)), bytes.Clone(x.Get(k1))
			if err := x.Put(k0, v1); err != nil {
				return err
			}
			return x.Put(k1, v0)
		})
		_, err := store.VerifyBackup(p, store.RecordChecks{})
		wantDamagedRecord(t, err, cfe.EINVALID, []string{name(0) + ": su XML firmado es el de e-Ticket serie A número 2", name(1)})
	})
	t.Run("a CFE outside the CAE range it names", func(t *testing.T) {
		t.Parallel()
		p := damaged(t)
		editBackup(t, p, func(tx *bolt.Tx) error {
			return tx.Bucket([]byte("ranges")).Put([]byte("101-A-1"), mustJSON(t, map[string]any{
				"id": "101-A-1", "ruc": "219999830019", "type": 101, "serie": "A", "dnro": 1, "hnro": 10, "cae_id": "90260012345",
				"authorized": "2025-01-02", "expires": "2027-12-31", "source": "manual"}))
		})
		_, err := store.VerifyBackup(p, signatures)
		wantDamagedRecord(t, err, cfe.EINVALID, []string{name(10), name(11), "no está en el rango CAE que nombra"}, name(9))
	})
}

// TestBackupInfo_SeriesInUse: the ranges a restore asks the hosted service
// about are those holding the backup's CFEs: of the series it stores, from
// its lowest stored number up.
func TestBackupInfo_SeriesInUse(t *testing.T) {
	t.Parallel()
	old := newRange(cfe.ETicket, "A", 1, 1000, farAway)        // its CFEs archived: none in the backup
	current := newRange(cfe.ETicket, "A", 1001, 5000, farAway) // from A-1200 in the backup
	next := newRange(cfe.ETicket, "A", 5001, 9000, farAway)    // not used yet
	other := newRange(cfe.ETicket, "B", 1, 1000, farAway)      // a serie without CFEs
	facturas := newRange(cfe.EFactura, "A", 1, 1000, farAway)  // a type without CFEs
	info := &store.BackupInfo{Ranges: []cfe.CAERange{old, current, next, other, facturas},
		Checked: store.RecordsChecked{Lowest: []cfe.LastNumber{{Type: cfe.ETicket, Serie: "A", Last: 1200}}}}
	got := info.SeriesInUse()
	if len(got) != 2 || got[0].DNro != 1001 || got[1].DNro != 5001 {
		t.Fatalf("SeriesInUse = %+v, want the e-Ticket A ranges from 1001 and 5001", got)
	}
}

// outboxSeqOf is outboxSeq inside a transaction.
func outboxSeqOf(tx *bolt.Tx, uuid string) []byte {
	var rec struct {
		Seq uint64 `json:"outbox_seq"`
	}
	_ = json.Unmarshal(tx.Bucket([]byte("cfes")).Get([]byte(uuid)), &rec)
	seq := make([]byte, 8)
	for i := range 8 {
		seq[i] = byte(rec.Seq >> (56 - 8*i))
	}
	return seq
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDB_Backup_RefusesDamagedRecords: a store with a damaged record gets no
// backup: the copy is not kept, the previous backup under the name stays,
// and the error names the CFE.
func TestDB_Backup_RefusesDamagedRecords(t *testing.T) {
	t.Parallel()
	s := testSigner(t)
	for _, tc := range []struct {
		name   string
		change func(*cfe.Issued)
		want   string
	}{
		{"XML changed after signing, stored properly", func(d *cfe.Issued) {
			d.XML = bytes.Replace(d.XML, []byte("artículo"), []byte("articulo"), 1)
		}, "su firma XML-DSig no verifica"},
		{"a security code that is not the signature's", func(d *cfe.Issued) { d.CodSeguridad = "zzzzzz" },
			"su registro tiene el código de seguridad zzzzzz"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			db, _ := openStore(t, store.Options{})
			putRanges(t, db, newRange(cfe.ETicket, "A", 1, 1000, farAway))
			for i := range 3 {
				commitSigned(t, db, s, fmt.Sprintf("bien-%d", i), nil)
			}
			dest := filepath.Join(t.TempDir(), "copias", "copia.db")
			if _, err := db.Backup(ctx, dest, backupMeta, signatures); err != nil {
				t.Fatal(err)
			}
			before := sumFile(t, dest)
			bad := commitSigned(t, db, s, "dañado", tc.change)
			commitSigned(t, db, s, "despues", nil)
			_, err := db.Backup(ctx, dest, backupMeta, signatures)
			wantDamagedRecord(t, err, cfe.EUNAVAILABLE, []string{"no se guardó la copia de seguridad " + dest,
				fmt.Sprintf("e-Ticket serie A número %d (uuid %s)", bad.Nro, bad.UUID), tc.want}, "bien-", "despues")
			if sumFile(t, dest) != before {
				t.Fatal("a refused backup replaced the previous one")
			}
			if entries, _ := os.ReadDir(filepath.Dir(dest)); len(entries) != 1 {
				t.Fatalf("the backup folder holds %v: the refused copy was left", entries)
			}
			// The signature is what tells: without it the record checks pass.
			if _, err := db.Backup(ctx, filepath.Join(t.TempDir(), "sin-firma.db"), backupMeta, store.RecordChecks{}); err != nil {
				t.Fatalf("without the signature check: %v", err)
			}
		})
	}

	t.Run("a bit flipped in the store file", func(t *testing.T) {
		t.Parallel()
		db, path := openStore(t, store.Options{})
		putRanges(t, db, newRange(cfe.ETicket, "A", 1, 1000, farAway))
		docs := twelveSigned(t, db, s)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		testtool.FlipBitIn(t, path, storedXML(t, path, docs[7].UUID))
		db = openAt(t, path, store.Options{}) // opens: the page tree is whole
		dest := filepath.Join(t.TempDir(), "copia.db")
		_, err := db.Backup(ctx, dest, backupMeta, signatures)
		wantDamagedRecord(t, err, cfe.EUNAVAILABLE, []string{fmt.Sprintf("e-Ticket serie A número 8 (uuid %s)", docs[7].UUID)})
		if _, err := os.Stat(dest); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("a backup of a store with a damaged record was kept: %v", err)
		}
	})
}

// TestDB_BackupArchives_RefusesDamagedRecord: the copy of a yearly archive
// is checked as a backup is: a damaged record is named and that copy is not
// kept.
func TestDB_BackupArchives_RefusesDamagedRecord(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "agent.db")
	var now time.Time
	db, all := threeYears(t, path, &now, store.Options{})
	if _, err := db.Archive(ctx, store.DefaultArchiveBefore(now)); err != nil {
		t.Fatal(err)
	}
	var victim *cfe.Issued
	for _, d := range all {
		if d.TmstFirma.Year() == 2024 {
			victim = d
			break
		}
	}
	archive := db.ArchivePath(2024)
	testtool.FlipBitIn(t, archive, storedXML(t, archive, victim.UUID))
	dir := filepath.Join(t.TempDir(), "otro-disco")
	_, err := db.BackupArchives(ctx, dir, store.RecordChecks{})
	wantDamagedRecord(t, err, cfe.EUNAVAILABLE, []string{"agent-archive-2024.db",
		fmt.Sprintf("%s serie %s número %d (uuid %s)", victim.Type.Name(), victim.Serie, victim.Nro, victim.UUID)})
	if _, err := os.Stat(filepath.Join(dir, "agent-archive-2024.db")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the damaged archive's copy was kept: %v", err)
	}
}

// dataDir is a profile's store and journal, as the agent lays them out.
type dataDir struct{ store, journal string }

func newDataDir(t testing.TB) dataDir {
	s, j := journalDirs(t)
	return dataDir{s, j}
}

// open opens the data directory's store as the agent does (with its
// journal and range).
func (d dataDir) open(t testing.TB) *store.DB {
	t.Helper()
	db, err := store.Open(mkdirFor(t, d.store), store.Options{Journal: d.journal})
	if err != nil {
		t.Fatal(err)
	}
	if rs, err := db.Ranges(ctx); err != nil || len(rs) == 0 {
		putRanges(t, db, newRange(cfe.ETicket, "A", 1, 1000, farAway))
	}
	return db
}

// sign opens the store, signs n e-Tickets with s, backs it up when backup
// is set, and closes it cleanly; it returns the backup's information.
func (d dataDir) sign(t testing.TB, s *signer.Signer, prefix string, n int, backup string) *store.BackupInfo {
	t.Helper()
	db := d.open(t)
	defer db.Close()
	for i := range n {
		commitSigned(t, db, s, fmt.Sprintf("%s-%d", prefix, i), nil)
	}
	if backup == "" {
		return nil
	}
	info, err := db.Backup(ctx, backup, backupMeta, signatures)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func (d dataDir) restore(b string, change func(*store.RestoreOptions)) (*store.RestoreResult, error) {
	o := store.RestoreOptions{Backup: b, Store: d.store, Journal: d.journal, Meta: backupMeta, Records: signatures}
	if change != nil {
		change(&o)
	}
	return store.Restore(ctx, o)
}

// sums returns the SHA-256 of the store and the journal.
func (d dataDir) sums(t testing.TB) [2]string {
	return [2]string{sumFile(t, d.store), sumFile(t, d.journal)}
}

// TestRestore_Refuses: a backup with a damaged record is refused by Restore
// before anything changes, naming the CFE.
func TestRestore_Refuses(t *testing.T) {
	t.Parallel()
	s := testSigner(t)
	d := newDataDir(t)
	backup := filepath.Join(t.TempDir(), "copia.db")
	d.sign(t, s, "v", 5, backup)
	testtool.FlipBitIn(t, backup, storedXML(t, backup, "v-2"))
	before := d.sums(t)
	_, err := d.restore(backup, nil)
	wantDamagedRecord(t, err, cfe.EINVALID, []string{"e-Ticket serie A número 3 (uuid v-2)"})
	if d.sums(t) != before {
		t.Fatal("a refused restore changed the store or the journal")
	}
}

// TestRestore_Identity: a backup of this data directory's store (its
// current file, a file it replaced, the one the journal names) is restored
// without more; another installation's is refused unless the technician
// names it, and the file it replaces then joins the restored file's
// lineage. A data directory with nothing of its own takes any backup of its
// profile.
func TestRestore_Identity(t *testing.T) {
	t.Parallel()
	s := testSigner(t)

	t.Run("another data directory's backup: refused, then accepted when named", func(t *testing.T) {
		t.Parallel()
		here, there := newDataDir(t), newDataDir(t)
		ownBackup := filepath.Join(t.TempDir(), "propia.db")
		own := here.sign(t, s, "aqui", 3, ownBackup)
		foreignBackup := filepath.Join(t.TempDir(), "ajena.db")
		foreign := there.sign(t, s, "alla", 5, foreignBackup)
		if own.StoreID == "" || foreign.StoreID == "" || own.StoreID == foreign.StoreID {
			t.Fatalf("store identities %q and %q", own.StoreID, foreign.StoreID)
		}
		before := here.sums(t)
		_, err := here.restore(foreignBackup, nil)
		ce := wantCode(t, err, cfe.ECONFLICT)
		testtool.MustContain(t, "refusal", ce.Message, "otra instalación", "--aceptar-copia-ajena "+foreign.StoreID,
			"es del archivo de datos "+foreign.StoreID, "el archivo de datos actual es "+own.StoreID, "No se cambió nada")
		if here.sums(t) != before {
			t.Fatal("a refused restore changed the store or the journal")
		}
		_, err = here.restore(foreignBackup, func(o *store.RestoreOptions) { o.AcceptForeign = own.StoreID })
		if ce := wantCode(t, err, cfe.EINVALID); !strings.Contains(ce.Message, "que es "+foreign.StoreID) {
			t.Fatalf("a flag naming another identity: %q", ce.Message)
		}
		res, err := here.restore(foreignBackup, func(o *store.RestoreOptions) { o.AcceptForeign = foreign.StoreID })
		if err != nil {
			t.Fatal(err)
		}
		if !res.Foreign || !slices.Contains(res.Lineage, own.StoreID) {
			t.Fatalf("Foreign %v, lineage %v: the replaced store %s is not recorded", res.Foreign, res.Lineage, own.StoreID)
		}
		// The restored file records it, and its backups say so.
		again := filepath.Join(t.TempDir(), "despues.db")
		info := here.sign(t, s, "despues", 1, again)
		if info.StoreID != foreign.StoreID || !slices.Contains(info.Lineage, own.StoreID) {
			t.Fatalf("backup of the restored store: identity %s, lineage %v", info.StoreID, info.Lineage)
		}
		db := openAt(t, here.store, store.Options{Journal: here.journal})
		evs, err := db.AuditEvents(ctx, 0, 1000)
		if err != nil || !hasEvent(evs, store.AuditRestored, "accepted by a technician") {
			t.Fatalf("no audit event of the foreign restore (%v)", err)
		}
		db.Close()
		// The replaced store is now an ancestor: its backup is this data
		// directory's (refused only as behind the numbers used since).
		_, err = here.restore(ownBackup, nil)
		if ce := wantCode(t, err, cfe.ECONFLICT); !strings.Contains(ce.Message, "--confirmar-numeros-usados") || strings.Contains(ce.Message, "--aceptar-copia-ajena") {
			t.Fatalf("the ancestor's backup: %q", ce.Message)
		}
	})

	t.Run("the lost file's backup, after a new file replaced it", func(t *testing.T) {
		t.Parallel()
		d := newDataDir(t)
		backup := filepath.Join(t.TempDir(), "copia.db")
		old := d.sign(t, s, "viejo", 3, backup)
		if err := os.Remove(d.store); err != nil {
			t.Fatal(err)
		}
		now := filepath.Join(t.TempDir(), "nuevo.db")
		info := d.sign(t, s, "nuevo", 2, now) // a new file, numbering above the journal
		if info.StoreID == old.StoreID || !slices.Equal(info.Lineage, []string{old.StoreID}) {
			t.Fatalf("the new file %s records lineage %v, want [%s]", info.StoreID, info.Lineage, old.StoreID)
		}
		res, err := d.restore(backup, func(o *store.RestoreOptions) {
			o.Confirmed = []cfe.LastNumber{{Type: cfe.ETicket, Serie: "A", Last: 5}}
		})
		if err != nil {
			t.Fatalf("the lost file's backup: %v", err)
		}
		if res.Foreign || !slices.Contains(res.Lineage, info.StoreID) {
			t.Fatalf("Foreign %v, lineage %v", res.Foreign, res.Lineage)
		}
	})

	t.Run("a store whose CFEs were all archived is not new", func(t *testing.T) {
		t.Parallel()
		here, there := newDataDir(t), newDataDir(t)
		db := here.open(t)
		for i := range 2 {
			doc := commitSigned(t, db, s, fmt.Sprint("archivado-", i), nil)
			if err := db.MarkDelivered(ctx, doc.UUID, int64(i+1)); err != nil {
				t.Fatal(err)
			}
		}
		if res, err := db.Archive(ctx, cfe.Date{Year: 2026, Month: time.April, Day: 1}); err != nil || res.Moved != 2 {
			t.Fatalf("archived %+v (%v), want both CFEs", res, err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		foreign := filepath.Join(t.TempDir(), "ajena.db")
		there.sign(t, s, "alla", 3, foreign)
		_, err := here.restore(foreign, nil)
		if ce := wantCode(t, err, cfe.ECONFLICT); !strings.Contains(ce.Message, "--aceptar-copia-ajena") {
			t.Fatalf("a foreign backup over an archived store: %q", ce.Message)
		}
	})

	t.Run("the journal's store, its file lost", func(t *testing.T) {
		t.Parallel()
		d := newDataDir(t)
		backup := filepath.Join(t.TempDir(), "copia.db")
		d.sign(t, s, "v", 3, backup)
		if err := os.Remove(d.store); err != nil {
			t.Fatal(err)
		}
		if _, err := d.restore(backup, nil); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("the same backup twice", func(t *testing.T) {
		t.Parallel()
		d := newDataDir(t)
		backup := filepath.Join(t.TempDir(), "copia.db")
		d.sign(t, s, "v", 3, backup)
		for i := range 2 {
			if _, err := d.restore(backup, nil); err != nil {
				t.Fatalf("restore %d: %v", i+1, err)
			}
		}
	})

	t.Run("a new data directory takes any backup of its profile", func(t *testing.T) {
		t.Parallel()
		there := newDataDir(t)
		backup := filepath.Join(t.TempDir(), "copia.db")
		there.sign(t, s, "v", 3, backup)
		empty := newDataDir(t)
		res, err := empty.restore(backup, func(o *store.RestoreOptions) {
			// Nothing here bounds the numbers the lost store used: the
			// backup's journal does, as before (a number is confirmed).
			o.Confirmed = []cfe.LastNumber{{Type: cfe.ETicket, Serie: "A", Last: 3}}
		})
		if err != nil || res.Foreign || len(res.Lineage) != 0 {
			t.Fatalf("into an empty data directory: %+v, %v", res, err)
		}
		started := newDataDir(t) // a new installation started once: nothing signed
		fresh := started.sign(t, s, "", 0, filepath.Join(t.TempDir(), "vacio.db"))
		res, err = started.restore(backup, nil)
		if err != nil || res.Foreign || !slices.Equal(res.Lineage, []string{fresh.StoreID}) {
			t.Fatalf("into a data directory that signed nothing: %+v, %v", res, err)
		}
	})
}

// TestRestore_ComparesWithTheService: when the hosted service answers, the
// backup's CFEs it holds under the same numbers must be the same documents
// (uuid and security code); one that differs is refused naming its number,
// and nothing changes.
func TestRestore_ComparesWithTheService(t *testing.T) {
	t.Parallel()
	s := testSigner(t)
	// served lists CFEs of db as the service's search lists them.
	served := func(t *testing.T, d dataDir, from, to int64) []store.ServiceCFE {
		db := openAt(t, d.store, store.Options{})
		defer db.Close()
		var out []store.ServiceCFE
		for n := from; n <= to; n++ {
			c, err := db.FindByNumber(ctx, cfe.ETicket, "A", n)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, store.ServiceCFE{Type: c.Type, Serie: c.Serie, Nro: c.Nro, UUID: c.UUID, CodSeguridad: c.CodSeguridad})
		}
		return out
	}
	answer := func(docs []store.ServiceCFE) func(o *store.RestoreOptions) {
		return func(o *store.RestoreOptions) {
			o.Service = func(_ context.Context, _ *store.BackupInfo) store.ServiceAnswer {
				return store.ServiceAnswer{Last: []cfe.LastNumber{{Type: cfe.ETicket, Serie: "A", Last: 5}}, LastKnown: true,
					CFEs: docs, CFEsKnown: true}
			}
		}
	}
	// ours signs A-1..A-5 and backs them up; another installation (a copy
	// that went on by itself) signed with other content, and the
	// service holds those.
	setup := func(t *testing.T) (d dataDir, backup string, theirs []store.ServiceCFE) {
		d, other := newDataDir(t), newDataDir(t)
		backup = filepath.Join(t.TempDir(), "copia.db")
		d.sign(t, s, "nuestro", 5, backup)
		other.sign(t, s, "otro", 5, "")
		return d, backup, served(t, other, 4, 5)
	}

	t.Run("the same documents: restored", func(t *testing.T) {
		t.Parallel()
		d, backup, _ := setup(t)
		res, err := d.restore(backup, answer(served(t, d, 1, 5)))
		if err != nil {
			t.Fatal(err)
		}
		if !res.ServiceCompared || res.Compared != 5 {
			t.Fatalf("compared %v: %d CFEs, want 5", res.ServiceCompared, res.Compared)
		}
	})
	t.Run("other documents under the backup's numbers: refused", func(t *testing.T) {
		t.Parallel()
		d, backup, theirs := setup(t)
		// The service's answer is read from the store before the sums: opening
		// it may grow the file (bbolt on Windows maps it whole).
		docs := append(served(t, d, 1, 3), theirs...)
		before := d.sums(t)
		_, err := d.restore(backup, answer(docs))
		ce := wantCode(t, err, cfe.ECONFLICT)
		testtool.MustContain(t, "refusal", ce.Message, "2 comprobantes distintos",
			"e-Ticket serie A número 4: la copia tiene el uuid nuestro-3", "el servicio el uuid otro-3",
			"e-Ticket serie A número 5", "No se cambió nada")
		if strings.Contains(ce.Message, "número 3:") {
			t.Errorf("A-3, the same document, is named: %q", ce.Message)
		}
		if d.sums(t) != before {
			t.Fatal("a refused restore changed the store or the journal")
		}
	})
	t.Run("the same uuid with another content: refused", func(t *testing.T) {
		t.Parallel()
		d, backup, theirs := setup(t)
		docs := served(t, d, 1, 5)
		docs[4].CodSeguridad = theirs[1].CodSeguridad
		_, err := d.restore(backup, answer(docs))
		if ce := wantCode(t, err, cfe.ECONFLICT); !strings.Contains(ce.Message, "número 5") {
			t.Fatalf("message %q", ce.Message)
		}
	})
	t.Run("a CFE the service refused is not compared", func(t *testing.T) {
		t.Parallel()
		d, _, theirs := setup(t)
		db := openAt(t, d.store, store.Options{Journal: d.journal})
		for _, n := range []string{"nuestro-3", "nuestro-4"} {
			if err := db.MarkRejected(ctx, n, "409: el número ya tiene otro comprobante"); err != nil {
				t.Fatal(err)
			}
		}
		refused := filepath.Join(t.TempDir(), "rechazados.db")
		if _, err := db.Backup(ctx, refused, backupMeta, signatures); err != nil {
			t.Fatal(err)
		}
		db.Close()
		res, err := d.restore(refused, answer(append(served(t, d, 1, 3), theirs...)))
		if err != nil || res.Compared != 3 {
			t.Fatalf("compared %d (%v), want A-1..A-3", res.Compared, err)
		}
	})
	t.Run("the service did not answer: restored without the comparison", func(t *testing.T) {
		t.Parallel()
		d, backup, _ := setup(t)
		res, err := d.restore(backup, func(o *store.RestoreOptions) {
			o.Service = func(context.Context, *store.BackupInfo) store.ServiceAnswer { return store.ServiceAnswer{} }
		})
		if err != nil || res.ServiceCompared {
			t.Fatalf("%+v, %v", res, err)
		}
	})
}
