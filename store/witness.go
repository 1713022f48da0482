package store

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/durable"
)

// The numbering witness is a copy of the numbering journal's marks kept
// outside the data directory, one file per company, environment and profile
// on the machine (Options.Witness, docs/numbering.md "The witness"). The
// journal lives in the data directory, so a copy of the data directory put
// back carries an old journal that cannot tell it is old; the witness stays
// where it was and can. It is written right after every write of the journal
// (once per block of numbers, at Open and at Close) with the journal's
// generation, a counter that every journal write raises. Since the journal is
// always written first, after any crash the journal's generation is at or
// above the witness's and its committed marks too: a journal found behind the
// witness was put back from an older copy.
//
// Each sequence of the witness keeps two marks:
//   - committed: the highest committed mark any journal of this profile wrote
//     here (numbers certainly used);
//   - reserved: the journal's reserved mark as last written (the journal's
//     reserved mark comes down at Open and Close, to the exact counter), but
//     never below committed nor below the mark of a hold still in force (so
//     that the witness does not forget, while an old copy waits to be
//     settled, how far the lost data may have numbered). Every number this
//     machine committed is at or below it.
//
// The witness is a safeguard, not a gate: a witness that cannot be read is
// set aside, one that cannot be written is reported, and the agent keeps
// signing in both cases (WitnessStatus).

// witnessVersion is the layout of the witness file.
const witnessVersion = 1

// WitnessKey is whose numbering a witness file records: one file per company
// (RUC), environment and profile on a machine.
type WitnessKey struct {
	RUC         string
	Environment string
	Profile     string
}

// unsafeName matches what may not appear in one element of a witness path.
var unsafeName = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// WitnessFile returns the witness file of k under the witness folder dir:
// dir/<environment>/<RUC>/<profile>.json. Characters other than letters,
// digits, '.', '_' and '-' become '_'.
func WitnessFile(dir string, k WitnessKey) string {
	part := func(s string) string {
		s = unsafeName.ReplaceAllString(strings.ToLower(s), "_")
		if s == "" || strings.Trim(s, ".") == "" {
			return "_"
		}
		return s
	}
	return filepath.Join(dir, part(k.Environment), part(k.RUC), part(k.Profile)+".json")
}

// witnessFile is the witness as stored (JSON).
type witnessFile struct {
	Version     int    `json:"version"`
	RUC         string `json:"ruc"`
	Environment string `json:"environment"`
	Profile     string `json:"profile"`
	// Store is the store file whose journal was last copied here, StoreID
	// its identity.
	Store      string         `json:"store"`
	StoreID    string         `json:"store_id"`
	Generation int64          `json:"generation"`
	Clean      bool           `json:"clean"` // the last write was a clean Close
	WrittenAt  time.Time      `json:"written_at"`
	Sequences  []journalEntry `json:"sequences"`
}

// readWitness reads the witness at path: nil without an error when there is
// none. A file that is not a witness of k is an error.
func readWitness(path string, k WitnessKey) (*witnessFile, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) { // a file where a folder of the path should be: none either
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var w witnessFile
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if w.Version != witnessVersion {
		return nil, fmt.Errorf("version %d, want %d", w.Version, witnessVersion)
	}
	if w.RUC != k.RUC || w.Environment != k.Environment || !strings.EqualFold(w.Profile, k.Profile) {
		return nil, fmt.Errorf("the witness of RUC %s, environment %s, profile %s, not of RUC %s, environment %s, profile %s",
			w.RUC, w.Environment, w.Profile, k.RUC, k.Environment, k.Profile)
	}
	for _, e := range w.Sequences {
		if !e.Type.Valid() || e.Committed < 0 || e.Reserved < e.Committed {
			return nil, fmt.Errorf("sequence %d %q: marks %d/%d", int(e.Type), e.Serie, e.Committed, e.Reserved)
		}
	}
	return &w, nil
}

