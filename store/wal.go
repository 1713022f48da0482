package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/durable"
)

// The commit log (issue 35). A signed CFE is acknowledged once it is in the
// commit log, a small file beside the store written with one fdatasync per
// commit group; the committer's checkpoints then write the logged CFEs into
// the bbolt file, many in one transaction, and bbolt stays the store of
// record. Before, every commit group cost bbolt's two fdatasyncs after some
// 25 scattered page writes; now it costs one fdatasync of one sequential
// write, and bbolt's two are shared by every CFE of a checkpoint.
//
// The log is two files, <store>.wal0 and <store>.wal1, each filled with
// zeros when created (so that writing a record overwrites allocated blocks:
// its fdatasync carries no file metadata). One is active: commit groups are
// appended to it. A checkpoint makes the other one active (its records were
// all checkpointed by the previous checkpoint), then writes every logged CFE
// not yet in bbolt into bbolt in one transaction that also records the last
// log sequence number (LSN) it holds (meta key "wal.applied"); the file
// that was active is then free, to be written again from its start.
//
// A record is
//
//	magic "CFEW" | log identity (16 bytes) | LSN (8) | payload length (4) | CRC-32C of identity, LSN, length and payload (4) | payload
//
// all big-endian. The log identity is the store file's own (meta key
// "wal.id", made at the first Open): a log file whose records name another
// identity belongs to a store file that is gone (deleted, or replaced by a
// new or restored one); Open moves it aside (<log file>.orphan-<time>),
// never deleting what it may hold, and starts a new one. The files are
// made at the first commit, so a store only read never has any. the payload is the CFE's record (JSON, with the counter
// value it follows), its compressed signed XML and, when the log is the
// first to name it, the compression dictionary. LSNs grow by one per record
// over the life of the store. Reading a file stops at the first record that
// is not whole (zeros, a torn write) or whose LSN does not follow the one
// before it (what is left of an earlier use of the file). Open replays, in
// LSN order, the records of both files above wal.applied; they must follow
// one another without a gap.
//
// Reads see a logged CFE at once: FindByUUID and FindByNumber look in the
// logged CFEs first (the pending set), and every other read or write of the
// store first checkpoints what is logged (DB.barrier), so that it sees what
// was acknowledged and writes after it.

const (
	walMagic     = "CFEW"
	walIDLen     = 16
	walHeaderLen = 4 + walIDLen + 8 + 4 + 4
	// walFileSize is the zeros each log file is created with. Records are
	// about 1.3 KB (the compressed XML ≈ 0.5 KB), so one file holds some
	// 700 before it grows; a checkpoint comes much sooner (walCheckpointN).
	walFileSize = 1 << 20
	// walCheckpointN: a checkpoint starts once this many CFEs are logged
	// and not checkpointed.
	walCheckpointN = 512
	// walCheckpointAge: a checkpoint starts once the oldest logged CFE not
	// checkpointed has waited this long.
	walCheckpointAge = 10 * time.Second
	// walCheckpointIdle: a checkpoint starts once no CFE was logged for
	// this long, so that at a till's pace every sale reaches bbolt (and the
	// watchers) within a moment.
	walCheckpointIdle = 200 * time.Millisecond
	// walMaxRecord bounds a record's payload when reading: a length above it
	// is not a record.
	walMaxRecord = 64 << 20
)

var (
	keyWALApplied = []byte("wal.applied")
	keyWALID      = []byte("wal.id")
)

// WALPaths returns the paths of the commit log files of the store file at
// path.
func WALPaths(path string) [2]string { return [2]string{path + ".wal0", path + ".wal1"} }

// walEntry is one logged CFE.
type walEntry struct {
	lsn  uint64
	rec  *issuedRecord // with its XML, zxml and words
	prev int64         // the counter value it follows
	file int           // the log file that holds it
	at   time.Time     // when it was logged (real clock)
}

// issued returns the logged CFE as Find* return it.
func (e *walEntry) issued() *cfe.Issued {
	d := e.rec.domain()
	d.XML = bytes.Clone(d.XML)
	return d
}

