package store

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/durable"
)

// Options configure a DB. The zero value gives the documented defaults.
type Options struct {
	// LockTimeout bounds the wait for the file lock when another process holds
	// the file (default 1 s). Open then fails with EUNAVAILABLE.
	LockTimeout time.Duration
	// ReclaimTimeout is how long a released number may stay unclaimed while
	// higher numbers of its serie wait to be committed (default 2 s). After it,
	// those commits fail with a retryable EUNAVAILABLE and give their numbers
	// back.
	ReclaimTimeout time.Duration
	// ReservationTimeout is how long a reservation may stay neither committed
	// nor released before a waiting higher commit takes it back (default 30 s).
	ReservationTimeout time.Duration
	// MaxBatchDelay bounds how long the committer may hold a ready CFE back
	// to write it with others when more CFEs are in progress than processors
	// (default 3 ms; see collect). A lone caller is never held back.
	MaxBatchDelay time.Duration
	// NearlyUsedUpPercent is the share of a range, in percent, from which
	// RangeStatus flags it as nearly used up (default 90).
	NearlyUsedUpPercent int
	// NearExpiryDays is how many days before its expiry RangeStatus flags a
	// range as near expiry (default 30).
	NearExpiryDays int
	// Now is the clock for recorded times (audit events, commit times, outbox
	// age); default time.Now. Waiting uses the real clock.
	Now func() time.Time
	// Journal is the path of the numbering journal, a small file that must
	// live outside the store file (and preferably outside its directory):
	// with it, a store file found behind the journal (deleted, truncated,
	// replaced by an older copy) resumes numbering above the journal's mark
	// instead of issuing numbers again (hold.go, docs/numbering.md). Empty:
	// no journal.
	Journal string
	// JournalBlock is how many numbers the journal reserves ahead of a
	// committed number (default DefaultJournalBlock): the journal is written
	// once per block, and at most a block is skipped after a crash followed
	// by the loss of the store file.
	JournalBlock int
	// HoldWithoutJournal makes Open hold numbering when the journal does not
	// exist (a new data directory, or one that lost both files): Reserve then
	// refuses until ResumeNumbering or MarkUsedElsewhere. Set it when a source
	// that can say where numbering stands (the hosted service) is configured.
	HoldWithoutJournal bool
	// Witness is the path of the numbering witness, a copy of the journal's
	// marks kept outside the data directory, one per machine and WitnessKey
	// (witness.go, WitnessFile, docs/numbering.md "The witness"). With it,
	// Open finds a data directory put back from an older copy (store and
	// journal together) and holds numbering for the series it is behind on
	// until ResumeNumbering or MarkUsedElsewhere settles them; a data
	// directory with neither journal nor numbers resumes above the witness.
	// It needs Journal. Empty: no witness.
	Witness string
	// WitnessKey is whose numbering the witness records; it is written in
	// the file and a witness of another key is not used.
	WitnessKey WitnessKey
	// DisableHoldBack turns off the committer's hold-back: a ready CFE is
	// written at once even when more CFEs are in progress than processors
	// (see collect). The zero value keeps it on.
	DisableHoldBack bool
	// DisableHeadroom turns off the written zeros the committer keeps past
	// the data on ext4 and XFS (headroom.go): bbolt grows the file as usual.
	// The zero value keeps it on where it helps.
	DisableHeadroom bool

	// What only this package's tests set (export_test.go,
	// mapping_export_test.go): per DB, so that the tests that set them run
	// side by side. The zero values are the program's.
	archiveBatch  int  // CFEs Archive moves per pair of transactions (default defaultArchiveBatch)
	migrateBatch  int  // records a schema migration rewrites per transaction (default defaultMigrateBatch)
	mapGrowsFile  bool // follow the Windows rules of mapping.go on any system (always on Windows)
	afterBoltOpen func(f *os.File, initialMmapSize int) error
	// afterArchiveWrite runs between writing a batch to its archives and
	// deleting it from the live file; an error stops Archive there, as a
	// crash would.
	afterArchiveWrite func() error
	// checkSnapshot runs in the background check's read transaction once
	// its meta page is read, before the walk.
	checkSnapshot func()

	// noCheckpoints stops the checkpointer's own checkpoints (wal.go): only
	// reads, writes and Close checkpoint, so a test can leave CFEs in the
	// commit log alone.
	noCheckpoints bool
	// checkpointHook runs in every checkpoint's transaction before it
	// writes; an error fails the checkpoint, as a full disk would.
	checkpointHook func() error

	// restoring is set by Restore when it opens the restored copy: the
	// numbers the journal makes Open skip are annulled by the restore
	// itself, which also knows the confirmed numbers (restoreSkipped).
	restoring bool
}

