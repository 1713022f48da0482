package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/durable"
)

// BackupArchives copies the yearly archives beside the store into dir, each
// under its own name, so that a backup folder on another disk holds the
// archived receipts too. A copy is taken inside a read transaction of the
// archive, under the lock the archiver writes with, written atomically and
// checked (tx.Check, the same transaction id, and every record as a
// backup's CFEs are: backupcheck.go) before it replaces the previous copy:
// a copy with a damaged record is not kept, and the damaged CFE is named. An archive whose copy in dir already has its transaction id
// is left alone: an archive changes only when the archiver moves CFEs in.
// It returns the files written.
//
// Errors: EUNAVAILABLE when an archive cannot be read or its copy written or
// checked (errors.Is ErrDamagedRecord for a damaged record); the copies
// made before it stay.
func (db *DB) BackupArchives(ctx context.Context, dir string, checks RecordChecks) ([]string, error) {
	const op = "store.BackupArchives"
	var written []string
	for _, year := range db.archiveYears() {
		if err := ctx.Err(); err != nil {
			return written, ctxError(op, err)
		}
		src := db.ArchivePath(year)
		dest := filepath.Join(dir, filepath.Base(src))
		copied := false
		err := db.viewArchive(op, year, func(tx *bolt.Tx) error {
			if id, err := archiveTxID(dest); err == nil && id == tx.ID() {
				return nil // this very version is there already
			}
			want := tx.ID()
			copied = true
			return durable.WriteFileFunc(dest, func(f *os.File) error {
				_, err := tx.WriteTo(f)
				return err
			}, func(tmp string) error {
				return checkArchiveCopy(ctx, tmp, want, checks)
			})
		})
		if err != nil {
			var ce *cfe.Error
			var re *recordsError
			switch {
			case errors.As(err, &ce):
				return written, err
			case errors.As(err, &re):
				return written, &cfe.Error{Code: cfe.EUNAVAILABLE, Op: op, Err: err,
					Message: fmt.Sprintf("no se copió el archivo histórico %s a %s: tiene %s", filepath.Base(src), dir, re.describe())}
			}
			return written, &cfe.Error{Code: cfe.EUNAVAILABLE, Op: op, Err: err,
				Message: fmt.Sprintf("no se pudo copiar el archivo histórico %s a %s: %v", filepath.Base(src), dir, err)}
		}
		if copied {
			written = append(written, dest)
		}
	}
	return written, nil
}

// checkArchiveCopy checks the copy of an archive at path: every page, its
// transaction (want), and every record.
func checkArchiveCopy(ctx context.Context, path string, want int, checks RecordChecks) error {
	return withBolt(path, true, func(adb *bolt.DB) error {
		return adb.View(func(tx *bolt.Tx) error {
			for err := range tx.Check() {
				return err
			}
			if tx.ID() != want {
				return fmt.Errorf("the copy holds transaction %d, not %d", tx.ID(), want)
			}
			_, err := checkRecords(ctx, tx, checks, false)
			return err
		})
	})
}

// archiveTxID opens path read-only, checks every page (tx.Check) and returns
// its last transaction id.
func archiveTxID(path string) (int, error) {
	if _, err := os.Stat(path); err != nil {
		return 0, err
	}
	var id int
	err := withBolt(path, true, func(adb *bolt.DB) error {
		return adb.View(func(tx *bolt.Tx) error {
			for err := range tx.Check() {
				return err
			}
			id = tx.ID()
			return nil
		})
	})
	return id, err
}