// walPayload is the JSON part of a record's payload.
type walPayload struct {
	Rec  *issuedRecord `json:"rec"`
	Prev int64         `json:"prev"`
}

// walFile is one of the two log files.
type walFile struct {
	f       *os.File
	path    string
	off     int64 // where the next record goes
	pending int   // its records not checkpointed yet
}

// commitLog is the two log files and the logged CFEs not checkpointed yet.
//
// mu orders appends and the switch of the active file; the committer holds
// it while it checks and appends a group. The pending set has its own lock
// (pmu) so that lookups never wait for a write.
type commitLog struct {
	id      [walIDLen]byte
	orphans []string // log files of another store file that Open moved aside

	mu     sync.Mutex
	files  [2]*walFile
	active int
	lsn    uint64                     // the last LSN written
	dicts  map[[dictHashLen]byte]bool // dictionaries a replay can find (bbolt or a logged record)
	buf    []byte

	pmu      sync.RWMutex
	entries  []*walEntry          // in LSN order
	byUUID   map[string]*walEntry // of entries
	byNumber map[string]*walEntry // of entries, by numberKey
	last     map[seqKey]int64     // the highest logged number of each sequence in entries
	lastAt   time.Time            // when the last entry was logged

	ckMu sync.Mutex // serializes checkpoints
}

// openCommitLog opens the log files of the store at path whose identity
// is id, and returns the log with every record above applied, in LSN order,
// for replay, and the dictionaries those records carry.
func openCommitLog(path string, id [walIDLen]byte, applied uint64, now time.Time) (*commitLog, []*walEntry, [][]byte, error) {
	l := &commitLog{id: id, lsn: applied, dicts: map[[dictHashLen]byte]bool{}}
	l.resetPending()
	var found []*walEntry
	var dictContents [][]byte
	for i, p := range WALPaths(path) {
		l.files[i] = &walFile{path: p}
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if errors.Is(err, fs.ErrNotExist) {
			continue // made at the first commit
		}
		if err != nil {
			_ = l.close(false)
			return nil, nil, nil, fmt.Errorf("open the commit log: %w", err)
		}
		recs, fileID, end, err := readWALFile(f)
		if err != nil {
			_ = f.Close()
			_ = l.close(false)
			return nil, nil, nil, fmt.Errorf("read the commit log %s: %w", p, err)
		}
		if len(recs) > 0 && fileID != id {
			_ = f.Close()
			aside := p + ".orphan-" + now.UTC().Format("20060102T150405.000000000")
			if err := os.Rename(p, aside); err != nil {
				_ = l.close(false)
				return nil, nil, nil, fmt.Errorf("move aside the commit log of another store file: %w", err)
			}
			l.orphans = append(l.orphans, aside)
			continue
		}
		l.files[i].f, l.files[i].off = f, end
		if n := len(recs); n > 0 {
			l.lsn = max(l.lsn, recs[n-1].lsn)
		}
		entries, dicts, err := decodeAbove(recs, applied)
		if err != nil {
			_ = l.close(false)
			return nil, nil, nil, fmt.Errorf("%w: commit log %s, %w", ErrDamaged, p, err)
		}
		for _, e := range entries {
			e.file = i
		}
		found, dictContents = append(found, entries...), append(dictContents, dicts...)
	}
	if len(l.orphans) > 0 {
		if err := durable.SyncDir(filepath.Dir(path)); err != nil {
			_ = l.close(false)
			return nil, nil, nil, err
		}
	}
	slices.SortFunc(found, func(a, b *walEntry) int { return compareLSN(a.lsn, b.lsn) })
	for i, e := range found {
		if want := applied + uint64(i) + 1; e.lsn != want {
			_ = l.close(false)
			return nil, nil, nil, fmt.Errorf("%w: the commit log lacks record %d (it has %d): acknowledged CFEs are missing from %s",
				ErrDamaged, want, e.lsn, path)
		}
	}
	return l, found, dictContents, nil
}

