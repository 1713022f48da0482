package store

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// Yearly archives. A shop keeps its CFEs for years, but the agent needs the
// recent ones: Archive moves CFEs signed before a date (by default the
// previous calendar years) out of the live file into one read-only file per
// year of signature beside it, "<store>-archive-<year>.db" (agent.db →
// agent-archive-2025.db). The live file then holds about a year, so its
// start (Open checks every page) and its size stay those of a year.
//
// An archive has the live file's layout for what it holds: cfes, xml (the
// same compressed values, with the dictionaries they name in meta), by_number
// and by_time. FindByUUID, FindByNumber, ListByDate and CountByDate look in
// the archives too, so reprints, envelopes and exports find archived CFEs;
// RangeStatus and Stats count them (meta "archived/<range>").
//
// Only delivered CFEs move (the hosted service accepted them): a CFE still in
// the outbox, or one the hosted service refused, stays live, and so do the
// higher numbers of its serie, so that the live numbers of every serie stay
// one run from its first live number to its counter. The move is crash-safe
// and may be run again: each batch is written to its archive and fsynced
// (a bbolt commit), and only then deleted from the live file in one
// transaction, which first checks that each record is still the one copied.
// A crash between the two leaves the CFEs in both files; the next run copies
// them again (the same bytes) and deletes them, and lists show each once
// meanwhile.
//
// An archive is checked page by page (checkTree) the first time it is
// opened, in the background after Open (warmArchives). One that is damaged
// is skipped by lookups, which then say so in their ENOTFOUND: the issuer
// looks every new sale's uuid up, and a damaged file of a past year must not
// stop the shop from signing. A list or count that needs it fails.

// defaultArchiveBatch is how many CFEs Archive moves per pair of
// transactions (Options.archiveBatch, which tests lower).
const defaultArchiveBatch = 2000

var keyArchivedPrefix = []byte("archived/")

// AuditArchived is the audit event of CFEs moved to a yearly archive: one
// per batch and year, Detail naming the file and the count.
const AuditArchived = "archived"

// ArchivePath returns the archive of year beside the store file.
func (db *DB) ArchivePath(year int) string {
	base := strings.TrimSuffix(filepath.Base(db.path), filepath.Ext(db.path))
	return filepath.Join(filepath.Dir(db.path), fmt.Sprintf("%s-archive-%04d.db", base, year))
}

// DefaultArchiveBefore is the default archive date at now: the first day of
// now's calendar year in Montevideo (CFEs of the previous years move).
func DefaultArchiveBefore(now time.Time) cfe.Date {
	return cfe.Date{Year: now.In(cfe.Montevideo).Year(), Month: time.January, Day: 1}
}

// ArchiveResult is what Archive did.
type ArchiveResult struct {
	Moved int            // CFEs moved out of the live file
	Years map[int]int    // of them, by year of signature
	Kept  map[string]int // CFEs signed before the date that stayed live, by serie ("101/A"): not delivered, or above one that is not
}

// archives are the yearly archive files a DB has opened for reading.
type archives struct {
	mu     sync.Mutex
	open   map[int]*bolt.DB
	failed map[int]error // archives that could not be opened: damaged (not tried again)
	warmed chan struct{} // closed when warmArchives is done

	// The years found by the last listing of the folder, and the folder's
	// modification time then (archiveYears).
	yearsMu  sync.Mutex
	years    []int
	listedAt time.Time // the folder's modification time
	listedOn time.Time // when it was listed
}

// warmArchives opens (and checks) the archives in the background after
// Open: the first open of an archive reads all of it, and every new sale's
// uuid is looked up in the archives (the issuer's idempotency check), so
// the first sale after a start should not be the one that pays for it. It
// stops early when the DB closes.
func (db *DB) warmArchives() {
	defer close(db.arch.warmed)
	for _, year := range db.archiveYears() {
		select {
		case <-db.quit:
			return
		default:
		}
		_ = db.viewArchive("store.Open", year, func(*bolt.Tx) error { return nil }) // a damaged one answers its error at lookup
	}
}