func (o Options) withDefaults() Options {
	if o.LockTimeout <= 0 {
		o.LockTimeout = time.Second
	}
	if o.ReclaimTimeout <= 0 {
		o.ReclaimTimeout = 2 * time.Second
	}
	if o.ReservationTimeout <= 0 {
		o.ReservationTimeout = 30 * time.Second
	}
	if o.MaxBatchDelay <= 0 {
		o.MaxBatchDelay = 3 * time.Millisecond
	}
	if o.NearlyUsedUpPercent <= 0 || o.NearlyUsedUpPercent > 100 {
		o.NearlyUsedUpPercent = 90
	}
	if o.NearExpiryDays <= 0 {
		o.NearExpiryDays = 30
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.JournalBlock <= 0 {
		o.JournalBlock = DefaultJournalBlock
	}
	if o.archiveBatch <= 0 {
		o.archiveBatch = defaultArchiveBatch
	}
	if o.migrateBatch <= 0 {
		o.migrateBatch = defaultMigrateBatch
	}
	o.mapGrowsFile = o.mapGrowsFile || bboltMapGrowsFile
	return o
}

// DB is the agent's store over one bbolt file. It is safe for concurrent use.
type DB struct {
	bolt *boltDB // bbolt's DB, every transaction under guard (damage.go)
	path string
	opts Options

	mu     sync.Mutex
	closed bool
	ranges map[cfe.Type][]cfe.CAERange // by preference: see byPreference
	seqs   map[seqKey]*sequence
	busy   float64 // recent peak of CFEs in progress at once: see noteBusyLocked and collect

	transactions atomic.Uint64 // commit transactions written since Open
	writes       writeState    // the last commit's outcome, for WriteHealth
	ckWrites     writeState    // the last checkpoint's outcome, for WriteHealth
	watch        commitWatch   // who is told of commits (notify.go)

	room *headroom // written space past the data; used by the committer only

	codec xmlCodec // the current dictionary of the signed XML (xmlcodec.go)
	arch  archives // yearly archives opened for reading (archive.go)

	files  []*os.File                // bbolt's open files (damage.go)
	broken atomic.Pointer[cfe.Error] // set by the first panic recovered from bbolt (damage.go)

	// The whole-file check (verified.go): known is the record a verified
	// clean Close left, when Open found the file unchanged since (nil:
	// Open checked the whole file at start); checked is closed when the
	// background check has ended (at once when there is none); verified is
	// set once a full check found the file whole, and lets Close record it.
	known    *verifiedRecord
	checked  chan struct{}
	verified atomic.Bool

	journal   *journal       // nil without Options.Journal
	witnessSt *WitnessStatus // what Open found in the witness; nil without Options.Witness
	resumed   []string       // what Open raised above the journal, for ResumedAtOpen
	hold      *holdRecord    // why Reserve refuses: numbering is not known yet (hold.go); nil when it is

	// The sizes of the outbox, the rejected list and the quarantine, counted
	// once by Open and then kept by the transactions that change them (on
	// commit), so that Stats, which /health calls, does not walk the lists.
	pending, rejected, quarantined atomic.Int64

	kick          chan struct{} // wakes the committer; buffered 1
	quit          chan struct{} // closed by Close
	committerDone chan struct{} // closed when the committer has stopped

	log    *commitLog    // the commit log (wal.go); nil only while Open has not opened it
	ckKick chan struct{} // wakes the checkpointer; buffered 1
	ckDone chan struct{} // closed when the checkpointer has stopped
}

var _ cfe.IssueStore = (*DB)(nil)

// Open opens (creating it if needed) the store file at path. When another
// process holds the file, it fails after opts.LockTimeout with EUNAVAILABLE
// ("ya hay un agente ejecutándose con estos datos"); a file written by a newer
// schema, or one that is not a store, fails with EINTERNAL. Once Open
// returns, the file's name is durable as well as its content: Open syncs the
// folders that hold it.
func Open(path string, opts Options) (*DB, error) {
	const op = "store.Open"
	opts = opts.withDefaults()
	if err := resetUnfinished(path); err != nil {
		return nil, &cfe.Error{Code: cfe.EUNAVAILABLE, Op: op, Err: err,
			Message: "no se pudo rehacer el archivo de datos " + path + ", cuya creación quedó sin terminar"}
	}
	if err := checkFileSize(path); err != nil {
		return nil, err
	}
	// A file a verified clean Close left, unchanged since, gets only the
	// checks of what opening it reads at start; the whole-file check runs
	// in the background (verified.go). Any other gets it now.
	known, fast := readVerified(path)
	check := func() error { return checkLocked(path, opts.LockTimeout) }
	if fast {
		check = func() error { return checkTop(path) }
	}
	if err := check(); err != nil {
		var ce *cfe.Error
		if errors.As(err, &ce) {
			return nil, err
		}
		return nil, damaged(op, path, err)
	}
	var file *os.File    // bbolt's own, for the headroom
	var files []*os.File // every file bbolt opened, to close after a panic
	var bdb *bolt.DB
	// The background check holds one read transaction while it walks the
	// file, and bbolt cannot grow its mapping while a read transaction is
	// open: a commit that needed it would wait for the check. A fast start
	// maps room past the data from the start (mapping.go: on Windows the
	// mapping is disk, and the room is sized from the data, not the file).
	mmapSize := initialMmapSize(path, known, fast, opts.mapGrowsFile)
	err := guard(func() error {
		var err error
		bdb, err = bolt.Open(path, 0o600, &bolt.Options{Timeout: opts.LockTimeout, InitialMmapSize: mmapSize,
			OpenFile: func(name string, flag int, perm os.FileMode) (*os.File, error) {
				f, err := os.OpenFile(name, flag, perm)
				if err == nil {
					files = append(files, f)
				}
				if file == nil && flag&(os.O_WRONLY|os.O_RDWR) != 0 {
					file = f
				}
				return f, err
			}})
		return err
	})
	if isDamage(err) {
		closeFiles(files)
		return nil, damaged(op, path, err)
	}
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, errRunning(path, err)
	}
	if errors.Is(err, berrors.ErrInvalid) || errors.Is(err, berrors.ErrChecksum) || errors.Is(err, berrors.ErrVersionMismatch) {
		return nil, damaged(op, path, err) // neither meta page is valid: not a store, or both overwritten
	}
	if err != nil {
		return nil, &cfe.Error{Code: cfe.EINTERNAL, Op: op, Err: err,
			Message: "no se pudo abrir el archivo de datos " + path}
	}
	if opts.afterBoltOpen != nil {
		if err := opts.afterBoltOpen(file, mmapSize); err != nil {
			_ = bdb.Close()
			return nil, &cfe.Error{Code: cfe.EINTERNAL, Op: op, Err: err,
				Message: "no se pudo abrir el archivo de datos " + path}
		}
	}
	if fast && !known.matchesOpened(path, opts.mapGrowsFile) {
		// Written between the first look and the lock: check it all now,
		// under the lock (bbolt's open wrote nothing to an existing file
		// but, on Windows, its end: see matchesOpened).
		fast = false
		if err := checkTree(path); err != nil {
			_ = bdb.Close()
			return nil, damaged(op, path, err)
		}
	}
	// The record of the last verified Close goes before anything can write
	// the file; SyncParents below makes its removal durable.
	if err := removeVerified(path); err != nil {
		_ = bdb.Close()
		return nil, &cfe.Error{Code: cfe.EUNAVAILABLE, Op: op, Err: err,
			Message: "no se pudo quitar el registro de verificación " + VerifiedPath(path) + " del archivo de datos"}
	}
	// bbolt syncs the pages of a new file, never its name: until the
	// folder holding it is synced (and the folders above, which the agent
	// may have just created), a power cut may lose the whole file with the
	// CFEs it acknowledged. Once at every Open, so that a file created by a
	// run that stopped before this point is covered too: a few folder
	// fsyncs per start (durable.SyncParents).
	if err := durable.SyncParents(path); err != nil {
		_ = bdb.Close()
		return nil, &cfe.Error{Code: cfe.EUNAVAILABLE, Op: op, Err: err,
			Message: "no se pudo asegurar en el disco la carpeta del archivo de datos " + path}
	}
	db := &DB{path: path, opts: opts, files: files,
		ranges: map[cfe.Type][]cfe.CAERange{}, seqs: map[seqKey]*sequence{},
		kick: make(chan struct{}, 1), quit: make(chan struct{}), committerDone: make(chan struct{}),
		ckKick: make(chan struct{}, 1), ckDone: make(chan struct{}), checked: make(chan struct{})}
	if fast {
		db.known = &known
	}
	db.bolt = &boltDB{raw: bdb, owner: db}
	var used int64
	// Everything Open reads runs under guard: a damaged page found here
	// ends Open with a clear error, and bbolt is not used again.
	err = guard(func() error {
		err := db.init()
		if err == nil {
			err = db.openLog()
		}
		if err == nil {
			err = db.openNumbering()
		}
		if err == nil {
			err = db.bolt.View(func(tx *bolt.Tx) error {
				used = tx.Size()
				if fast {
					return nil // checkInBackground
				}
				return checkPages(tx)
			})
		}
		return err
	})
	if err != nil {
		if db.log != nil {
			_ = db.log.close(false)
		}
		if isDamage(err) || errors.Is(err, ErrDamaged) || errors.Is(err, berrors.ErrIncompatibleValue) {
			closeBolt(bdb, files)
			return nil, asDamaged(op, path, err)
		}
		_ = bdb.Close()
		var ce *cfe.Error
		if errors.As(err, &ce) {
			return nil, err
		}
		return nil, &cfe.Error{Code: cfe.EINTERNAL, Op: op, Err: err,
			Message: "no se pudo abrir el archivo de datos " + path}
	}
	if opts.DisableHeadroom {
		file = nil // newHeadroom turns the headroom off without a file
	}
	db.room = newHeadroom(file, used)
	if fast {
		go db.checkInBackground()
	} else {
		db.verified.Store(true)
		close(db.checked)
	}
	go db.runCommitter()
	go db.runCheckpointer()
	db.arch.warmed = make(chan struct{})
	go db.warmArchives()
	return db, nil
}

