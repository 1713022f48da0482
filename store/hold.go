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
	// Marks are the numbering witness's marks of the series the store is
	// behind on (witness.go): whoever settles the hold, a serie's counter
	// ends at or above its Floor.
	Marks []holdMark `json:"marks,omitempty"`
	// Scoped holds only the series of Marks (an older copy of the data
	// directory found by the witness: the other series are at or above
	// everything this machine numbered); a hold that is not scoped holds
	// every serie (nothing says where numbering stands).
	Scoped bool `json:"scoped,omitempty"`
}

// holdMark is the witness's mark of one serie of a hold.
type holdMark struct {
	Type  cfe.Type `json:"tipo"`
	Serie string   `json:"serie"`
	// Used is the witness's committed mark: numbers certainly used. A
	// technician confirming fewer is mistaken (MarkUsedElsewhere refuses).
	Used int64 `json:"used"`
	// Floor is the witness's reserved mark: every number this machine may
	// have used. Numbering resumes above it.
	Floor int64 `json:"floor"`
}

func (h *holdRecord) released(k seqKey) bool { return slices.Contains(h.Released, holdSerie(k)) }

// mark returns the witness's mark of k in the hold.
func (h *holdRecord) mark(k seqKey) (holdMark, bool) {
	for _, m := range h.Marks {
		if m.Type == k.Type && m.Serie == k.Serie {
			return m, true
		}
	}
	return holdMark{}, false
}

// holds reports whether the hold covers serie k: every serie, or only those
// of its marks when scoped, unless settled.
func (h *holdRecord) holds(k seqKey) bool {
	if h.released(k) {
		return false
	}
	if h.Scoped {
		_, ok := h.mark(k)
		return ok
	}
	return true
}