// witness is the witness of an open DB. The journal's mu guards it: it is
// written only by journal.write.
type witness struct {
	path  string
	key   WitnessKey
	store string
	file  *witnessFile     // as last read or written; nil while none exists
	keep  map[seqKey]int64 // reserved marks a hold in force names (see holdMark)
	err   error            // the last write's failure; nil once a write succeeds
}

// record writes the witness after the journal wrote entries with generation
// gen: each sequence's committed mark never goes down, and its reserved mark
// is the journal's (0 for a sequence the journal no longer names: Open and
// Close write the counters, and a block reserved for numbers that were
// never committed leaves none), but at least committed and the mark of the
// hold in force. A sequence left with neither mark is dropped, as the
// journal dropped it. The caller holds the journal's mu.
func (w *witness) record(entries map[seqKey]journalEntry, gen int64, storeID string, clean bool, now time.Time) error {
	old := map[seqKey]journalEntry{}
	if w.file != nil {
		for _, e := range w.file.Sequences {
			old[seqKey{e.Type, e.Serie}] = e
		}
	}
	keys := map[seqKey]bool{}
	for _, m := range []map[seqKey]journalEntry{old, entries} {
		for k := range m {
			keys[k] = true
		}
	}
	for k := range w.keep {
		keys[k] = true
	}
	next := map[seqKey]journalEntry{}
	for k := range keys {
		c := max(old[k].Committed, entries[k].Committed)
		if r := max(entries[k].Reserved, c, w.keep[k]); r > 0 {
			next[k] = journalEntry{Type: k.Type, Serie: k.Serie, Committed: c, Reserved: r}
		}
	}
	f := &witnessFile{Version: witnessVersion, RUC: w.key.RUC, Environment: w.key.Environment, Profile: w.key.Profile,
		Store: w.store, StoreID: storeID, Generation: gen, Clean: clean, WrittenAt: now.UTC()}
	for _, e := range next {
		f.Sequences = append(f.Sequences, e)
	}
	slices.SortFunc(f.Sequences, func(a, b journalEntry) int {
		return cmp.Or(cmp.Compare(a.Type, b.Type), cmp.Compare(a.Serie, b.Serie))
	})
	data, err := json.MarshalIndent(f, "", "  ")
	if err == nil {
		err = durable.WriteFile(w.path, append(data, '\n'), true)
	}
	w.err = err
	if err == nil {
		w.file = f
	}
	return err
}

// WitnessStatus is what Open found in the witness and what became of it since.
type WitnessStatus struct {
	// Path is the witness file.
	Path string
	// Found: a witness existed when the store was opened.
	Found bool
	// SetAside names where a witness that could not be read was moved
	// (Spanish reason in Problem); "" otherwise.
	SetAside string
	// OlderCopy: the data directory is older than the witness (its journal
	// was put back from a copy). Numbering is held for the series it is
	// behind on (NumberingHold); Detail says which.
	OlderCopy bool
	// Detail lines, English, for the log: what Open compared and did.
	Detail []string
	// Problem is the last failure to read or write the witness, Spanish;
	// "" when it is in order.
	Problem string
}

