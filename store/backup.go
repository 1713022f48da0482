package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/durable"
)

// Backups (cfe-agent backup, docs/numbering.md "Backups and restore").
//
// Backup copies the store file inside one read transaction (bbolt's
// Tx.WriteTo), so the copy is the store exactly as one instant saw it while
// commits go on. The copy gets one more bucket, backup, holding a record of
// that instant: the source file's identity, the transaction copied, the
// profile it belongs to, the counts of CFEs, outbox, rejected deliveries and
// ranges, the counters, and the numbering journal's marks read inside the
// same transaction, and the identity and lineage of the file (lineage.go).
// The copy is written to a temporary file beside the destination, verified
// (opened read-only, Tx.Check, every count recounted and equal to the
// record, every record checked: backupcheck.go) and only then renamed to
// its name: a crash or a kill leaves no partial backup under the
// destination's name, and a store with a damaged record gets no backup.

// bucketBackup holds the backup record inside a copy; Restore removes it.
var (
	bucketBackup = []byte("backup")
	keyBackup    = []byte("record")
)

// backupVersion is the layout of the backup record. Version 2 added the
// lineage; a version-1 backup (none recorded) still verifies.
const backupVersion = 2

// BackupMeta names the profile a backup belongs to. Restore refuses a
// backup of another profile, environment or company.
type BackupMeta struct {
	Profile     string `json:"perfil"`
	Environment string `json:"ambiente"`
	RUC         string `json:"ruc"`
}

// BackupCounts are the sizes of a store's lists at one transaction.
type BackupCounts struct {
	CFEs     int `json:"cfes"`
	Outbox   int `json:"outbox"`
	Rejected int `json:"rejected"`
	Ranges   int `json:"ranges"`
}

// BackupInfo describes a verified backup file.
type BackupInfo struct {
	Path    string
	Size    int64
	TakenAt time.Time // when the copy's transaction was read
	TxID    int       // the source's transaction the copy holds
	StoreID string    // the identity of the source store file
	// Lineage are the identities of the files the source replaced in its
	// data directory (lineage.go), as the source recorded them.
	Lineage []string
	Meta    BackupMeta
	Counts  BackupCounts
	// Counters are the last committed number of each (type, serie) in the
	// copy.
	Counters []cfe.LastNumber
	// Ranges are the CAE ranges the copy holds.
	Ranges []cfe.CAERange
	// Journal is the numbering journal's reserved mark of each (type,
	// serie) when the copy was taken (empty without a journal): no number
	// committed at that instant exceeds it.
	Journal []cfe.LastNumber
	// Checked says what the check of every record covered.
	Checked RecordsChecked
}

// SeriesInUse returns the ranges that hold the backup's CFEs: those of the
// (type, serie) sequences it stores CFEs of, from its lowest stored number
// of the sequence up (older ranges hold only archived CFEs).
func (bi *BackupInfo) SeriesInUse() []cfe.CAERange {
	var out []cfe.CAERange
	for _, r := range bi.Ranges {
		if slices.ContainsFunc(bi.Checked.Lowest, func(l cfe.LastNumber) bool {
			return l.Type == r.Type && l.Serie == r.Serie && r.HNro >= l.Last
		}) {
			out = append(out, r)
		}
	}
	return out
}

// backupRecord is the record a backup carries in its backup bucket.
type backupRecord struct {
	Version  int             `json:"version"`
	TakenAt  time.Time       `json:"taken_at"`
	TxID     int             `json:"tx_id"`
	StoreID  string          `json:"store_id"`
	Lineage  []string        `json:"lineage,omitempty"`
	Meta     BackupMeta      `json:"meta"`
	Counts   BackupCounts    `json:"counts"`
	Counters []counterRecord `json:"counters"`
	Journal  *journalFile    `json:"journal,omitempty"`

	ranges  []cfe.CAERange // read by verifyBackup, not stored in the record
	checked RecordsChecked // what verifyBackup checked
}

func (r *backupRecord) info(path string, size int64) *BackupInfo {
	bi := &BackupInfo{Path: path, Size: size, TakenAt: r.TakenAt, TxID: r.TxID, StoreID: r.StoreID,
		Lineage: slices.Clone(r.Lineage), Meta: r.Meta, Counts: r.Counts, Ranges: r.ranges, Checked: r.checked}
	for _, c := range r.Counters {
		bi.Counters = append(bi.Counters, cfe.LastNumber(c))
	}
	if r.Journal != nil {
		for _, e := range r.Journal.Sequences {
			bi.Journal = append(bi.Journal, cfe.LastNumber{Type: e.Type, Serie: e.Serie, Last: e.Reserved})
		}
	}
	return bi
}

