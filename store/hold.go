package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// Knowing where numbering stands (docs/numbering.md).
//
// With Options.Journal set, Open compares the store file with the numbering
// journal kept beside it (journal.go). A store found behind the journal (a
// new file after the old one was deleted or truncated, or an older copy put
// back) has its counters raised to the journal's mark, so it never hands out
// a number the lost file may have issued. A store with no journal to compare
// with is held when Options.HoldWithoutJournal is set: Reserve refuses every
// type until ResumeNumbering (the hosted service's last numbers) or, serie by
// serie, MarkUsedElsewhere (a technician's word) says where numbering stands.
// The hold is kept in the store file itself, so it survives restarts. A file
// with numbers but no identity was written before journals existed (an
// upgrade): it is trusted, and gets its first journal.

// Audit kinds of the numbering checks.
const (
	AuditNumberingResumed = "numbering_resumed" // a counter was raised to a number known from outside the store
	AuditNumberingHeld    = "numbering_held"    // signing was held until numbering is known
	AuditNumberingKnown   = "numbering_known"   // the hold ended
)

var (
	keyStoreID = []byte("store_id")
	keyHold    = []byte("numbering_hold")
)

// holdRecord is a hold as stored in the meta bucket.
type holdRecord struct {
	Since    time.Time   `json:"since"`
	Reason   string      `json:"reason"`
	Released []holdSerie `json:"released,omitempty"` // series a technician settled with MarkUsedElsewhere
}

// holdSerie is one (type, serie) of a holdRecord.
type holdSerie struct {
	Type  cfe.Type `json:"tipo"`
	Serie string   `json:"serie"`
}

// Hold says why the store refuses to number.
type Hold struct {
	Since time.Time
	// Reason is Spanish, for /health and the tray.
	Reason string
	// Released lists the series already settled (MarkUsedElsewhere); every
	// other serie waits.
	Released []cfe.LastNumber
}

// holdReason is the Spanish reason of a hold created by Open.
const holdReason = "no se sabe por qué número sigue la numeración: el archivo de datos es nuevo o no tiene diario de numeración"