// Archive moves the delivered CFEs signed before day before to the yearly
// archives (see above). It may run while the agent signs.
//
// Errors: EINVALID for a zero date; EUNAVAILABLE when ctx ends (what was
// moved stays moved); EINTERNAL when a file cannot be written.
func (db *DB) Archive(ctx context.Context, before cfe.Date) (ArchiveResult, error) {
	const op = "store.Archive"
	res := ArchiveResult{Years: map[int]int{}, Kept: map[string]int{}}
	if before.IsZero() {
		return res, invalid(op, field("antes", "es obligatoria"))
	}
	for {
		if err := ctx.Err(); err != nil {
			return res, ctxError(op, err)
		}
		var batch []archived
		kept := map[string]int{}
		err := db.view(ctx, op, func(tx *bolt.Tx) error {
			var err error
			batch, err = pickArchive(tx, before, db.opts.archiveBatch, kept)
			return err
		})
		if err != nil {
			return res, err
		}
		res.Kept = kept
		if len(batch) == 0 {
			return res, nil
		}
		byYear := map[int][]archived{}
		for _, a := range batch {
			byYear[a.year] = append(byYear[a.year], a)
		}
		for year, items := range byYear {
			if err := db.writeArchive(year, items); err != nil {
				return res, &cfe.Error{Code: cfe.EINTERNAL, Op: op, Err: err,
					Message: "no se pudo escribir el archivo histórico " + db.ArchivePath(year)}
			}
		}
		if db.opts.afterArchiveWrite != nil {
			if err := db.opts.afterArchiveWrite(); err != nil {
				return res, err
			}
		}
		var moved int
		err = db.update(ctx, op, func(tx *bolt.Tx) error {
			var err error
			moved, err = db.dropArchived(tx, byYear)
			return err
		})
		if err != nil {
			return res, err
		}
		for year, items := range byYear {
			res.Years[year] += len(items)
		}
		res.Moved += moved
		if moved == 0 {
			return res, nil // every record changed since it was read: try again later
		}
	}
}

// archived is one CFE on its way to an archive: its stored bytes.
type archived struct {
	uuid, record, xml []byte
	seq               []byte // xml key
	numberKey         []byte
	timeKey           []byte
	dictKey, dict     []byte // the dictionary its XML names; nil for an XML stored as it is
	rangeID           string
	year              int
}

// pickArchive reads up to n CFEs to archive: per serie, from its first live
// number up, those signed before day before and delivered, stopping at the
// first that is not. kept counts, by serie, those signed before day before
// that stay.
func pickArchive(tx *bolt.Tx, before cfe.Date, n int, kept map[string]int) ([]archived, error) {
	var out []archived
	var series [][]byte
	if err := tx.Bucket(bucketCounters).ForEach(func(k, _ []byte) error {
		series = append(series, bytes.Clone(k))
		return nil
	}); err != nil {
		return nil, err
	}
	byNumber, cfes, xmls, meta := tx.Bucket(bucketByNumber), tx.Bucket(bucketCFEs), tx.Bucket(bucketXML), tx.Bucket(bucketMeta)
	for _, s := range series {
		prefix := append(s, '/')
		c := byNumber.Cursor()
		stopped := false
		for k, uuid := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, uuid = c.Next() {
			v := cfes.Get(uuid)
			if v == nil {
				return nil, fmt.Errorf("%w: by_number %s names %s, which has no record", ErrDamaged, k, uuid)
			}
			var rec issuedRecord
			if err := json.Unmarshal(v, &rec); err != nil {
				// A record that cannot be read stays live, and so do the
				// higher numbers of its serie: it must stay visible until a
				// technician recovers it (quarantine.go).
				stopped = true
				kept[string(s)]++
				continue
			}
			signed := rec.TmstFirma.In(cfe.Montevideo)
			if !cfe.DateOf(signed).Before(before) {
				break
			}
			if stopped || rec.Delivery.State != cfe.DeliveryAccepted {
				stopped = true
				kept[string(s)]++
				continue
			}
			if len(out) == n {
				return out, nil // a full batch; the next one goes on from here
			}
			seq := seqBytes(rec.OutboxSeq)
			x := xmls.Get(seq)
			if x == nil {
				return nil, fmt.Errorf("cfe %s: no signed XML under commit sequence %d", uuid, rec.OutboxSeq)
			}
			a := archived{uuid: bytes.Clone(uuid), record: bytes.Clone(v), xml: bytes.Clone(x), seq: seq,
				numberKey: bytes.Clone(k), timeKey: timeKey(rec.TmstFirma, rec.key(), rec.Nro),
				rangeID: rec.RangeID, year: signed.Year()}
			if len(x) >= xmlHeaderLen && x[0] == xmlCompressed {
				var h [dictHashLen]byte
				copy(h[:], x[5:xmlHeaderLen])
				a.dictKey = dictKey(h)
				if d := meta.Get(a.dictKey); d != nil {
					a.dict = bytes.Clone(d)
				} else {
					return nil, fmt.Errorf("cfe %s: dictionary %x missing", uuid, h)
				}
			}
			out = append(out, a)
		}
	}
	return out, nil
}