// Backup writes a consistent copy of the store to path while the store is in
// use, with meta recorded inside it, verifies it (every record, with checks)
// and returns what it holds. path is replaced atomically: it holds the
// previous file (or nothing) until the new copy is complete and verified; a
// copy with a damaged record is not kept.
//
// A long copy holds a read transaction: commits go on meanwhile, but bbolt
// cannot reuse the pages they free until it ends (the file may grow), and a
// commit that needs a larger mapping waits for it.
//
// Errors: EUNAVAILABLE when the store is closed or damaged, ctx is done, or
// the copy cannot be written or does not verify (its message says why,
// naming each damaged CFE; errors.Is ErrDamagedRecord then).
func (db *DB) Backup(ctx context.Context, path string, meta BackupMeta, checks RecordChecks) (*BackupInfo, error) {
	const op = "store.Backup"
	if err := ctx.Err(); err != nil {
		return nil, ctxError(op, err)
	}
	var rec *backupRecord
	var verified *backupRecord
	err := durable.WriteFileFunc(path, func(f *os.File) error {
		return db.view(ctx, op, func(tx *bolt.Tx) error {
			var err error
			if rec, err = snapshotOf(tx); err != nil {
				return err
			}
			rec.TakenAt, rec.Meta = db.opts.Now().UTC(), meta
			rec.Journal = db.journalSnapshot()
			_, err = tx.WriteTo(f)
			return err
		})
	}, func(tmp string) error {
		if err := sealBackup(tmp, rec); err != nil {
			return err
		}
		var err error
		verified, err = verifyBackup(ctx, tmp, checks)
		return err
	})
	if err != nil {
		var ce *cfe.Error
		var re *recordsError
		switch {
		case errors.As(err, &ce):
			return nil, err
		case errors.As(err, &re):
			return nil, &cfe.Error{Code: cfe.EUNAVAILABLE, Op: op, Err: err, Message: fmt.Sprintf(
				"no se guardó la copia de seguridad %s: el archivo de datos tiene %s. Las copias anteriores no se tocaron", path, re.describe())}
		}
		return nil, &cfe.Error{Code: cfe.EUNAVAILABLE, Op: op, Err: err,
			Message: fmt.Sprintf("no se pudo escribir la copia de seguridad %s: %v", path, err)}
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, &cfe.Error{Code: cfe.EINTERNAL, Op: op, Err: err, Message: "no se encuentra la copia de seguridad " + path}
	}
	return verified.info(path, fi.Size()), nil
}