// openNumbering runs at the end of Open: it gives the file an identity,
// compares it with the journal, raises counters that are behind and creates
// or loads the hold.
func (db *DB) openNumbering() error {
	if err := db.loadHold(); err != nil {
		return err
	}
	path := db.opts.Journal
	if path == "" {
		return nil
	}
	const op = "store.Open"
	// The journal's folder is made by the journal's first write, with the
	// journal in it (internal/durable): a folder without its journal means
	// the journal was lost, even after a power cut during the first start.
	jf, err := readJournal(path)
	if err != nil {
		return &cfe.Error{Code: cfe.EINTERNAL, Op: op, Err: err,
			Message: fmt.Sprintf("el diario de numeración %s está dañado; no se puede saber por qué número sigue la numeración", path)}
	}
	hadData := len(db.countersLocked()) > 0
	if err := db.inheritJournal(jf); err != nil { // lineage.go
		return err
	}
	id, legacy, err := db.ensureStoreID()
	if err != nil {
		return err
	}
	legacy = legacy && hadData // a file with numbers, written before journals existed: its first journal
	now := db.opts.Now()
	var raised []cfe.LastNumber
	var details []string
	if jf != nil {
		replaced := jf.StoreID != id
		for _, e := range jf.Sequences {
			k := seqKey{e.Type, e.Serie}
			last := db.seq(k).last
			if floor, behind := jf.floorFor(e, replaced, last); behind {
				raised = append(raised, cfe.LastNumber{Type: e.Type, Serie: e.Serie, Last: floor})
				details = append(details, fmt.Sprintf("the store file (id %s) is behind the numbering journal %s (store %s, clean %v, written %s): counter %d raised to %d; numbers %d-%d were issued by the lost file or never used (unused ones must be reported to DGI as annulled)",
					id, path, jf.StoreID, jf.Clean, jf.WrittenAt.Format(time.RFC3339), last, floor, last+1, floor))
			}
		}
	} else if db.opts.HoldWithoutJournal && db.hold == nil && !legacy {
		if err := db.putHold(holdRecord{Since: now, Reason: holdReason}, AuditEvent{At: now, Kind: AuditNumberingHeld,
			Detail: "no numbering journal at " + path + ": signing held until the hosted service or a technician says where numbering stands"}); err != nil {
			return err
		}
	}
	if len(raised) > 0 {
		err := db.bolt.Update(func(tx *bolt.Tx) error {
			for i, r := range raised {
				if err := putJSON(tx.Bucket(bucketCounters), counterKey(seqKey{r.Type, r.Serie}), counterRecord(r)); err != nil {
					return err
				}
				if err := appendAudit(tx, AuditEvent{At: now, Kind: AuditNumberingResumed, Type: r.Type, Serie: r.Serie, Nro: r.Last, Detail: details[i]}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, r := range raised {
			db.seq(seqKey{r.Type, r.Serie}).last = r.Last
		}
		db.resumed = details
	}
	db.journal = &journal{path: path, block: int64(db.opts.JournalBlock), storeID: id}
	db.journal.mu.Lock()
	defer db.journal.mu.Unlock()
	if err := db.journal.write(db.countersLocked(), false, now); err != nil {
		return &cfe.Error{Code: cfe.EUNAVAILABLE, Op: op, Err: err,
			Message: "no se pudo escribir el diario de numeración " + path}
	}
	return nil
}

// floorFor applies Open's rule to one entry of the journal: a store whose
// counter for e's sequence is last, and which is (replaced) or is not the
// file the journal describes, is behind when it may have lost numbers; it
// must then resume above floor: the exact counter of a clean journal, else
// the reserved mark (every number the lost file may have committed). An
// intact file found at or above the committed mark is trusted. Restore
// applies the same rule to the file a backup replaces.
func (jf *journalFile) floorFor(e journalEntry, replaced bool, last int64) (floor int64, behind bool) {
	floor = e.Reserved
	if jf.Clean {
		floor = e.Committed
	}
	return floor, replaced && floor > last || !replaced && last < e.Committed
}

// ResumedAtOpen describes, one line per serie (English, for the log), the
// counters Open raised because the store file was behind the numbering
// journal (deleted, truncated or an older copy): the numbers in between were
// issued by the lost file or never used. Empty when nothing was raised.
func (db *DB) ResumedAtOpen() []string { return slices.Clone(db.resumed) }

// countersLocked returns the in-memory counters as journal entries whose two
// marks are the counter. The caller holds db.mu or owns db (Open, Close).
func (db *DB) countersLocked() map[seqKey]journalEntry {
	out := map[seqKey]journalEntry{}
	for k, q := range db.seqs {
		if q.last > 0 {
			out[k] = journalEntry{Type: k.Type, Serie: k.Serie, Committed: q.last, Reserved: q.last}
		}
	}
	return out
}

// closeJournal records the exact counters at Close, once the committer has
// stopped, so that the next Open can tell any older copy of the file.
func (db *DB) closeJournal() {
	if db.journal == nil {
		return
	}
	db.mu.Lock()
	entries := db.countersLocked()
	db.mu.Unlock()
	db.journal.mu.Lock()
	defer db.journal.mu.Unlock()
	_ = db.journal.write(entries, true, db.opts.Now()) // on failure the dirty journal stays: safe, only coarser
}

// ensureStoreID returns the file's identity, giving a new or older file one;
// created reports that it had none.
func (db *DB) ensureStoreID() (id string, created bool, err error) {
	_ = db.bolt.View(func(tx *bolt.Tx) error {
		id = string(tx.Bucket(bucketMeta).Get(keyStoreID))
		return nil
	})
	if id != "" {
		return id, false, nil
	}
	id = newStoreID()
	return id, true, db.bolt.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(keyStoreID, []byte(id))
	})
}

// loadHold reads the stored hold, if any.
func (db *DB) loadHold() error {
	return db.bolt.View(func(tx *bolt.Tx) error {
		var h holdRecord
		found, err := getJSON(tx.Bucket(bucketMeta), keyHold, &h)
		if found && err == nil {
			db.hold = &h
		}
		return err
	})
}

// putHold stores h (and ev) and makes it the hold in force. The caller holds
// db.mu or owns db.
func (db *DB) putHold(h holdRecord, ev AuditEvent) error {
	err := db.bolt.Update(func(tx *bolt.Tx) error {
		if err := putJSON(tx.Bucket(bucketMeta), keyHold, h); err != nil {
			return err
		}
		return appendAudit(tx, ev)
	})
	if err == nil {
		db.hold = &h
	}
	return err
}

// holdLocked refuses type t while a hold covers a serie of it that has a
// range usable on today. The caller holds db.mu.
func (db *DB) holdLocked(op string, t cfe.Type, today cfe.Date) error {
	h := db.hold
	if h == nil {
		return nil
	}
	for _, r := range db.ranges[t] {
		if r.Expired(today) || slices.Contains(h.Released, holdSerie{t, r.Serie}) {
			continue
		}
		return &cfe.Error{Code: cfe.EUNAVAILABLE, Op: op, Respuesta: cfe.RespSinRangoCAE,
			Message: fmt.Sprintf("no se puede numerar %s serie %s: %s. Se espera la consulta al servicio o que un técnico ejecute «cfe-agent cae used-elsewhere»", t.Name(), r.Serie, h.Reason)}
	}
	return nil
}

// NumberingHold returns why the store refuses to number, nil when it does
// not.
func (db *DB) NumberingHold() *Hold {
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.hold == nil {
		return nil
	}
	h := &Hold{Since: inMontevideo(db.hold.Since), Reason: db.hold.Reason}
	for _, k := range db.hold.Released {
		h.Released = append(h.Released, cfe.LastNumber{Type: k.Type, Serie: k.Serie, Last: db.seq(seqKey(k)).last})
	}
	return h
}

// ResumeNumbering ends the hold with the last numbers used, as a source
// outside the store knows them (the hosted service): each counter becomes at
// least its Last, so numbering continues above it. lasts must cover every
// (type, serie) the source knows of; series it does not name start where
// the store has them. Without a hold it still raises the counters.
//
// Errors: EINVALID for an unknown type or a negative number; EUNAVAILABLE
// while a CFE is being signed, when ctx is done or the store is closed.
func (db *DB) ResumeNumbering(ctx context.Context, source string, lasts []cfe.LastNumber) error {
	const op = "store.ResumeNumbering"
	for _, l := range lasts {
		if !l.Type.Valid() || l.Last < 0 {
			return invalid(op, field("ultimo", "tipo %d serie %q número %d no es válido", int(l.Type), l.Serie, l.Last))
		}
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	if db.closed {
		return errClosed(op)
	}
	for _, q := range db.seqs {
		if len(q.slots) > 0 {
			return &cfe.Error{Code: cfe.EUNAVAILABLE, Op: op, Message: "hay comprobantes firmándose; reintente"}
		}
	}
	now := db.opts.Now()
	var raised []cfe.LastNumber
	for _, l := range lasts {
		if l.Last > db.seq(seqKey{l.Type, l.Serie}).last {
			raised = append(raised, l)
		}
	}
	if len(raised) == 0 && db.hold == nil {
		return nil
	}
	// The journal first, as the committer does: it must bound every number
	// before the store has it, and a failure here changes nothing.
	if err := db.raiseJournal(op, now, raised...); err != nil {
		return err
	}
	err := db.update(ctx, op, func(tx *bolt.Tx) error {
		for _, l := range raised {
			k := seqKey{l.Type, l.Serie}
			if err := putJSON(tx.Bucket(bucketCounters), counterKey(k), counterRecord(l)); err != nil {
				return err
			}
			if err := appendAudit(tx, AuditEvent{At: now, Kind: AuditNumberingResumed, Type: l.Type, Serie: l.Serie, Nro: l.Last,
				Detail: fmt.Sprintf("counter %d raised to %d, the last number known to %s", db.seq(k).last, l.Last, source)}); err != nil {
				return err
			}
		}
		if db.hold == nil {
			return nil
		}
		if err := tx.Bucket(bucketMeta).Delete(keyHold); err != nil {
			return err
		}
		return appendAudit(tx, AuditEvent{At: now, Kind: AuditNumberingKnown, Detail: "numbering known from " + source})
	})
	if err != nil {
		return err
	}
	db.hold = nil
	for _, l := range raised {
		db.seq(seqKey{l.Type, l.Serie}).last = l.Last
	}
	return nil
}

// raiseJournal raises the numbering journal's marks to lasts, when the store
// keeps one. The caller holds db.mu.
func (db *DB) raiseJournal(op string, now time.Time, lasts ...cfe.LastNumber) error {
	if db.journal == nil || len(lasts) == 0 {
		return nil
	}
	if err := db.journal.raise(now, lasts...); err != nil {
		return &cfe.Error{Code: cfe.EUNAVAILABLE, Op: op, Err: err, Message: "no se pudo escribir el diario de numeración"}
	}
	return nil
}

// releaseLocked settles serie k of a hold: a technician said where its
// numbering stands (MarkUsedElsewhere). The caller holds db.mu.
func (db *DB) releaseLocked(ctx context.Context, op string, k seqKey, reason string) error {
	if db.hold == nil || slices.Contains(db.hold.Released, holdSerie(k)) {
		return nil
	}
	h := *db.hold
	h.Released = append(slices.Clone(h.Released), holdSerie(k))
	if err := ctx.Err(); err != nil {
		return ctxError(op, err)
	}
	ev := AuditEvent{At: db.opts.Now(), Kind: AuditNumberingKnown, Type: k.Type, Serie: k.Serie,
		Nro: db.seq(k).last, Detail: "numbering of the serie confirmed by a technician: " + strings.TrimSpace(reason)}
	if !db.settlesAllLocked(h.Released) {
		return asError(op, db.putHold(h, ev))
	}
	// The last serie a usable range has: the hold ends, as when the hosted
	// service answers.
	ev.Detail += "; every serie settled, signing resumes"
	err := db.bolt.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketMeta).Delete(keyHold); err != nil {
			return err
		}
		return appendAudit(tx, ev)
	})
	if err == nil {
		db.hold = nil
	}
	return asError(op, err)
}

// settlesAllLocked reports whether released holds every serie of every
// range not expired today. The caller holds db.mu.
func (db *DB) settlesAllLocked(released []holdSerie) bool {
	today := cfe.DateOf(db.opts.Now().In(cfe.Montevideo))
	for t, rs := range db.ranges {
		for _, r := range rs {
			if !r.Expired(today) && !slices.Contains(released, holdSerie{t, r.Serie}) {
				return false
			}
		}
	}
	return true
}