// archiveBuckets are the buckets of an archive file.
var archiveBuckets = [][]byte{bucketMeta, bucketCFEs, bucketXML, bucketByNumber, bucketByTime}

// writeArchive writes items to year's archive in one fsynced transaction.
// Writing the same items again writes the same bytes.
func (db *DB) writeArchive(year int, items []archived) error {
	db.arch.mu.Lock()
	defer db.arch.mu.Unlock()
	if r := db.arch.open[year]; r != nil { // opened for reading: reopen for writing
		delete(db.arch.open, year)
		if err := r.Close(); err != nil {
			return err
		}
	}
	path := db.ArchivePath(year)
	if _, err := os.Stat(path); err == nil {
		if err := checkFileSize(path); err != nil {
			return err
		}
		if err := checkTree(path); err != nil {
			return err
		}
	}
	var adb *bolt.DB
	err := guard(func() error {
		var err error
		adb, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: db.opts.LockTimeout})
		if err != nil {
			return err
		}
		return adb.Update(func(tx *bolt.Tx) error {
			for _, name := range archiveBuckets {
				if _, err := tx.CreateBucketIfNotExists(name); err != nil {
					return err
				}
			}
			meta := tx.Bucket(bucketMeta)
			if err := meta.Put(keySchema, []byte(strconv.Itoa(schemaVersion))); err != nil {
				return err
			}
			if err := meta.Put([]byte("archive_year"), []byte(strconv.Itoa(year))); err != nil {
				return err
			}
			for _, a := range items {
				if a.dict != nil && meta.Get(a.dictKey) == nil {
					if err := meta.Put(a.dictKey, a.dict); err != nil {
						return err
					}
				}
				for _, kv := range [][3][]byte{{bucketCFEs, a.uuid, a.record}, {bucketXML, a.seq, a.xml},
					{bucketByNumber, a.numberKey, a.uuid}, {bucketByTime, a.timeKey, a.uuid}} {
					if err := tx.Bucket(kv[0]).Put(kv[1], kv[2]); err != nil {
						return err
					}
				}
			}
			return nil
		})
	})
	if adb != nil {
		err = errors.Join(err, adb.Close())
	}
	return err
}