// init creates the buckets of a new file, checks the schema of an existing one
// and loads the ranges and counters into memory. An existing file in the
// current schema is only read: opening it costs no write and no fsync.
func (db *DB) init() error {
	var current bool
	err := db.bolt.View(func(tx *bolt.Tx) error {
		var err error
		current, err = db.checkSchema(tx)
		return err
	})
	if err == nil && !current {
		err = db.upgrade()
	}
	if err != nil {
		return err
	}
	return db.bolt.View(func(tx *bolt.Tx) error {
		err := tx.Bucket(bucketRanges).ForEach(func(_, v []byte) error {
			var r rangeRecord
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("%w: range record: %w", ErrDamaged, err)
			}
			db.addRangeLocked(r.domain())
			return nil
		})
		if err != nil {
			return err
		}
		if err := db.codec.load(tx); err != nil {
			return err
		}
		if k := db.known; k != nil && current {
			// The file is the one a verified Close counted (verified.go).
			db.pending.Store(k.Pending)
			db.rejected.Store(k.Rejected)
		} else {
			db.pending.Store(int64(tx.Bucket(bucketOutbox).Stats().KeyN))
			db.rejected.Store(int64(tx.Bucket(bucketRejected).Stats().KeyN))
		}
		db.quarantined.Store(int64(tx.Bucket(bucketQuarantine).Stats().KeyN)) // a few entries at most: counted at every Open
		if err := db.loadAnnulled(tx); err != nil {
			return err
		}
		return tx.Bucket(bucketCounters).ForEach(func(_, v []byte) error {
			var c counterRecord
			if err := json.Unmarshal(v, &c); err != nil {
				return fmt.Errorf("%w: counter record: %w", ErrDamaged, err)
			}
			db.seq(seqKey{c.Type, c.Serie}).last = c.Last
			return nil
		})
	})
}