// addMarks adds marks to h (raising those it has): a serie marked again is
// behind again, and no longer settled. It reports whether h changed.
func (h *holdRecord) addMarks(marks []holdMark) bool {
	changed := false
	for _, m := range marks {
		k := seqKey{m.Type, m.Serie}
		i := slices.IndexFunc(h.Marks, func(x holdMark) bool { return x.Type == m.Type && x.Serie == m.Serie })
		switch {
		case i < 0:
			h.Marks = append(slices.Clone(h.Marks), m)
		case h.Marks[i].Used < m.Used || h.Marks[i].Floor < m.Floor:
			h.Marks = slices.Clone(h.Marks)
			h.Marks[i] = holdMark{Type: m.Type, Serie: m.Serie, Used: max(m.Used, h.Marks[i].Used), Floor: max(m.Floor, h.Marks[i].Floor)}
		case !h.released(k):
			continue
		}
		h.Released = slices.DeleteFunc(slices.Clone(h.Released), func(x holdSerie) bool { return x == holdSerie(k) })
		changed = true
	}
	return changed
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
// compares it with the journal and the witness, raises counters that are
// behind and creates or loads the hold.
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
	// journal in it (durable): a folder without its journal means
	// the journal was lost, even after a power cut during the first start.
	jf, err := readJournal(path)
	if err != nil {
		return &cfe.Error{Code: cfe.EINTERNAL, Op: op, Err: err,
			Message: fmt.Sprintf("el diario de numeración %s está dañado; no se puede saber por qué número sigue la numeración", path)}
	}
	now := db.opts.Now()
	var wit *witness
	if db.opts.Witness != "" {
		wit, db.witnessSt = openWitness(db.opts.Witness, db.opts.WitnessKey, db.path, now)
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
	if jf != nil {
		replaced := jf.StoreID != id
		var raised []cfe.LastNumber
		var details []string
		var skipped []cfe.AnnulledRange
		for _, e := range jf.Sequences {
			k := seqKey{e.Type, e.Serie}
			last := db.seq(k).last
			if floor, behind := jf.floorFor(e, replaced, last); behind {
				// The numbers up to the journal's committed mark were issued by
				// the lost file; those above it, up to the reserved mark Open
				// resumes after a crash, may never have been: annulled.
				if certain := max(last, e.Committed); floor > certain && !db.opts.restoring {
					skipped = append(skipped, cfe.AnnulledRange{Type: e.Type, Serie: e.Serie, From: certain + 1, To: floor,
						Reason: cfe.AnnulSkippedBlock, At: now,
						Note: fmt.Sprintf("bloque del diario de numeración omitido al abrir (archivo %s, diario escrito %s)", id, jf.WrittenAt.Format(time.RFC3339))})
				}
				raised = append(raised, cfe.LastNumber{Type: e.Type, Serie: e.Serie, Last: floor})
				details = append(details, fmt.Sprintf("the store file (id %s) is behind the numbering journal %s (store %s, clean %v, written %s): counter %d raised to %d; numbers %d-%d were issued by the lost file or never used (unused ones must be reported to DGI as annulled)",
					id, path, jf.StoreID, jf.Clean, jf.WrittenAt.Format(time.RFC3339), last, floor, last+1, floor))
			}
		}
		if err := db.raiseAtOpen(now, raised, details, skipped...); err != nil {
			return err
		}
	}
	if err := db.compareWitness(wit, jf, id, hadData, legacy, now); err != nil {
		return err
	}
	db.journal = &journal{path: path, block: int64(db.opts.JournalBlock), storeID: id, witness: wit}
	if jf != nil {
		db.journal.gen = jf.Generation
	}
	if wit != nil && wit.file != nil {
		// After an older copy, the journal takes the witness's count up: a
		// generation is never written twice with different marks.
		db.journal.gen = max(db.journal.gen, wit.file.Generation)
	}
	db.keepHoldMarks()
	db.journal.mu.Lock()
	defer db.journal.mu.Unlock()
	if err := db.journal.write(db.countersLocked(), false, now); err != nil {
		return &cfe.Error{Code: cfe.EUNAVAILABLE, Op: op, Err: err,
			Message: "no se pudo escribir el diario de numeración " + path}
	}
	return nil
}

// compareWitness is Open's comparison of the data directory with the
// numbering witness (witness.go), after the journal raised the store's
// counters, and the hold of a data directory without its journal:
//
//   - a data directory older than the witness (a copy put back) holds the
//     series whose counter is below the witness's mark, naming the marks,
//     until ResumeNumbering or MarkUsedElsewhere settles them;
//   - a data directory with neither journal nor numbers (lost, or made anew
//     on purpose on this machine) resumes above the witness's marks, as a
//     lost store resumes above its journal;
//   - a journal missing from the folder where one was kept holds every
//     serie when Options.HoldWithoutJournal is set (the witness's marks, if
//     any, then bound the settlement).
//
// The caller owns db.
func (db *DB) compareWitness(wit *witness, jf *journalFile, id string, hadData, legacy bool, now time.Time) error {
	counter := func(k seqKey) int64 { return db.seq(k).last }
	var marks []holdMark
	var reason, why string
	absent := false
	if wit != nil && wit.file != nil {
		w := wit.file
		old, because := olderThan(w, jf, id, counter, hadData)
		switch {
		case old:
			db.witnessSt.OlderCopy = true
			marks = holdMarks(w, counter)
			why = because
			if len(marks) == 0 {
				db.witnessSt.Detail = append(db.witnessSt.Detail, fmt.Sprintf(
					"the data directory is an older copy than the numbering witness %s (%s), but no serie is behind it: nothing held; CFEs signed after the copy was taken and not delivered may be lost", wit.path, because))
			} else {
				reason = witnessHoldReason(wit.path, marks, counter)
			}
		case jf == nil && !hadData:
			absent = true
			marks = holdMarks(w, counter)
		}
	}
	lostJournal := jf == nil && db.opts.HoldWithoutJournal && !legacy
	switch {
	case db.hold != nil:
		h := *db.hold
		changed := h.addMarks(marks)
		if reason != "" && h.Scoped && h.Reason != reason {
			// A hold of an older copy names the marks as they are now; a
			// hold of every serie keeps its reason (the marks then only
			// bound the settlement).
			h.Reason, changed = reason, true
		}
		if lostJournal && h.Scoped {
			h.Scoped, changed = false, true
		}
		if !changed {
			return nil
		}
		return db.putHold(h, AuditEvent{At: now, Kind: AuditNumberingHeld,
			Detail: fmt.Sprintf("numbering still held; the numbering witness's marks: %s", describeMarks(h.Marks))})
	case reason != "" || lostJournal:
		h := holdRecord{Since: now, Reason: reason, Marks: marks, Scoped: reason != "" && !lostJournal}
		detail := "no numbering journal at " + db.opts.Journal + ": signing held until the hosted service or a technician says where numbering stands"
		if reason != "" {
			detail = fmt.Sprintf("the data directory is an older copy than the numbering witness %s (%s): signing held for %s until the hosted service or a technician settles them",
				wit.path, why, describeMarks(marks))
		} else {
			h.Reason = holdReason
		}
		if len(marks) > 0 {
			db.witnessSt.Detail = append(db.witnessSt.Detail, detail)
		}
		return db.putHold(h, AuditEvent{At: now, Kind: AuditNumberingHeld, Detail: detail})
	case absent && len(marks) > 0:
		w := wit.file
		var raised []cfe.LastNumber
		var details []string
		for _, m := range marks {
			raised = append(raised, cfe.LastNumber{Type: m.Type, Serie: m.Serie, Last: m.Floor})
			details = append(details, fmt.Sprintf("the data directory has neither a numbering journal nor numbers, and this machine's numbering witness %s (store %s, generation %d, clean %v, written %s) recorded %s up to %d: counter %d raised to %d; numbers %d-%d were issued by the lost data directory or never used (unused ones must be reported to DGI as annulled)",
				wit.path, w.Store, w.Generation, w.Clean, w.WrittenAt.Format(time.RFC3339), seqKey{m.Type, m.Serie}, m.Floor, counter(seqKey{m.Type, m.Serie}), m.Floor, counter(seqKey{m.Type, m.Serie})+1, m.Floor))
		}
		return db.raiseAtOpen(now, raised, details) // ResumedAtOpen reports them
	}
	return nil
}

// describeMarks lists marks for the log and the audit (English).
func describeMarks(marks []holdMark) string {
	parts := make([]string, 0, len(marks))
	for _, m := range marks {
		parts = append(parts, fmt.Sprintf("%s (used up to %d, may have used up to %d)", seqKey{m.Type, m.Serie}, m.Used, m.Floor))
	}
	return strings.Join(parts, ", ")
}

// raiseAtOpen raises counters Open found behind (the journal's or the
// witness's marks), with an audit event each; details go to ResumedAtOpen.
// The caller owns db.
func (db *DB) raiseAtOpen(now time.Time, raised []cfe.LastNumber, details []string, skipped ...cfe.AnnulledRange) error {
	if len(raised) == 0 {
		return nil
	}
	var annulled []cfe.AnnulledRange
	err := db.bolt.Update(func(tx *bolt.Tx) error {
		for _, s := range skipped {
			w, err := putAnnulledTx(tx, s)
			if err != nil {
				return err
			}
			annulled = append(annulled, w...)
		}
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
	db.noteAnnulledLocked(annulled)
	db.resumed = append(db.resumed, details...)
	return nil
}

// keepHoldMarks tells the witness the marks of the hold in force, which it
// keeps while the store is below them. The caller holds db.mu or owns db.
func (db *DB) keepHoldMarks() {
	j := db.journal
	if j == nil || j.witness == nil {
		return
	}
	keep := map[seqKey]int64{}
	if db.hold != nil {
		for _, m := range db.hold.Marks {
			k := seqKey{m.Type, m.Serie}
			keep[k] = max(keep[k], m.Floor)
		}
	}
	j.mu.Lock()
	j.witness.keep = keep
	j.mu.Unlock()
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
		db.keepHoldMarks()
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
		k := seqKey{t, r.Serie}
		if r.Expired(today) || !h.holds(k) {
			continue
		}
		wait := "Se espera la consulta al servicio o que un técnico ejecute «cfe-agent cae used-elsewhere»"
		if m, ok := h.mark(k); ok {
			// The witness knows how far this machine numbered: the
			// technician of a profile without a hosted service can settle it.
			wait = fmt.Sprintf("Se espera la consulta al servicio en línea o que un técnico confirme el último número usado: «cfe-agent cae used-elsewhere %d %s %d --reason …» (el testigo de este equipo registra hasta el %d)",
				int(t), r.Serie, m.Floor, m.Floor)
		}
		return &cfe.Error{Code: cfe.EUNAVAILABLE, Op: op, Respuesta: cfe.RespSinRangoCAE,
			Message: fmt.Sprintf("no se puede numerar %s serie %s: %s. %s", t.Name(), r.Serie, h.Reason, wait)}
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

// LastNumber returns the counter of type t and serie: the last number
// committed, or marked as used (MarkUsedElsewhere, ResumeNumbering, Open's
// raises). Numbering goes on above it.
func (db *DB) LastNumber(t cfe.Type, serie string) int64 {
	db.mu.Lock()
	defer db.mu.Unlock()
	if q := db.seqs[seqKey{t, serie}]; q != nil {
		return q.last
	}
	return 0
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
	// The source's last numbers, and the witness's marks of a hold: a
	// serie the source does not know (CFEs the lost data signed and never
	// delivered) still resumes above how far this machine numbered.
	want := map[seqKey]int64{}
	from := map[seqKey]string{}
	for _, l := range lasts {
		k := seqKey{l.Type, l.Serie}
		if _, seen := want[k]; !seen || l.Last > want[k] {
			want[k], from[k] = l.Last, source
		}
	}
	if db.hold != nil {
		for _, m := range db.hold.Marks {
			k := seqKey{m.Type, m.Serie}
			if m.Floor > want[k] {
				want[k], from[k] = m.Floor, "this machine's numbering witness"
			}
		}
	}
	var raised []cfe.LastNumber
	for k, last := range want {
		if last > db.seq(k).last {
			raised = append(raised, cfe.LastNumber{Type: k.Type, Serie: k.Serie, Last: last})
		}
	}
	slices.SortFunc(raised, func(a, b cfe.LastNumber) int { return seqKey{a.Type, a.Serie}.compare(seqKey{b.Type, b.Serie}) })
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
				Detail: fmt.Sprintf("counter %d raised to %d, the last number known to %s", db.seq(k).last, l.Last, from[k])}); err != nil {
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
	db.keepHoldMarks()
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
	if db.hold == nil || db.hold.released(k) {
		return nil
	}
	h := *db.hold
	h.Released = append(slices.Clone(h.Released), holdSerie(k))
	if err := ctx.Err(); err != nil {
		return ctxError(op, err)
	}
	now := db.opts.Now()
	ev := AuditEvent{At: now, Kind: AuditNumberingKnown, Type: k.Type, Serie: k.Serie,
		Nro: db.seq(k).last, Detail: "numbering of the serie confirmed by a technician: " + strings.TrimSpace(reason)}
	if !db.settlesAllLocked(&h) {
		return asError(op, db.putHold(h, ev))
	}
	// The last serie a usable range has: the hold ends, as when the hosted
	// service answers. A marked serie nobody settled (it has no usable
	// range today) resumes above its mark, so that a range imported later
	// does not number it again.
	var raised []cfe.LastNumber
	for _, m := range h.Marks {
		if mk := (seqKey{m.Type, m.Serie}); !h.released(mk) && m.Floor > db.seq(mk).last {
			raised = append(raised, cfe.LastNumber{Type: m.Type, Serie: m.Serie, Last: m.Floor})
		}
	}
	if err := db.raiseJournal(op, now, raised...); err != nil {
		return err
	}
	ev.Detail += "; every serie settled, signing resumes"
	err := db.bolt.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketMeta).Delete(keyHold); err != nil {
			return err
		}
		for _, r := range raised {
			if err := putJSON(tx.Bucket(bucketCounters), counterKey(seqKey{r.Type, r.Serie}), counterRecord(r)); err != nil {
				return err
			}
			if err := appendAudit(tx, AuditEvent{At: now, Kind: AuditNumberingResumed, Type: r.Type, Serie: r.Serie, Nro: r.Last,
				Detail: fmt.Sprintf("counter %d raised to %d, this machine's numbering witness's mark, as the hold ended", db.seq(seqKey{r.Type, r.Serie}).last, r.Last)}); err != nil {
				return err
			}
		}
		return appendAudit(tx, ev)
	})
	if err != nil {
		return asError(op, err)
	}
	db.hold = nil
	db.keepHoldMarks()
	for _, r := range raised {
		db.seq(seqKey{r.Type, r.Serie}).last = r.Last
	}
	return nil
}

// settlesAllLocked reports whether h's settled series cover every serie it
// holds that has a range not expired today. The caller holds db.mu.
func (db *DB) settlesAllLocked(h *holdRecord) bool {
	today := cfe.DateOf(db.opts.Now().In(cfe.Montevideo))
	for t, rs := range db.ranges {
		for _, r := range rs {
			if !r.Expired(today) && h.holds(seqKey{t, r.Serie}) {
				return false
			}
		}
	}
	return true
}