// dropArchived deletes from the live file the items now in their archives,
// each only when its record is still the one copied, counts them per range
// and records an audit event per year.
func (db *DB) dropArchived(tx *bolt.Tx, byYear map[int][]archived) (int, error) {
	cfes, meta := tx.Bucket(bucketCFEs), tx.Bucket(bucketMeta)
	perRange := map[string]int64{}
	moved := 0
	years := slices.Sorted(func(yield func(int) bool) {
		for y := range byYear {
			if !yield(y) {
				return
			}
		}
	})
	now := db.opts.Now()
	for _, year := range years {
		n := 0
		for _, a := range byYear[year] {
			if !bytes.Equal(cfes.Get(a.uuid), a.record) {
				continue // changed (or gone) since it was copied; the archive's copy is overwritten next time
			}
			for _, kv := range [][2][]byte{{bucketCFEs, a.uuid}, {bucketXML, a.seq}, {bucketByNumber, a.numberKey}, {bucketByTime, a.timeKey}} {
				if err := tx.Bucket(kv[0]).Delete(kv[1]); err != nil {
					return 0, err
				}
			}
			perRange[a.rangeID]++
			n++
		}
		if n > 0 {
			if err := appendAudit(tx, AuditEvent{At: now, Kind: AuditArchived,
				Detail: fmt.Sprintf("%d comprobantes a %s", n, filepath.Base(db.ArchivePath(year)))}); err != nil {
				return 0, err
			}
		}
		moved += n
	}
	for id, n := range perRange {
		key := append(bytes.Clone(keyArchivedPrefix), id...)
		if err := meta.Put(key, strconv.AppendInt(nil, archivedIn(tx, id)+n, 10)); err != nil {
			return 0, err
		}
	}
	return moved, nil
}

// archivedIn returns how many CFEs of range id were moved to archives.
func archivedIn(tx *bolt.Tx, id string) int64 {
	v := tx.Bucket(bucketMeta).Get(append(bytes.Clone(keyArchivedPrefix), id...))
	n, _ := strconv.ParseInt(string(v), 10, 64)
	return n
}

// archiveYears returns the years that have an archive file, newest first.
//
// Every sale's uuid is looked up in the archives, so the folder is listed
// again only when its modification time changed (a file made, renamed or
// removed in it): one stat instead of a listing per sale. A listing made
// less than two seconds after that time is not trusted (a file system's
// times are coarse: a file made in the same tick leaves it unchanged).
func (db *DB) archiveYears() []int {
	dir := filepath.Dir(db.path)
	a := &db.arch
	a.yearsMu.Lock()
	defer a.yearsMu.Unlock()
	fi, err := os.Stat(dir)
	if err == nil && !a.listedAt.IsZero() && fi.ModTime().Equal(a.listedAt) && a.listedOn.Sub(a.listedAt) > 2*time.Second {
		return slices.Clone(a.years)
	}
	now := time.Now()
	a.years, a.listedAt = db.listArchiveYears(), time.Time{}
	if err == nil {
		a.listedAt, a.listedOn = fi.ModTime(), now
	}
	return slices.Clone(a.years)
}

// listArchiveYears lists the folder for the yearly archives of the store.
func (db *DB) listArchiveYears() []int {
	base := strings.TrimSuffix(filepath.Base(db.path), filepath.Ext(db.path))
	files, _ := filepath.Glob(filepath.Join(filepath.Dir(db.path), base+"-archive-*.db"))
	var years []int
	for _, f := range files {
		y := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), base+"-archive-"), ".db")
		if n, err := strconv.Atoi(y); err == nil && len(y) == 4 {
			years = append(years, n)
		}
	}
	slices.SortFunc(years, func(a, b int) int { return cmp.Compare(b, a) })
	return years
}

// viewArchive runs fn in a read transaction of year's archive, opened
// read-only (and checked page by page) the first time.
func (db *DB) viewArchive(op string, year int, fn func(*bolt.Tx) error) error {
	db.arch.mu.Lock()
	defer db.arch.mu.Unlock()
	adb := db.arch.open[year]
	path := db.ArchivePath(year)
	if err := db.arch.failed[year]; err != nil {
		return err
	}
	if adb == nil {
		err := checkFileSize(path)
		if err == nil {
			if err = checkTree(path); err != nil {
				err = damaged(op, path, err)
			}
		}
		if err == nil {
			err = guard(func() error {
				var err error
				adb, err = bolt.Open(path, 0o400, &bolt.Options{ReadOnly: true, Timeout: db.opts.LockTimeout})
				return err
			})
			if err != nil && !errors.Is(err, berrors.ErrTimeout) {
				err = damaged(op, path, err)
			}
		}
		if err != nil {
			if !errors.Is(err, berrors.ErrTimeout) {
				if db.arch.failed == nil {
					db.arch.failed = map[int]error{}
				}
				db.arch.failed[year] = err
			}
			return err
		}
		if db.arch.open == nil {
			db.arch.open = map[int]*bolt.DB{}
		}
		db.arch.open[year] = adb
	}
	err := guard(func() error { return adb.View(fn) })
	if isDamage(err) {
		err = damaged(op, path, err)
		db.arch.failed[year] = err
		delete(db.arch.open, year)
		closeBolt(adb, nil)
	}
	return err
}

