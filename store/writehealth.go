package store

import (
	"errors"
	"path/filepath"
	"sync"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// The store remembers whether it could last write, so that /health can say
// that signing fails for lack of disk before a cashier finds out: the error
// of the last commit transaction that failed (the numbering journal's write
// included), cleared by the next one that succeeds.

// WriteHealth is what the store knows of its ability to write.
type WriteHealth struct {
	// Dir is the directory of the store file, whose filesystem FreeSpace
	// measures.
	Dir string
	// LastError is why the last commit failed, in Spanish; "" when the last
	// commit succeeded or none was attempted since Open.
	LastError string
	// LastErrorAt is when that commit failed; zero with no LastError.
	LastErrorAt time.Time
	// Cause is the underlying error of LastError, for logs.
	Cause error
}

// writeState is the last commit's outcome; its own lock, so that /health
// never waits for the committer.
type writeState struct {
	mu  sync.Mutex
	err error // the last commit's error; nil after a success
	msg string
	at  time.Time
}

func (w *writeState) record(err error, at time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.err, w.at, w.msg = err, at, ""
	if err != nil {
		w.msg = writeFailure(err)
	}
}

// WriteHealth reports the outcome of the last commit or, when it
// succeeded, of the last checkpoint of the commit log (checkpoint.go): a
// sale acknowledged through the log is safe, but a store whose checkpoints
// fail cannot write bbolt.
func (db *DB) WriteHealth() WriteHealth {
	h := WriteHealth{Dir: filepath.Dir(db.path)}
	for _, w := range []*writeState{&db.writes, &db.ckWrites} {
		w.mu.Lock()
		err, msg, at := w.err, w.msg, w.at
		w.mu.Unlock()
		if err != nil {
			h.LastError, h.LastErrorAt, h.Cause = msg, at, err
			break
		}
	}
	return h
}

// Storage reports the disk of the store for /state and /health: the last
// commit's failure (WriteHealth, without its cause) and the free space of
// the store's filesystem (one statfs: FreeSpace).
func (db *DB) Storage() cfe.Storage {
	w := db.WriteHealth()
	st := cfe.Storage{Dir: w.Dir, LastWriteError: w.LastError, LastWriteErrorAt: inMontevideo(w.LastErrorAt)}
	free, total, err := FreeSpace(w.Dir)
	if err != nil {
		st.SpaceError = "no se pudo leer el espacio libre del disco de los datos"
	} else {
		st.FreeBytes, st.TotalBytes = free, total
	}
	return st
}

// writeFailure says in Spanish why a write failed, from the system's error
// (writeCause, one per system).
func writeFailure(err error) string {
	if msg := writeCause(err); msg != "" {
		return msg
	}
	return "error al escribir en el disco"
}

// commitFailed is the error every CFE of a failed commit transaction gets:
// retryable, nothing signed is kept and its number was given back. It
// carries RespErrorInterno explicitly, which tells the local module that
// Message is meant for the cashier (see localapi's rejection). A transaction
// that met a damaged file gets the damaged error instead.
func (db *DB) commitFailed(err error) *cfe.Error {
	if errors.Is(err, ErrDamaged) {
		return asDamaged("store.Commit", db.path, err)
	}
	dir := filepath.Dir(db.path)
	return &cfe.Error{Code: cfe.EUNAVAILABLE, Op: "store.Commit", Err: err, Respuesta: cfe.RespErrorInterno,
		Message: "no se pudo guardar el comprobante: " + writeFailure(err) + " (" + dir + "). " +
			"No se firmó ni se consumió ningún número; libere espacio o revise el disco y reintente con el mismo uuid"}
}