// ensureFile makes log file i, filled with zeros, when it does not exist
// yet: durably (its folder synced) before the first record goes in.
func (l *commitLog) ensureFile(i int) error {
	w := l.files[i]
	if w.f != nil {
		return nil
	}
	// Replacing: a file of that name would be one Open found missing or
	// moved aside, and the store file's lock keeps other agents away.
	if err := durable.WriteFile(w.path, make([]byte, walFileSize), true); err != nil {
		return fmt.Errorf("create the commit log %s: %w", w.path, err)
	}
	f, err := os.OpenFile(w.path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	w.f, w.off = f, 0
	return nil
}

func compareLSN(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// afterReplay makes both files free once Open has checkpointed every record
// they held: writing starts again at the start of the first one.
func (l *commitLog) afterReplay() {
	l.active = 0
	for _, f := range l.files {
		f.off, f.pending = 0, 0
	}
}

// walRecord is a whole record read back from a log file.
type walRecord struct {
	lsn     uint64
	payload []byte
}

// readWALFile reads the records of f from its start while they are whole,
// name the identity of the first one and their LSNs follow one another, and
// returns them with that identity and the offset after the last one.
func readWALFile(f *os.File) ([]walRecord, [walIDLen]byte, int64, error) {
	var id [walIDLen]byte
	data, err := io.ReadAll(io.NewSectionReader(f, 0, 1<<62))
	if err != nil {
		return nil, id, 0, err
	}
	var out []walRecord
	off := 0
	for len(data)-off >= walHeaderLen {
		h := data[off : off+walHeaderLen]
		if string(h[:4]) != walMagic {
			break
		}
		rest := h[4:]
		lsn := binary.BigEndian.Uint64(rest[walIDLen:])
		n := int(binary.BigEndian.Uint32(rest[walIDLen+8:]))
		if n > walMaxRecord || len(data)-off-walHeaderLen < n {
			break
		}
		payload := data[off+walHeaderLen : off+walHeaderLen+n]
		if walCRC(rest[:walIDLen+12], payload) != binary.BigEndian.Uint32(rest[walIDLen+12:]) {
			break
		}
		if len(out) == 0 {
			copy(id[:], rest[:walIDLen])
		} else if string(rest[:walIDLen]) != string(id[:]) || lsn != out[len(out)-1].lsn+1 {
			break // left from an earlier use of the file
		}
		out = append(out, walRecord{lsn, payload})
		off += walHeaderLen + n
	}
	return out, id, int64(off), nil
}

func walCRC(head, payload []byte) uint32 {
	return crc32.Update(crc32.Checksum(head, crcTable), crcTable, payload)
}

// encodeWALRecord appends the record of e (LSN e.lsn) to buf, with the
// dictionary's content when withDict.
func encodeWALRecord(buf []byte, id [walIDLen]byte, e *walEntry, withDict bool) ([]byte, error) {
	js, err := json.Marshal(walPayload{Rec: e.rec, Prev: e.prev})
	if err != nil {
		return buf, err
	}
	z := e.rec.zxml.value
	var dict []byte
	if withDict {
		dict = e.rec.zxml.dict.content
	}
	n := 4 + len(js) + 4 + len(z) + len(dict)
	start := len(buf)
	buf = append(buf, walMagic...)
	buf = append(buf, id[:]...)
	buf = binary.BigEndian.AppendUint64(buf, e.lsn)
	buf = binary.BigEndian.AppendUint32(buf, uint32(n))
	crcAt := len(buf)
	buf = append(buf, 0, 0, 0, 0) // CRC, below
	p := len(buf)
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(js)))
	buf = append(buf, js...)
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(z)))
	buf = append(buf, z...)
	buf = append(buf, dict...)
	binary.BigEndian.PutUint32(buf[crcAt:p], walCRC(buf[start+4:crcAt], buf[p:]))
	return buf, nil
}

