package store

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// A damaged store file never panics the agent.
//
// bbolt trusts its file: a page that is not what its parent says (zeroed by a
// failing disk, overwritten, bytes flipped) makes it panic, and an offset
// that points outside the mapped file makes the process fault. Open first
// walks the page tree with plain reads (checkTree, precheck.go). Every
// transaction then runs under guard (boltView, boltUpdate), which turns both
// into an error (runtime/debug.SetPanicOnFault turns the fault into a panic
// first). A panic may leave bbolt's own state inconsistent (a lock taken, a
// freelist half read), so the first one marks the DB broken: from then on
// every operation answers the same Spanish error without starting another
// transaction, and Close gives bbolt's Close a bounded time (closeBolt)
// before it closes the file itself, which releases its lock.
//
// Open also reads every key and value once (checkPages), inside bbolt's
// mapping, so that a damage anywhere is found at start, with a message saying
// what to do, rather than by the first query that lands on it.

// ErrDamaged is wrapped by the error of an operation that found the store
// file damaged (errors.Is).
var ErrDamaged = errors.New("store file damaged")

// panicked is a panic recovered from bbolt, as an error.
type panicked struct{ value any }

func (p panicked) Error() string { return fmt.Sprintf("bbolt panicked: %v", p.value) }

// guard runs fn, turning a panic (or a memory fault on the mapped file) into
// a panicked error.
func guard(fn func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = panicked{r}
		}
	}()
	return fn()
}

// damagedMessage is the Spanish message of a damaged store file: what
// happened and what the technician does (docs/numbering.md: a new file
// resumes numbering above the numbering journal).
func damagedMessage(path string) string {
	return fmt.Sprintf("el archivo de datos %s está dañado y no se puede leer. Detenga el agente, "+
		"mueva el archivo a otro lugar y consérvelo (puede contener comprobantes sin enviar), y restaure una copia de seguridad "+
		"o vuelva a iniciar el agente sin él: crea uno nuevo y la numeración sigue por encima del diario de numeración", path)
}

// asDamaged returns the damaged error of op for err, which found the file
// damaged: err itself when it already is one.
func asDamaged(op, path string, err error) *cfe.Error {
	var ce *cfe.Error
	if errors.As(err, &ce) && errors.Is(ce, ErrDamaged) {
		c := *ce
		c.Op = op
		return &c
	}
	return damaged(op, path, err)
}

// damaged is the error of an operation op that found the file at path
// damaged; cause says how (it is kept for the logs, in English).
func damaged(op, path string, cause error) *cfe.Error {
	// Not EINTERNAL, and Respuesta set explicitly: the cashier and /health are
	// shown what happened and what to do, not a generic "retry" that cannot
	// help (localapi's userFacingFault).
	return &cfe.Error{Code: cfe.EUNAVAILABLE, Op: op, Respuesta: cfe.RespErrorInterno, Message: damagedMessage(path),
		Err: fmt.Errorf("%w: %w", ErrDamaged, cause)}
}

// isDamage reports whether err came from a panic recovered by guard.
func isDamage(err error) bool {
	var p panicked
	return errors.As(err, &p)
}

// boltDB is bbolt's DB as the rest of the package sees it (DB.bolt): its
// View and Update run under guard, so that no transaction of the package,
// the committer's included, can panic the process.
type boltDB struct {
	raw   *bolt.DB
	owner *DB
}

// View is bolt.DB.View under guard (boltView).
func (b *boltDB) View(fn func(*bolt.Tx) error) error { return b.owner.boltView("store", fn) }

// Update is bolt.DB.Update under guard (boltUpdate).
func (b *boltDB) Update(fn func(*bolt.Tx) error) error { return b.owner.boltUpdate("store", fn) }

// Close closes bbolt's DB (of a DB that is not broken: see closeBolt).
func (b *boltDB) Close() error { return b.raw.Close() }

// boltView runs fn in a read transaction under guard, after the logged
// CFEs are checkpointed (barrier). After a recovered panic the DB is broken
// and bbolt is not used again.
func (db *DB) boltView(op string, fn func(*bolt.Tx) error) error {
	db.barrier()
	return db.boltViewNow(op, fn)
}