// checkSchema reports whether tx holds every bucket and the current schema
// version. A newer schema is an error; a missing or older one (a new file, or
// one written before a bucket was added) needs an upgrade.
func (db *DB) checkSchema(tx *bolt.Tx) (bool, error) {
	n, err := db.storedSchema(tx)
	if err != nil || n != schemaVersion {
		return false, err
	}
	for _, name := range allBuckets {
		if tx.Bucket(name) == nil {
			return false, nil
		}
	}
	return true, nil
}

// storedSchema returns the schema version the file in tx was written with; 0
// for a new file. A version newer than this package's is an error.
func (db *DB) storedSchema(tx *bolt.Tx) (int, error) {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		return 0, nil
	}
	v := meta.Get(keySchema)
	if v == nil {
		return 0, nil
	}
	n, err := strconv.Atoi(string(v))
	if err != nil {
		return 0, fmt.Errorf("schema version %q: %w", v, err)
	}
	if n > schemaVersion {
		return 0, &cfe.Error{Code: cfe.EINTERNAL, Op: "store.Open",
			Message: fmt.Sprintf("el archivo de datos %s es de una versión más nueva del agente (esquema %d); actualice el agente", db.path, n)}
	}
	return n, nil
}

// upgrade brings a new file or one of an older schema to the current one: it
// creates the missing buckets, migrates the records, and only then records
// the new version, so an interrupted upgrade is simply run again.
func (db *DB) upgrade() error {
	var from int
	err := db.bolt.Update(func(tx *bolt.Tx) error {
		for _, name := range allBuckets {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		var err error
		from, err = db.storedSchema(tx)
		return err
	})
	if err != nil {
		return err
	}
	if from == 1 {
		if err := db.migrateV1(); err != nil {
			return fmt.Errorf("migrate schema 1: %w", err)
		}
	}
	if from == 1 || from == 2 {
		if err := db.migrateV2(); err != nil {
			return fmt.Errorf("migrate schema 2: %w", err)
		}
	}
	if from >= 1 && from <= 3 {
		if err := db.migrateV3(); err != nil {
			return fmt.Errorf("migrate schema 3: %w", err)
		}
	}
	return db.bolt.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(keySchema, []byte(strconv.Itoa(schemaVersion)))
	})
}