// decodeWALRecord reads a record's payload back: the entry (its XML still
// compressed, zxml.dict unset) and the dictionary's content when the record
// carries it.
func decodeWALRecord(lsn uint64, payload []byte) (*walEntry, []byte, error) {
	take := func() ([]byte, error) {
		if len(payload) < 4 {
			return nil, errors.New("truncated payload")
		}
		n := int(binary.BigEndian.Uint32(payload))
		if len(payload)-4 < n {
			return nil, errors.New("truncated payload")
		}
		v := payload[4 : 4+n]
		payload = payload[4+n:]
		return v, nil
	}
	js, err := take()
	if err != nil {
		return nil, nil, err
	}
	z, err := take()
	if err != nil {
		return nil, nil, err
	}
	var p walPayload
	if err := json.Unmarshal(js, &p); err != nil {
		return nil, nil, err
	}
	if p.Rec == nil || len(z) < xmlHeaderLen || z[0] != xmlCompressed {
		return nil, nil, errors.New("incomplete record")
	}
	p.Rec.zxml.value = bytes.Clone(z)
	var dict []byte
	if len(payload) > 0 {
		dict = bytes.Clone(payload)
	}
	return &walEntry{lsn: lsn, rec: p.Rec, prev: p.Prev}, dict, nil
}

// append writes the records of entries (numbered from l.lsn+1) to the
// active file with one write and one fdatasync. The caller holds l.mu. On
// failure nothing is numbered: the next append writes over the same place.
func (l *commitLog) append(entries []*walEntry) error {
	if err := l.ensureFile(l.active); err != nil {
		return err
	}
	f := l.files[l.active]
	buf := l.buf[:0]
	var err error
	newDicts := map[[dictHashLen]byte]bool{}
	for i, e := range entries {
		e.lsn, e.file = l.lsn+uint64(i)+1, l.active
		h := e.rec.zxml.dict.hash
		withDict := !l.dicts[h] && !newDicts[h]
		if withDict {
			newDicts[h] = true
		}
		if buf, err = encodeWALRecord(buf, l.id, e, withDict); err != nil {
			return err
		}
	}
	l.buf = buf
	if _, err := f.f.WriteAt(buf, f.off); err != nil {
		return err
	}
	if err := syncData(f.f); err != nil {
		return err
	}
	f.off += int64(len(buf))
	l.lsn += uint64(len(entries))
	for h := range newDicts {
		l.dicts[h] = true
	}
	return nil
}

// resetPending empties the pending set.
func (l *commitLog) resetPending() {
	l.entries, l.byUUID, l.byNumber, l.last = nil, map[string]*walEntry{}, map[string]*walEntry{}, map[seqKey]int64{}
}

// addPending makes entries visible to lookups. The caller holds l.mu.
func (l *commitLog) addPending(entries []*walEntry) {
	l.pmu.Lock()
	defer l.pmu.Unlock()
	for _, e := range entries {
		l.entries = append(l.entries, e)
		l.byUUID[e.rec.UUID] = e
		l.files[e.file].pending++
		k := e.rec.key()
		l.byNumber[string(numberKey(k, e.rec.Nro))] = e
		l.last[k] = max(l.last[k], e.rec.Nro)
		l.lastAt = e.at
	}
}

// removePending drops the first n entries once a checkpoint has them in
// bbolt.
func (l *commitLog) removePending(done []*walEntry) {
	l.pmu.Lock()
	defer l.pmu.Unlock()
	for _, e := range done {
		delete(l.byUUID, e.rec.UUID)
		delete(l.byNumber, string(numberKey(e.rec.key(), e.rec.Nro)))
		l.files[e.file].pending--
	}
	l.entries = slices.Clone(l.entries[len(done):])
	clear(l.last)
	for _, e := range l.entries {
		k := e.rec.key()
		l.last[k] = max(l.last[k], e.rec.Nro)
	}
}

// pendingSnapshot returns the logged entries not checkpointed.
func (l *commitLog) pendingSnapshot() []*walEntry {
	l.pmu.RLock()
	defer l.pmu.RUnlock()
	return slices.Clone(l.entries)
}

// pendingCount returns how many logged CFEs are not checkpointed, when the
// oldest of them was logged and when the last one was.
func (l *commitLog) pendingCount() (n int, oldest, last time.Time) {
	l.pmu.RLock()
	defer l.pmu.RUnlock()
	if len(l.entries) == 0 {
		return 0, time.Time{}, time.Time{}
	}
	return len(l.entries), l.entries[0].at, l.lastAt
}