// boltViewNow is boltView without the checkpoint: for readers that look in
// the logged CFEs themselves (FindByUUID, the committer's checks).
func (db *DB) boltViewNow(op string, fn func(*bolt.Tx) error) error {
	if err := db.brokenErr(op); err != nil {
		return err
	}
	err := guard(func() error { return db.bolt.raw.View(fn) })
	if isDamage(err) {
		return db.markBroken(op, err)
	}
	return err
}

// boltUpdate is boltView for a write transaction: it comes after every
// logged CFE.
func (db *DB) boltUpdate(op string, fn func(*bolt.Tx) error) error {
	db.barrier()
	return db.boltUpdateNow(op, fn)
}

// boltUpdateNow is boltUpdate without the checkpoint: the checkpoint's own
// transaction, and Open's replay.
func (db *DB) boltUpdateNow(op string, fn func(*bolt.Tx) error) error {
	if err := db.brokenErr(op); err != nil {
		return err
	}
	err := guard(func() error { return db.bolt.raw.Update(fn) })
	if isDamage(err) {
		return db.markBroken(op, err)
	}
	return err
}

// markBroken records the first damage found and returns the error every
// later operation answers.
func (db *DB) markBroken(op string, cause error) error {
	e := damaged(op, db.path, cause)
	db.broken.CompareAndSwap(nil, e)
	return e
}

// brokenErr returns the damaged error when the DB is broken, for op.
func (db *DB) brokenErr(op string) error {
	e := db.broken.Load()
	if e == nil {
		return nil
	}
	c := *e
	c.Op = op
	return &c
}

// Damaged returns the error that marked the store file damaged since Open
// (a page that bbolt could not read), or nil. Once damaged, every operation
// fails with that error; /health can report it.
func (db *DB) Damaged() error {
	if e := db.broken.Load(); e != nil {
		return e
	}
	return nil
}

// closeFiles closes bbolt's files without calling into bbolt, after a panic
// inside bolt.Open (no DB to close): closing them releases the file lock;
// the memory map stays until the process ends.
func closeFiles(files []*os.File) {
	for _, f := range files {
		_ = f.Close()
	}
}

// closeBolt closes bdb after a recovered panic, but gives up after a while
// (a lock the panic left taken would block it forever) and then closes the
// files, which releases the file lock.
func closeBolt(bdb *bolt.DB, files []*os.File) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = guard(bdb.Close)
	}()
	select {
	case <-done:
	case <-time.After(time.Second):
	}
	closeFiles(files)
}

// checkPages reads every page the file's buckets reach, in one read
// transaction: each branch and leaf page, and the last byte of every key and
// value (which faults when a damaged page's offsets point outside the file).
// bbolt panics on a page of the wrong type; guard turns it into an error.
func checkPages(tx *bolt.Tx) error { return checkPagesUntil(tx, nil) }

// checkPagesUntil is checkPages, ended with errStopped once stop is closed.
func checkPagesUntil(tx *bolt.Tx, stop <-chan struct{}) error {
	var sink byte
	var n int
	var walk func(b *bolt.Bucket) error
	walk = func(b *bolt.Bucket) error {
		c := b.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if n++; n%4096 == 0 {
				select {
				case <-stop:
					return errStopped
				default:
				}
			}
			if len(k) > 0 {
				sink ^= k[len(k)-1]
			}
			if v == nil {
				child := b.Bucket(k)
				if child == nil {
					return fmt.Errorf("%w: key %q is neither a value nor a bucket", ErrDamaged, k)
				}
				if err := walk(child); err != nil {
					return err
				}
				continue
			}
			if len(v) > 0 {
				sink ^= v[len(v)-1]
			}
		}
		return nil
	}
	err := tx.ForEach(func(_ []byte, b *bolt.Bucket) error { return walk(b) })
	runtime.KeepAlive(sink) // the reads must happen: they are the check
	return err
}