// Close stops the committer (commits still waiting for their turn fail with
// EUNAVAILABLE; a transaction being written completes) and closes the file.
// Close is idempotent.
func (db *DB) Close() error {
	db.mu.Lock()
	if db.closed {
		db.mu.Unlock()
		return nil
	}
	db.closed = true
	for _, seq := range db.seqs {
		for _, s := range seq.slots {
			if s.state == slotQueued {
				seq.remove(s.res.Nro, time.Now())
				s.finish(errClosed("store.Commit"))
			}
		}
	}
	db.mu.Unlock()
	close(db.quit)
	<-db.committerDone
	<-db.ckDone
	<-db.arch.warmed
	<-db.checked
	var ckErr error
	if db.broken.Load() == nil {
		ckErr = db.checkpoint() // on failure the log keeps them for the next Open
	}
	logErr := db.log.close(ckErr == nil && db.broken.Load() == nil)
	if db.broken.Load() != nil {
		// A damaged file: bbolt is not called again, and the journal is
		// left as the last commit wrote it (not clean), so a new file
		// resumes above its reserved marks.
		closeBolt(db.bolt.raw, db.files)
		return nil
	}
	db.closeJournal()
	err := errors.Join(db.closeArchives(), db.bolt.Close(), logErr)
	if err == nil && ckErr == nil && db.verified.Load() && db.broken.Load() == nil {
		// A failure here costs only the next Open's fast start.
		_ = writeVerified(db.path, db.pending.Load(), db.rejected.Load())
	}
	return err
}