// journalSnapshot returns the journal's marks as its file holds them, nil
// without a journal.
func (db *DB) journalSnapshot() *journalFile {
	j := db.journal
	if j == nil {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	f := &journalFile{Version: journalVersion, StoreID: j.storeID}
	for _, e := range j.entries {
		f.Sequences = append(f.Sequences, e)
	}
	slices.SortFunc(f.Sequences, func(a, b journalEntry) int { return seqKey{a.Type, a.Serie}.compare(seqKey{b.Type, b.Serie}) })
	return f
}

func (k seqKey) compare(o seqKey) int { return strings.Compare(k.String(), o.String()) }

// snapshotOf counts what tx holds.
func snapshotOf(tx *bolt.Tx) (*backupRecord, error) {
	rec := &backupRecord{Version: backupVersion, TxID: tx.ID()}
	if meta := tx.Bucket(bucketMeta); meta != nil {
		rec.StoreID = string(meta.Get(keyStoreID))
		lin, err := readLineage(tx)
		if err != nil {
			return nil, err
		}
		rec.Lineage = lineageIDs(lin)
	}
	n := func(name []byte) int {
		b := tx.Bucket(name)
		if b == nil {
			return 0
		}
		c, k := b.Cursor(), 0
		for key, _ := c.First(); key != nil; key, _ = c.Next() {
			k++
		}
		return k
	}
	rec.Counts = BackupCounts{CFEs: n(bucketCFEs), Outbox: n(bucketOutbox), Rejected: n(bucketRejected), Ranges: n(bucketRanges)}
	if b := tx.Bucket(bucketCounters); b != nil {
		err := b.ForEach(func(_, v []byte) error {
			var c counterRecord
			if err := json.Unmarshal(v, &c); err != nil {
				return fmt.Errorf("%w: counter record: %w", ErrDamaged, err)
			}
			rec.Counters = append(rec.Counters, c)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return rec, nil
}

// sealBackup writes rec into the copy at path.
func sealBackup(path string, rec *backupRecord) error {
	return withBolt(path, false, func(bdb *bolt.DB) error {
		return bdb.Update(func(tx *bolt.Tx) error {
			b, err := tx.CreateBucketIfNotExists(bucketBackup)
			if err != nil {
				return err
			}
			return putJSON(b, keyBackup, rec)
		})
	})
}

// withBolt opens the bbolt file at path (read-only or not) under guard, runs
// fn and closes it.
func withBolt(path string, readOnly bool, fn func(*bolt.DB) error) error {
	var bdb *bolt.DB
	err := guard(func() error {
		var err error
		bdb, err = bolt.Open(path, 0o600, &bolt.Options{ReadOnly: readOnly, Timeout: time.Second})
		return err
	})
	if err != nil {
		return err
	}
	err = guard(func() error { return fn(bdb) })
	if isDamage(err) {
		return err // bbolt is not used again; the process ends soon (a command)
	}
	if cerr := bdb.Close(); err == nil {
		err = cerr
	}
	return err
}

// VerifyBackup checks the backup file at path: its size and page tree,
// bbolt's own consistency check, its record, every count recounted against
// the record, and every record with checks (backupcheck.go). It returns
// what the backup holds.
//
// Errors: EINVALID (Spanish, naming the file) when it is not a verified
// cfe-agent backup; a damaged record is named (type, serie, number, uuid)
// and errors.Is ErrDamagedRecord.
func VerifyBackup(path string, checks RecordChecks) (*BackupInfo, error) {
	return verifyBackupFile(context.Background(), path, checks)
}

// verifyBackupFile is VerifyBackup under ctx.
func verifyBackupFile(ctx context.Context, path string, checks RecordChecks) (*BackupInfo, error) {
	rec, err := verifyBackup(ctx, path, checks)
	if err != nil {
		var ce *cfe.Error
		var re *recordsError
		switch {
		case errors.As(err, &ce):
			return nil, err
		case errors.As(err, &re):
			return nil, &cfe.Error{Code: cfe.EINVALID, Op: "store.VerifyBackup", Err: err, Message: fmt.Sprintf(
				"la copia de seguridad %s tiene %s; no se puede usar", path, re.describe())}
		}
		return nil, &cfe.Error{Code: cfe.EINVALID, Op: "store.VerifyBackup", Err: err,
			Message: fmt.Sprintf("el archivo %s no es una copia de seguridad válida del agente: %v", path, err)}
	}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, &cfe.Error{Code: cfe.EINVALID, Op: "store.VerifyBackup", Err: err, Message: "no se puede leer " + path}
	}
	return rec.info(path, fi.Size()), nil
}

// verifyBackup is VerifyBackup with plain errors (a *recordsError for
// damaged records).
func verifyBackup(ctx context.Context, path string, checks RecordChecks) (*backupRecord, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.Size() == 0 {
		return nil, errors.New("el archivo está vacío")
	}
	if err := checkFileSize(path); err != nil {
		return nil, errors.New("el archivo está truncado")
	}
	if err := checkTree(path); err != nil {
		return nil, fmt.Errorf("el archivo está dañado (%w)", err)
	}
	var rec backupRecord
	err = withBolt(path, true, func(bdb *bolt.DB) error {
		return bdb.View(func(tx *bolt.Tx) error {
			var problems []string
			for err := range tx.Check() {
				problems = append(problems, err.Error())
			}
			if len(problems) > 0 {
				return fmt.Errorf("la verificación de bbolt falló: %s", strings.Join(problems, "; "))
			}
			b := tx.Bucket(bucketBackup)
			if b == nil {
				return errors.New("no tiene el registro de copia de seguridad (no fue hecho por «cfe-agent backup»)")
			}
			found, err := getJSON(b, keyBackup, &rec)
			if err != nil {
				return fmt.Errorf("el registro de copia de seguridad no se puede leer: %w", err)
			}
			if !found {
				return errors.New("la sección de copia de seguridad no tiene su registro")
			}
			if rec.Version < 1 || rec.Version > backupVersion {
				return fmt.Errorf("registro de copia versión %d, se espera %d", rec.Version, backupVersion)
			}
			for _, name := range allBuckets {
				if tx.Bucket(name) == nil {
					return fmt.Errorf("le falta la sección %s del almacenamiento", name)
				}
			}
			got, err := snapshotOf(tx)
			if err != nil {
				return err
			}
			if got.Counts != rec.Counts {
				return fmt.Errorf("los conteos no coinciden con los de la transacción copiada: tiene %+v, se copiaron %+v", got.Counts, rec.Counts)
			}
			if !slices.Equal(got.Counters, rec.Counters) {
				return errors.New("los contadores de numeración no coinciden con los de la transacción copiada")
			}
			if got.StoreID != rec.StoreID || !slices.Equal(got.Lineage, rec.Lineage) {
				return errors.New("la identidad del archivo o sus anteriores no coinciden con los del registro")
			}
			if rec.ranges, err = loadRanges(tx); err != nil {
				return err
			}
			rec.checked, err = checkRecords(ctx, tx, checks, true)
			return err
		})
	})
	if isDamage(err) {
		return nil, fmt.Errorf("el archivo está dañado (%w)", err)
	}
	if err != nil {
		return nil, err
	}
	return &rec, nil
}