// closeArchives closes the archives opened for reading.
func (db *DB) closeArchives() error {
	db.arch.mu.Lock()
	defer db.arch.mu.Unlock()
	var errs []error
	for y, a := range db.arch.open {
		errs = append(errs, a.Close())
		delete(db.arch.open, y)
	}
	return errors.Join(errs...)
}

// findArchived looks uuid up in the archives (when byNumber is nil), or the
// number key byNumber, newest archive first; nil when none holds it. An
// archive that cannot be read is skipped: the issuer looks every new sale's
// uuid up here, and a damaged archive of a past year must not stop the shop
// from signing. Its error is returned, as the reason, only when no other
// file holds the CFE.
func (db *DB) findArchived(op string, uuid string, byNumber []byte) (*cfe.Issued, error) {
	var unreadable error
	for _, year := range db.archiveYears() {
		var out *cfe.Issued
		err := db.viewArchive(op, year, func(tx *bolt.Tx) error {
			id := uuid
			if byNumber != nil {
				v := tx.Bucket(bucketByNumber).Get(byNumber)
				if v == nil {
					return nil
				}
				id = string(v)
			}
			if tx.Bucket(bucketCFEs).Get([]byte(id)) == nil {
				return nil
			}
			rec, err := getIssued(tx, op, id)
			if err == nil {
				out = rec.domain()
			}
			return err
		})
		if errors.Is(err, ErrRecordDamaged) {
			// The archive holds the CFE but it cannot be read back: that
			// is the answer, never "not found" (the issuer would sign the
			// uuid again).
			return nil, err
		}
		if err != nil && cfe.ErrorCode(err) != cfe.ENOTFOUND {
			unreadable = err
			continue
		}
		if err != nil || out != nil {
			return out, asError(op, err)
		}
	}
	if unreadable != nil {
		return nil, &cfe.Error{Code: cfe.ENOTFOUND, Op: op, Err: unreadable,
			Message: "no se encontró el comprobante; " + cfe.ErrorMessage(unreadable)}
	}
	return nil, nil
}

// listArchived returns the archived CFEs signed from day from to day to, up
// to limit from each archive, with their by_time keys; with count, only how
// many there are.
func (db *DB) listArchived(op string, from, to cfe.Date, limit int, count bool) ([]keyed, int, error) {
	var out []keyed
	n := 0
	start, end := []byte(from.String()), []byte(to.AddDays(1).String())
	for _, year := range db.archiveYears() {
		if year < from.Year || year > to.Year {
			continue
		}
		err := db.viewArchive(op, year, func(tx *bolt.Tx) error {
			c := tx.Bucket(bucketByTime).Cursor()
			got := 0
			for k, uuid := c.Seek(start); k != nil && bytes.Compare(k, end) < 0; k, uuid = c.Next() {
				if count {
					n++
					continue
				}
				if got == limit {
					break
				}
				rec, err := getIssued(tx, op, string(uuid))
				if err != nil {
					return err
				}
				out = append(out, keyed{bytes.Clone(k), rec.domain()})
				got++
			}
			return nil
		})
		if err != nil {
			return nil, 0, asError(op, err)
		}
	}
	return out, n, nil
}

// keyed is a CFE with its by_time key, to merge lists of several files.
type keyed struct {
	key []byte
	cfe *cfe.Issued
}