// WitnessStatus returns what Open found in the numbering witness and whether
// its last write succeeded; nil without Options.Witness.
func (db *DB) WitnessStatus() *WitnessStatus {
	j := db.journal
	if j == nil || db.witnessSt == nil {
		return nil
	}
	st := *db.witnessSt
	st.Detail = slices.Clone(st.Detail)
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.witness != nil && j.witness.err != nil {
		st.Problem = fmt.Sprintf("no se pudo escribir el testigo de numeración %s: %v", j.witness.path, unwrapPath(j.witness.err))
	}
	return &st
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// openWitness reads the witness at path for Open. A witness that cannot be
// decoded (or is another profile's) is set aside under a dated name and
// reported; one that cannot be read at all is reported and left alone: no
// witness for this run (nil), since writing a new one would lose its marks.
func openWitness(path string, k WitnessKey, store string, now time.Time) (*witness, *WitnessStatus) {
	w := &witness{path: path, key: k, store: store}
	st := &WitnessStatus{Path: path}
	f, err := readWitness(path, k)
	var pe *fs.PathError
	switch {
	case err == nil:
		w.file, st.Found = f, f != nil
	case errors.As(err, &pe):
		st.Problem = fmt.Sprintf("no se pudo leer el testigo de numeración %s: %v", path, pe.Err)
		st.Detail = append(st.Detail, fmt.Sprintf("the numbering witness %s could not be read (%v): not used nor written in this run", path, err))
		return nil, st
	default:
		aside := path + ".dañado-" + now.Format("20060102T150405")
		st.Found = true
		if rerr := os.Rename(path, aside); rerr != nil {
			st.Problem = fmt.Sprintf("el testigo de numeración %s está dañado (%v) y no se pudo apartar: %v", path, err, unwrapPath(rerr))
		} else {
			st.SetAside = aside
			st.Problem = fmt.Sprintf("el testigo de numeración %s estaba dañado (%v): se apartó como %s y se escribe uno nuevo", path, err, aside)
		}
		st.Detail = append(st.Detail, fmt.Sprintf("the numbering witness %s is damaged (%v): set aside as %q and written again", path, err, st.SetAside))
	}
	return w, st
}

// witnessFloor is the mark a sequence of the witness bounds: every number
// this machine may have committed in it.
func witnessFloor(e journalEntry) int64 { return max(e.Reserved, e.Committed) }

// olderThan reports whether the data directory, whose journal is jf (nil when
// it has none) and whose store (identity id) holds counters, is an older
// copy than what the witness w last saw, and why (English). hadData says
// whether the store held numbers before Open.
//
// With a journal: a journal generation below the witness's, a committed mark
// below the witness's, or, at the same generation, a reserved mark of a
// sequence the journal names below it (the witness keeps a hold's marks) can
// only come from a copy put back: the journal is written first and its
// committed marks never go down. A sequence the journal does not name has no
// reserved mark to compare: a journal written from a store with no number in
// a serie (after a crash before that serie's first commit reached the store)
// drops it, and a witness written before record dropped such sequences too
// still names it. A journal written by a version without generations (0) is
// compared by its marks.
// Without a journal, the store itself is compared: another file than the one
// the witness last saw, or a counter below a committed mark.
func olderThan(w *witnessFile, jf *journalFile, id string, counters func(seqKey) int64, hadData bool) (bool, string) {
	if jf != nil {
		if jf.Generation > 0 && jf.Generation < w.Generation {
			return true, fmt.Sprintf("the numbering journal's generation %d is below the witness's %d", jf.Generation, w.Generation)
		}
		for _, e := range w.Sequences {
			k := seqKey{e.Type, e.Serie}
			je, named := journalEntry{}, false
			for _, x := range jf.Sequences {
				if x.Type == e.Type && x.Serie == e.Serie {
					je, named = x, true
				}
			}
			if je.Committed < e.Committed {
				return true, fmt.Sprintf("%s: the journal's committed mark %d is below the witness's %d", k, je.Committed, e.Committed)
			}
			if jf.Generation == w.Generation && named && je.Reserved < e.Reserved {
				return true, fmt.Sprintf("%s: the journal's reserved mark %d is below the witness's %d at the same generation", k, je.Reserved, e.Reserved)
			}
		}
		return false, ""
	}
	if !hadData {
		return false, ""
	}
	if id != w.StoreID {
		return true, fmt.Sprintf("no numbering journal, and the store file (id %s) is not the one the witness last saw (%s)", id, w.StoreID)
	}
	for _, e := range w.Sequences {
		k := seqKey{e.Type, e.Serie}
		if last := counters(k); last < e.Committed {
			return true, fmt.Sprintf("no numbering journal, and %s: the store's counter %d is below the witness's committed mark %d", k, last, e.Committed)
		}
	}
	return false, ""
}

// holdMarks returns, for every sequence of w, the mark the store's counter
// is below: the series an older copy may number again.
func holdMarks(w *witnessFile, counters func(seqKey) int64) []holdMark {
	var out []holdMark
	for _, e := range w.Sequences {
		if floor := witnessFloor(e); counters(seqKey{e.Type, e.Serie}) < floor {
			out = append(out, holdMark{Type: e.Type, Serie: e.Serie, Used: e.Committed, Floor: floor})
		}
	}
	return out
}

// witnessHoldReason is the Spanish reason of a hold for an older copy of the
// data directory: it names, per serie, where the data stands and how far
// this machine numbered.
func witnessHoldReason(path string, marks []holdMark, counters func(seqKey) int64) string {
	parts := make([]string, 0, len(marks))
	for _, m := range marks {
		last := counters(seqKey{m.Type, m.Serie})
		if m.Used == m.Floor {
			parts = append(parts, fmt.Sprintf("%s serie %s: los datos llegan al %d y este equipo usó hasta el %d", m.Type.Name(), m.Serie, last, m.Floor))
		} else {
			parts = append(parts, fmt.Sprintf("%s serie %s: los datos llegan al %d y este equipo usó hasta el %d y pudo usar hasta el %d",
				m.Type.Name(), m.Serie, last, m.Used, m.Floor))
		}
	}
	return "la carpeta de datos es una copia anterior a lo que este equipo ya numeró (testigo de numeración " + path + "): " +
		strings.Join(parts, "; ")
}

// WitnessCheck is what a witness file says against a profile's journal
// (CheckWitness, for doctor).
type WitnessCheck struct {
	Path  string
	Found bool
	// Generation, WrittenAt and Clean are the witness's last write; Store
	// names the store file whose journal it copied.
	Generation int64
	WrittenAt  time.Time
	Clean      bool
	Store      string
	// Marks are the witness's marks: Last is the committed mark, Bound the
	// reserved one.
	Marks []WitnessMark
	// JournalFound, JournalGeneration: the journal beside the store.
	JournalFound      bool
	JournalGeneration int64
	// Behind: the journal is older than the witness (an old copy of the
	// data directory), with why (English).
	Behind    bool
	BehindWhy string
	// Lagging: the journal was written after the witness last was (the
	// witness could not be written, or a run used another witness folder).
	Lagging bool
}

// WitnessMark is one sequence of a witness.
type WitnessMark struct {
	Type  cfe.Type
	Serie string
	Last  int64
	Bound int64
}

// CheckWitness reads the witness of k at path and compares it with the
// numbering journal at journal, as Open would. It writes nothing. A witness
// or journal that cannot be read is an error.
func CheckWitness(path string, k WitnessKey, journal string) (*WitnessCheck, error) {
	c := &WitnessCheck{Path: path}
	w, err := readWitness(path, k)
	if err != nil {
		return nil, fmt.Errorf("witness %s: %w", path, err)
	}
	jf, err := readJournal(journal)
	if err != nil {
		return nil, fmt.Errorf("journal %s: %w", journal, err)
	}
	if jf != nil {
		c.JournalFound, c.JournalGeneration = true, jf.Generation
	}
	if w == nil {
		return c, nil
	}
	c.Found, c.Generation, c.WrittenAt, c.Clean, c.Store = true, w.Generation, w.WrittenAt, w.Clean, w.Store
	for _, e := range w.Sequences {
		c.Marks = append(c.Marks, WitnessMark{Type: e.Type, Serie: e.Serie, Last: e.Committed, Bound: witnessFloor(e)})
	}
	if jf != nil {
		c.Behind, c.BehindWhy = olderThan(w, jf, "", nil, false)
		c.Lagging = !c.Behind && jf.Generation > w.Generation
	}
	return c, nil
}