// lookupUUID returns the logged CFE uuid not checkpointed, or nil.
func (l *commitLog) lookupUUID(uuid string) *walEntry {
	l.pmu.RLock()
	defer l.pmu.RUnlock()
	return l.byUUID[uuid]
}

// lookupNumber returns the logged CFE numbered k, nro not checkpointed, or
// nil.
func (l *commitLog) lookupNumber(k seqKey, nro int64) *walEntry {
	l.pmu.RLock()
	defer l.pmu.RUnlock()
	return l.byNumber[string(numberKey(k, nro))]
}

// lastLogged returns the highest logged number of sequence k not
// checkpointed.
func (l *commitLog) lastLogged(k seqKey) (int64, bool) {
	l.pmu.RLock()
	defer l.pmu.RUnlock()
	n, ok := l.last[k]
	return n, ok
}

// switchFile makes the other file active when it is free (every record it
// held is checkpointed), writing it again from its start. The caller holds
// l.mu.
func (l *commitLog) switchFile() {
	other := 1 - l.active
	l.pmu.RLock()
	free := l.files[other].pending == 0
	l.pmu.RUnlock()
	if free {
		l.active = other
		l.files[other].off = 0
	}
}

// close closes the log files. With clean (every logged CFE is in bbolt),
// it first overwrites their first record, so that the files read as empty.
func (l *commitLog) close(clean bool) error {
	var errs []error
	for _, f := range l.files {
		if f == nil || f.f == nil {
			continue
		}
		if clean {
			if _, err := f.f.WriteAt(make([]byte, walHeaderLen), 0); err != nil {
				errs = append(errs, err)
			} else {
				errs = append(errs, syncData(f.f))
			}
		}
		errs = append(errs, f.f.Close())
	}
	return errors.Join(errs...)
}

// loggedNumbers returns the highest number of each sequence that the commit
// log of the store file at path (identity id, checkpointed up to applied)
// holds above what the file holds; empty without a log.
func loggedNumbers(path string, id [walIDLen]byte, applied uint64) map[seqKey]int64 {
	out := map[seqKey]int64{}
	entries, _ := loggedEntries(path, id, applied)
	for _, e := range entries {
		k := e.rec.key()
		out[k] = max(out[k], e.rec.Nro)
	}
	return out
}

// loggedEntries reads, without opening the store, the records of the
// commit log of the store file at path (identity id) above applied, as Open
// would replay them (their XML still compressed); none for a store that
// never logged (no identity). A record that cannot be decoded is an error.
func loggedEntries(path string, id [walIDLen]byte, applied uint64) ([]*walEntry, error) {
	if id == ([walIDLen]byte{}) {
		return nil, nil
	}
	var out []*walEntry
	for _, p := range WALPaths(path) {
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		recs, fileID, _, err := readWALFile(f)
		_ = f.Close()
		if err != nil {
			return out, err
		}
		if fileID != id {
			continue
		}
		entries, _, err := decodeAbove(recs, applied)
		out = append(out, entries...)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// decodeAbove decodes the records of one log file above applied, with the
// dictionaries they carry.
func decodeAbove(recs []walRecord, applied uint64) ([]*walEntry, [][]byte, error) {
	var out []*walEntry
	var dicts [][]byte
	for _, r := range recs {
		if r.lsn <= applied {
			continue
		}
		e, dict, err := decodeWALRecord(r.lsn, r.payload)
		if err != nil {
			return out, dicts, fmt.Errorf("record %d: %w", r.lsn, err)
		}
		out = append(out, e)
		if dict != nil {
			dicts = append(dicts, dict)
		}
	}
	return out, dicts, nil
}

// moveLog renames the log file from to to when it holds a record, and
// removes it when it holds none; a missing one is left missing.
func moveLog(from, to string) error {
	f, err := os.Open(from)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	recs, _, _, err := readWALFile(f)
	_ = f.Close()
	if err != nil {
		return err
	}
	if len(recs) == 0 {
		return os.Remove(from)
	}
	return os.Rename(from, to)
}