// view runs fn in a read transaction, mapping failures to *cfe.Error.
func (db *DB) view(ctx context.Context, op string, fn func(*bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return ctxError(op, err)
	}
	return asError(op, db.boltView(op, fn))
}

// viewNow is view without checkpointing the logged CFEs first (boltViewNow):
// for readers that look in them themselves.
func (db *DB) viewNow(ctx context.Context, op string, fn func(*bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return ctxError(op, err)
	}
	return asError(op, db.boltViewNow(op, fn))
}

// update runs fn in a write transaction, mapping failures to *cfe.Error.
func (db *DB) update(ctx context.Context, op string, fn func(*bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return ctxError(op, err)
	}
	return asError(op, db.boltUpdate(op, fn))
}

// getJSON decodes the value at key into v, reporting whether it exists.
func getJSON(b *bolt.Bucket, key []byte, v any) (bool, error) {
	data := b.Get(key)
	if data == nil {
		return false, nil
	}
	if err := json.Unmarshal(data, v); err != nil {
		return true, fmt.Errorf("decode %q: %w", key, err)
	}
	return true, nil
}

func putJSON(b *bolt.Bucket, key []byte, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return b.Put(key, data)
}

// byPreference orders ranges as Reserve prefers them across series: the one
// that expires first, then the lowest serie, then the lowest DNro.
func byPreference(a, b cfe.CAERange) int {
	return cmp.Or(a.Vencimiento.Time(time.UTC).Compare(b.Vencimiento.Time(time.UTC)),
		cmp.Compare(a.Serie, b.Serie), cmp.Compare(a.DNro, b.DNro))
}

// addRangeLocked adds r to the in-memory ranges. The caller holds db.mu, or
// owns db exclusively (Open).
func (db *DB) addRangeLocked(r cfe.CAERange) {
	r.SignedXML = nil // reservations carry the range; the DGI file stays on disk
	rs := append(db.ranges[r.Type], r)
	slices.SortFunc(rs, byPreference)
	db.ranges[r.Type] = rs
}

// Errors.

// errRunning is Open's error when another process holds the file.
func errRunning(path string, err error) *cfe.Error {
	return &cfe.Error{Code: cfe.EUNAVAILABLE, Op: "store.Open", Err: err,
		Message: "ya hay un agente ejecutándose con estos datos (" + path + ")"}
}

func errClosed(op string) *cfe.Error {
	return &cfe.Error{Code: cfe.EUNAVAILABLE, Op: op, Message: "el almacenamiento está cerrado"}
}

func ctxError(op string, err error) *cfe.Error {
	return &cfe.Error{Code: cfe.EUNAVAILABLE, Op: op, Message: "la operación fue cancelada", Err: err}
}

func notFound(op, format string, args ...any) *cfe.Error {
	return &cfe.Error{Code: cfe.ENOTFOUND, Op: op, Message: fmt.Sprintf(format, args...)}
}

// invalid reports input that breaks a rule of the store. Unlike cfe.Invalid it
// carries no Respuesta: it is not a DGI rule that a signing request broke.
func invalid(op string, fields ...cfe.FieldError) *cfe.Error {
	msg := "datos inválidos"
	if len(fields) == 1 {
		msg = fields[0].Campo + ": " + fields[0].Mensaje
	}
	return &cfe.Error{Code: cfe.EINVALID, Op: op, Message: msg, Fields: fields}
}

func field(campo, format string, args ...any) cfe.FieldError {
	return cfe.FieldError{Campo: campo, Mensaje: fmt.Sprintf(format, args...)}
}

// asError returns err unchanged when it is a *cfe.Error (set inside a
// transaction) and wraps anything else as an internal storage error.
func asError(op string, err error) error {
	var ce *cfe.Error
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ce):
		return err
	case errors.Is(err, berrors.ErrDatabaseNotOpen):
		return errClosed(op)
	}
	return &cfe.Error{Code: cfe.EINTERNAL, Op: op, Message: "error al acceder al archivo de datos", Err: err}
}

// IsRunning reports whether err is Open's refusal because another process
// (a running agent) holds the store file.
func IsRunning(err error) bool { return errors.Is(err, berrors.ErrTimeout) }
