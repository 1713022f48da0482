package store_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/store"
)

// witnessRanges are the ranges of the machines of the witness tests: the
// agent imports them again at every start.
var witnessRanges = []cfe.CAERange{newRange(cfe.ETicket, "A", 1, 1000, farAway), newRange(cfe.EFactura, "A", 1, 1000, farAway)}

// machine is one profile's data directory (its store and numbering journal,
// laid out as the agent lays them out) and the machine's witness folder,
// outside it.
type machine struct {
	store, journal, witness string
	key                     store.WitnessKey
	block                   int
}

func newMachine(t testing.TB) *machine {
	data := t.TempDir()
	key := store.WitnessKey{RUC: "219999830019", Environment: "test", Profile: "caja1"}
	return &machine{store: filepath.Join(data, "store", "test", "caja1.db"),
		journal: filepath.Join(data, "numbering", "test", "caja1", "journal.json"),
		witness: store.WitnessFile(filepath.Join(t.TempDir(), "witness"), key), key: key, block: 10}
}

func (m *machine) opts() store.Options {
	return store.Options{Journal: m.journal, JournalBlock: m.block, Witness: m.witness, WitnessKey: m.key}
}

// open opens the store as the agent does: the ranges imported again.
func (m *machine) open(t testing.TB) *store.DB {
	t.Helper()
	db := openAt(t, m.store, m.opts())
	for _, r := range witnessRanges {
		if err := db.PutRange(ctx, r); err != nil && cfe.ErrorCode(err) != cfe.ECONFLICT {
			t.Fatal(err)
		}
	}
	return db
}

// snapshot copies the data directory's files (and the witness with
// witness) as they are now, into a new folder; restore puts them back.
func (m *machine) snapshot(t testing.TB, witness bool) string {
	t.Helper()
	dir := t.TempDir()
	wal := store.WALPaths(m.store)
	files := map[string]string{"store": m.store, "journal": m.journal, "wal0": wal[0], "wal1": wal[1]}
	if witness {
		files["witness"] = m.witness
	}
	for name, src := range files {
		if _, err := os.Stat(src); err == nil {
			testtool.CopyFile(t, src, filepath.Join(dir, name))
		}
	}
	return dir
}

func (m *machine) restore(t testing.TB, snap string) {
	t.Helper()
	wal := store.WALPaths(m.store)
	for name, dst := range map[string]string{"store": m.store, "journal": m.journal, "witness": m.witness, "wal0": wal[0], "wal1": wal[1]} {
		src := filepath.Join(snap, name)
		if _, err := os.Stat(src); err != nil {
			if name != "witness" {
				if err := os.Remove(dst); err != nil && !os.IsNotExist(err) {
					t.Fatal(err)
				}
			}
			continue
		}
		testtool.CopyFile(t, src, dst)
	}
}

// readWitnessJSON decodes the witness file.
func readWitnessJSON(t testing.TB, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v\n%s", path, err, b)
	}
	return v
}

// marksOf returns the "committed/reserved" marks of a decoded witness or
// journal by "tipo-serie".
func marksOf(v map[string]any) map[string]string {
	out := map[string]string{}
	seqs, _ := v["sequences"].([]any)
	for _, s := range seqs {
		e := s.(map[string]any)
		out[fmt.Sprintf("%v-%v", e["tipo"], e["serie"])] = fmt.Sprintf("%v/%v", e["committed"], e["reserved"])
	}
	return out
}

// refusedWith checks that Reserve refuses typ with 05 and a message holding
// every one of parts.
func refusedWith(t testing.TB, db *store.DB, typ cfe.Type, parts ...string) {
	t.Helper()
	r, err := db.Reserve(ctx, typ, today)
	if err == nil {
		db.Release(r)
		t.Fatalf("type %d: Reserve handed out %s-%d while numbering is held", typ, r.Serie, r.Nro)
	}
	ce := wantCode(t, err, cfe.EUNAVAILABLE)
	if ce.Respuesta != cfe.RespSinRangoCAE {
		t.Errorf("refusal answers %q, want %q", ce.Respuesta, cfe.RespSinRangoCAE)
	}
	for _, p := range parts {
		if !strings.Contains(ce.Message, p) {
			t.Errorf("refusal %q lacks %q", ce.Message, p)
		}
	}
}

// nextOf reserves the next number of typ and gives it back.
func nextOf(t testing.TB, db *store.DB, typ cfe.Type) int64 {
	t.Helper()
	r := reserve(t, db, typ)
	db.Release(r)
	return r.Nro
}

// TestWitness_Written: the witness, outside the data directory, follows the
// journal at every write (each block, Open, Close) with the journal's
// generation, and records whose numbering it is.
func TestWitness_Written(t *testing.T) {
	t.Parallel()
	m := newMachine(t)
	db := m.open(t)
	check := func(when string, clean bool) {
		t.Helper()
		j, w := readWitnessJSON(t, m.journal), readWitnessJSON(t, m.witness)
		if fmt.Sprint(marksOf(j)) != fmt.Sprint(marksOf(w)) || j["generation"] != w["generation"] || w["clean"] != clean {
			t.Fatalf("%s: journal %v (generation %v), witness %v (generation %v, clean %v)", when, marksOf(j), j["generation"],
				marksOf(w), w["generation"], w["clean"])
		}
	}
	check("at Open", false)
	gen := readWitnessJSON(t, m.witness)["generation"].(float64)
	issueN(t, db, "a", 3)
	check("after A-1..A-3 (one block)", false)
	if got := marksOf(readWitnessJSON(t, m.witness))["101-A"]; got != "0/10" {
		t.Errorf("the witness's marks of e-Ticket A: %s, want 0/10", got)
	}
	issueN(t, db, "b", 8)
	check("after A-11 (a second block)", false)
	if got := marksOf(readWitnessJSON(t, m.witness))["101-A"]; got != "10/20" {
		t.Errorf("the witness's marks of e-Ticket A: %s, want 10/20", got)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	check("after Close", true)
	w := readWitnessJSON(t, m.witness)
	if got := marksOf(w)["101-A"]; got != "11/11" {
		t.Errorf("the witness's marks after Close: %s, want 11/11", got)
	}
	if g := w["generation"].(float64); g != gen+3 {
		t.Errorf("generation %v after Open %v, two blocks and Close: want %v", g, gen, gen+3)
	}
	if w["ruc"] != m.key.RUC || w["environment"] != m.key.Environment || w["profile"] != m.key.Profile || w["store"] != m.store {
		t.Errorf("the witness names %v %v %v %v", w["ruc"], w["environment"], w["profile"], w["store"])
	}
	if fi, err := os.Stat(m.witness); err != nil || runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Errorf("witness file mode %v, %v; want 0600", fi.Mode(), err)
	}
}

// oldCopy issues e-Tickets A-1..A-5 and e-Factura A-1 on m, stops cleanly,
// takes a copy of the data directory (store and journal), issues A-6..A-10
// and stops cleanly again: the copy is 5 e-Tickets behind this machine.
func oldCopy(t *testing.T, m *machine) string {
	t.Helper()
	db := m.open(t)
	issueN(t, db, "antes", 5)
	issue(t, db, cfe.EFactura, "factura-1")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	snap := m.snapshot(t, false)
	db = m.open(t)
	if got := issueN(t, db, "despues", 5); got[4] != 10 {
		t.Fatalf("numbers %v, want 6..10", got)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return snap
}

// TestWitness_OlderCopyHolds is issue 28's copy-back: the data directory
// (store and journal together) is copied after ..A-10 are signed,
// and the copy is put back. The journal in the copy cannot tell; the
// witness can: the e-Tickets are held (05, the reason naming the marks)
// until the hosted service's numbers or a technician settle them, and
// numbering then resumes above A-10. The e-Facturas, which the copy is not
// behind on, sign on.
func TestWitness_OlderCopyHolds(t *testing.T) {
	t.Parallel()
	heldCopy := func(t *testing.T) (*machine, *store.DB) {
		m := newMachine(t)
		m.restore(t, oldCopy(t, m))
		db := m.open(t)
		h := db.NumberingHold()
		if h == nil {
			t.Fatal("an older copy of the data directory put back is not held")
		}
		for _, want := range []string{"la carpeta de datos es una copia anterior", m.witness, "e-Ticket serie A: los datos llegan al 5 y este equipo usó hasta el 10"} {
			if !strings.Contains(h.Reason, want) {
				t.Errorf("hold reason %q lacks %q", h.Reason, want)
			}
		}
		refusedWith(t, db, cfe.ETicket, "no se puede numerar e-Ticket serie A", "«cfe-agent cae used-elsewhere 101 A 10 --reason …»")
		if st := db.WitnessStatus(); st == nil || !st.Found || !st.OlderCopy || st.Problem != "" {
			t.Errorf("WitnessStatus = %+v", st)
		}
		evs, err := db.AuditEvents(ctx, 1, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if !hasEvent(evs, store.AuditNumberingHeld, "older copy than the numbering witness") {
			t.Errorf("no %s event naming the witness: %+v", store.AuditNumberingHeld, evs)
		}
		// The e-Facturas are not behind: they sign on, from the copy's
		// next number.
		if f := issue(t, db, cfe.EFactura, "factura-2"); f.Nro != 2 {
			t.Errorf("e-Factura %d, want 2", f.Nro)
		}
		return m, db
	}

	t.Run("held across restarts, settled by the hosted service", func(t *testing.T) {
		t.Parallel()
		m, db := heldCopy(t)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		db = m.open(t)
		refusedWith(t, db, cfe.ETicket, "copia anterior")
		// The service holds only A-8 (A-9 and A-10 were not delivered yet):
		// the witness's mark still wins.
		if err := db.ResumeNumbering(ctx, "el servicio", []cfe.LastNumber{{Type: cfe.ETicket, Serie: "A", Last: 8}}); err != nil {
			t.Fatal(err)
		}
		if h := db.NumberingHold(); h != nil {
			t.Fatalf("hold after the service answered: %+v", h)
		}
		if n := issue(t, db, cfe.ETicket, "nuevo").Nro; n != 11 {
			t.Errorf("next e-Ticket A-%d, want A-11", n)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		db = m.open(t)
		if h := db.NumberingHold(); h != nil {
			t.Fatalf("the hold came back once settled: %+v", h)
		}
		if n := nextNumber(t, db); n != 12 {
			t.Errorf("next e-Ticket A-%d after a restart, want A-12", n)
		}
	})
	t.Run("the service knows more than the witness", func(t *testing.T) {
		t.Parallel()
		_, db := heldCopy(t)
		if err := db.ResumeNumbering(ctx, "el servicio", []cfe.LastNumber{{Type: cfe.ETicket, Serie: "A", Last: 14}}); err != nil {
			t.Fatal(err)
		}
		if n := nextNumber(t, db); n != 15 {
			t.Errorf("next e-Ticket A-%d, want A-15", n)
		}
	})
	t.Run("settled by a technician with the witness's number", func(t *testing.T) {
		t.Parallel()
		m, db := heldCopy(t)
		err := db.MarkUsedElsewhere(ctx, cfe.ETicket, "A", 7, "el técnico cree que fue el 7")
		if ce := wantCode(t, err, cfe.EINVALID); !strings.Contains(ce.Message, "ya usó hasta el 10") {
			t.Errorf("a number below the witness's: %q", ce.Message)
		}
		refusedWith(t, db, cfe.ETicket, "copia anterior")
		if err := db.MarkUsedElsewhere(ctx, cfe.ETicket, "A", 10, "el testigo registra hasta el 10"); err != nil {
			t.Fatal(err)
		}
		if h := db.NumberingHold(); h != nil {
			t.Fatalf("the only serie behind was settled and the hold remains: %+v", h)
		}
		if n := issue(t, db, cfe.ETicket, "nuevo").Nro; n != 11 {
			t.Errorf("next e-Ticket A-%d, want A-11", n)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		db = m.open(t)
		if h := db.NumberingHold(); h != nil {
			t.Fatalf("the hold came back once settled: %+v", h)
		}
	})
	t.Run("settled by a technician with 0", func(t *testing.T) {
		t.Parallel()
		_, db := heldCopy(t)
		if err := db.MarkUsedElsewhere(ctx, cfe.ETicket, "A", 0, "ningún otro sistema"); err != nil {
			t.Fatal(err)
		}
		if n := nextNumber(t, db); n != 11 {
			t.Errorf("next e-Ticket A-%d, want A-11 (0 settles at the witness's mark)", n)
		}
	})
	t.Run("a technician knows more than the witness", func(t *testing.T) {
		t.Parallel()
		_, db := heldCopy(t)
		if err := db.MarkUsedElsewhere(ctx, cfe.ETicket, "A", 20, "otra caja usó hasta el 20"); err != nil {
			t.Fatal(err)
		}
		if n := nextNumber(t, db); n != 21 {
			t.Errorf("next e-Ticket A-%d, want A-21", n)
		}
	})
}

// TestWitness_OlderCopyWithinABlock: a copy taken while the agent ran,
// within a block the journal had reserved; the agent then signed on in that
// block (no journal write for those numbers) and crossed a block of another
// type, and was stopped by a crash. The copy's journal has the same marks as
// the witness for the serie it is behind on: only the witness's generation
// tells, and the serie still resumes above its reserved mark, never at the
// copy's next number (which the lost data signed).
func TestWitness_OlderCopyWithinABlock(t *testing.T) {
	t.Parallel()
	m := newMachine(t)
	db := m.open(t)
	issueN(t, db, "a", 3)
	for i := range 3 {
		issue(t, db, cfe.EFactura, fmt.Sprint("f", i))
	}
	inBlock := m.snapshot(t, false) // e-Ticket A-3 of the block 1-10
	issueN(t, db, "b", 2)           // no journal write
	for i := range 9 {
		issue(t, db, cfe.EFactura, fmt.Sprint("g", i)) // e-Factura 4..12: a new block
	}
	crashed := m.snapshot(t, true) // a crash: no clean Close
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	m.restore(t, crashed)
	if w := marksOf(readWitnessJSON(t, m.witness)); w["101-A"] != "0/10" || w["111-A"] != "10/20" {
		t.Fatalf("the witness after the crash: %v", w)
	}
	m.restore(t, inBlock)
	db = m.open(t)
	if st := db.WitnessStatus(); !st.OlderCopy {
		t.Fatalf("an older copy within a block was not found: %+v", st)
	}
	refusedWith(t, db, cfe.ETicket, "e-Ticket serie A: los datos llegan al 3 y este equipo usó hasta el 0 y pudo usar hasta el 10",
		"used-elsewhere 101 A 10")
	refusedWith(t, db, cfe.EFactura, "e-Factura serie A: los datos llegan al 3 y este equipo usó hasta el 10 y pudo usar hasta el 20")
	if err := db.ResumeNumbering(ctx, "el servicio", nil); err != nil { // the service had received nothing
		t.Fatal(err)
	}
	if n := nextOf(t, db, cfe.ETicket); n != 11 {
		t.Errorf("next e-Ticket A-%d, want A-11 (A-4 and A-5 were signed after the copy)", n)
	}
	if n := nextOf(t, db, cfe.EFactura); n != 21 {
		t.Errorf("next e-Factura A-%d, want A-21", n)
	}
}

// TestWitness_NoFalseHold: what a crash, a power cut or an intact restart
// leaves is never taken for an older copy.
func TestWitness_NoFalseHold(t *testing.T) {
	t.Parallel()
	noHold := func(t *testing.T, m *machine, wantNext int64) {
		t.Helper()
		db := m.open(t)
		if h := db.NumberingHold(); h != nil {
			t.Fatalf("held: %+v", h)
		}
		if st := db.WitnessStatus(); st.OlderCopy || st.Problem != "" {
			t.Errorf("WitnessStatus = %+v", st)
		}
		if n := nextNumber(t, db); n != wantNext {
			t.Errorf("next e-Ticket A-%d, want A-%d", n, wantNext)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("clean restarts", func(t *testing.T) {
		t.Parallel()
		m := newMachine(t)
		for i := range 3 {
			db := m.open(t)
			issueN(t, db, fmt.Sprint("r", i), 4)
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
		}
		noHold(t, m, 13)
	})
	t.Run("a crash", func(t *testing.T) {
		t.Parallel()
		m := newMachine(t)
		db := m.open(t)
		issueN(t, db, "a", 13)
		crashed := m.snapshot(t, true)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		m.restore(t, crashed)
		noHold(t, m, 14)
		// And a crash right after the restart's first journal write (the
		// exact counters, below the reserved mark the witness still has).
		db = m.open(t)
		crashed = m.snapshot(t, true)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		m.restore(t, crashed)
		noHold(t, m, 14)
	})
	t.Run("a crash between the journal's write and the witness's", func(t *testing.T) {
		t.Parallel()
		m := newMachine(t)
		db := m.open(t)
		issueN(t, db, "a", 9)
		before := m.snapshot(t, true)
		issueN(t, db, "b", 3) // a block written to the journal and the witness
		after := m.snapshot(t, false)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		m.restore(t, before)
		m.restore(t, after) // the journal and store of after, the witness of before
		noHold(t, m, 13)
	})
	t.Run("a crash before a serie's first commit, then restarts", func(t *testing.T) {
		t.Parallel()
		// The killed agent's journal and witness reserved a block of
		// e-Facturas for its first one, whose transaction never reached
		// the store. The restart's journal names no e-Factura (the store
		// has none) while the witness keeps that serie's marks, at the
		// same generation: neither that restart nor the next one is an
		// older copy (TestWitness_KilledNeverHolds held at the second).
		m := newMachine(t)
		db := m.open(t)
		issueN(t, db, "a", 3)
		before := m.snapshot(t, false)
		issue(t, db, cfe.EFactura, "f-1") // e-Factura reserved 10 in the journal and the witness
		killed := m.snapshot(t, true)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		m.restore(t, killed)
		// The store (file and commit log) without the e-Factura.
		wal := store.WALPaths(m.store)
		for name, dst := range map[string]string{"store": m.store, "wal0": wal[0], "wal1": wal[1]} {
			if _, err := os.Stat(filepath.Join(before, name)); err != nil {
				_ = os.Remove(dst)
				continue
			}
			testtool.CopyFile(t, filepath.Join(before, name), dst)
		}
		noHold(t, m, 4)
		noHold(t, m, 4)
		db = m.open(t)
		if n := nextOf(t, db, cfe.EFactura); n != 1 {
			t.Errorf("next e-Factura A-%d, want A-1 (none was acknowledged)", n)
		}
	})
	t.Run("a crash while Open rewrote the journal", func(t *testing.T) {
		t.Parallel()
		m := newMachine(t)
		db := m.open(t)
		issueN(t, db, "a", 5)
		crashed := m.snapshot(t, true) // reserved 10, witness the same
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		m.restore(t, crashed)
		db = m.open(t) // journal 5/5 then witness 5/5
		afterOpen := m.snapshot(t, false)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		m.restore(t, crashed)   // witness 0/10
		m.restore(t, afterOpen) // journal 5/5, one generation ahead
		noHold(t, m, 6)
	})
	t.Run("the store file alone put back: the journal raises it", func(t *testing.T) {
		t.Parallel()
		m := newMachine(t)
		db := m.open(t)
		issueN(t, db, "a", 3)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		afterA3 := m.snapshot(t, false)
		db = m.open(t)
		issueN(t, db, "b", 2)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		testtool.CopyFile(t, filepath.Join(afterA3, "store"), m.store)
		noHold(t, m, 6)
	})
	t.Run("an older copy that no serie is behind: reported, not held", func(t *testing.T) {
		t.Parallel()
		m := newMachine(t)
		db := m.open(t)
		issueN(t, db, "a", 5)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		snap := m.snapshot(t, false)
		db = m.open(t) // started and stopped without signing: two generations more, the same marks
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		m.restore(t, snap)
		db = m.open(t)
		if h := db.NumberingHold(); h != nil {
			t.Fatalf("held: %+v", h)
		}
		st := db.WitnessStatus()
		if !st.OlderCopy || len(st.Detail) != 1 || !strings.Contains(st.Detail[0], "generation") || !strings.Contains(st.Detail[0], "nothing held") {
			t.Errorf("WitnessStatus = %+v, want the older copy reported", st)
		}
		if n := nextNumber(t, db); n != 6 {
			t.Errorf("next e-Ticket A-%d, want A-6", n)
		}
	})
	t.Run("a block reserved for a number whose commit failed, then a restart", func(t *testing.T) {
		m := newMachine(t)
		db := m.open(t)
		issue(t, db, cfe.ETicket, "repetido")
		// The e-Factura's block is written to the journal (and the witness)
		// before its transaction, which then refuses the repeated uuid:
		// nothing committed, and the next journal (exact counters) no longer
		// names the serie.
		r := reserve(t, db, cfe.EFactura)
		wantCode(t, db.Commit(ctx, r, issuedFor(r, "repetido", signAt)), cfe.ECONFLICT)
		if got := marksOf(readWitnessJSON(t, m.witness))["111-A"]; got != "0/10" {
			t.Fatalf("the witness's e-Factura marks after the failed commit: %q, want 0/10", got)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		db = m.open(t)
		if h := db.NumberingHold(); h != nil {
			t.Fatalf("held: %+v", h)
		}
		if n := nextOf(t, db, cfe.EFactura); n != 1 {
			t.Errorf("next e-Factura %d, want 1", n)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("no witness yet: signs from the start", func(t *testing.T) {
		t.Parallel()
		m := newMachine(t)
		noHold(t, m, 1)
		if _, err := os.Stat(m.witness); err != nil {
			t.Errorf("Open wrote no witness: %v", err)
		}
	})
	t.Run("an upgrade: a journal without generations, no witness", func(t *testing.T) {
		t.Parallel()
		m := newMachine(t)
		db := openAt(t, m.store, store.Options{Journal: m.journal})
		putRanges(t, db, witnessRanges...)
		issueN(t, db, "a", 4)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		j := readWitnessJSON(t, m.journal)
		delete(j, "generation")
		b, _ := json.Marshal(j)
		if err := os.WriteFile(m.journal, b, 0o600); err != nil {
			t.Fatal(err)
		}
		noHold(t, m, 5)
		noHold(t, m, 5)
	})
}

// TestWitness_DataDirectoryLost: a data directory with neither journal nor
// numbers (lost, or made anew on purpose on this machine) resumes above the
// witness's marks, as a store resumes above its journal; with the journal's
// folder left and a hosted service it is held as before, the witness's marks
// bounding the settlement.
func TestWitness_DataDirectoryLost(t *testing.T) {
	t.Parallel()
	lose := func(t *testing.T, m *machine, clean bool) {
		t.Helper()
		db := m.open(t)
		issueN(t, db, "a", 5)
		snap := m.snapshot(t, true)
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		if !clean {
			m.restore(t, snap)
		}
		if err := os.RemoveAll(filepath.Dir(filepath.Dir(filepath.Dir(m.store)))); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("after a clean stop", func(t *testing.T) {
		t.Parallel()
		m := newMachine(t)
		lose(t, m, true)
		db := m.open(t)
		if h := db.NumberingHold(); h != nil {
			t.Fatalf("held: %+v", h)
		}
		if n := nextNumber(t, db); n != 6 {
			t.Errorf("next e-Ticket A-%d, want A-6", n)
		}
		if r := db.ResumedAtOpen(); len(r) != 1 || !strings.Contains(r[0], "numbering witness") || !strings.Contains(r[0], "counter 0 raised to 5") {
			t.Errorf("ResumedAtOpen = %q", r)
		}
		if n := nextOf(t, db, cfe.EFactura); n != 1 {
			t.Errorf("next e-Factura %d, want 1 (the witness has none)", n)
		}
	})
	t.Run("after a crash: above the reserved block", func(t *testing.T) {
		t.Parallel()
		m := newMachine(t)
		lose(t, m, false)
		db := m.open(t)
		if n := nextNumber(t, db); n != 11 {
			t.Errorf("next e-Ticket A-%d, want A-11", n)
		}
	})
	t.Run("the journal's folder left, a hosted service: held, the witness bounds the technician", func(t *testing.T) {
		t.Parallel()
		m := newMachine(t)
		lose(t, m, true)
		if err := os.MkdirAll(filepath.Dir(m.journal), 0o700); err != nil {
			t.Fatal(err)
		}
		o := m.opts()
		o.HoldWithoutJournal = true
		db := openAt(t, m.store, o)
		putRanges(t, db, witnessRanges...)
		refusedWith(t, db, cfe.ETicket, "no se sabe por qué número sigue la numeración", "used-elsewhere 101 A 5")
		refusedWith(t, db, cfe.EFactura, "no se sabe por qué número sigue la numeración", "cfe-agent cae used-elsewhere")
		wantCode(t, db.MarkUsedElsewhere(ctx, cfe.ETicket, "A", 3, "creo que el 3"), cfe.EINVALID)
		if err := db.MarkUsedElsewhere(ctx, cfe.ETicket, "A", 5, "el testigo"); err != nil {
			t.Fatal(err)
		}
		if err := db.MarkUsedElsewhere(ctx, cfe.EFactura, "A", 0, "sin e-Facturas"); err != nil {
			t.Fatal(err)
		}
		if h := db.NumberingHold(); h != nil {
			t.Fatalf("hold after every serie was settled: %+v", h)
		}
		if n := nextNumber(t, db); n != 6 {
			t.Errorf("next e-Ticket A-%d, want A-6", n)
		}
	})
}

// TestWitness_Damaged: a witness that cannot be read is set aside with a
// warning and written again; one that cannot be written is reported. The
// agent signs in both cases: the witness never stops a till.
func TestWitness_Damaged(t *testing.T) {
	t.Parallel()
	for name, content := range map[string]string{
		"not JSON":          `{"version": 1, "sequ`,
		"another profile's": `{"version": 1, "ruc": "219999830019", "environment": "test", "profile": "caja2", "generation": 9, "sequences": []}`,
		"impossible marks":  `{"version": 1, "ruc": "219999830019", "environment": "test", "profile": "caja1", "generation": 9, "sequences": [{"tipo": 101, "serie": "A", "committed": 9, "reserved": 3}]}`,
		"a version to come": `{"version": 7}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m := newMachine(t)
			if err := os.MkdirAll(filepath.Dir(m.witness), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(m.witness, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			db := m.open(t)
			st := db.WitnessStatus()
			if st == nil || st.SetAside == "" || !strings.Contains(st.Problem, "estaba dañado") || !strings.Contains(st.Problem, st.SetAside) {
				t.Fatalf("WitnessStatus = %+v", st)
			}
			if b, err := os.ReadFile(st.SetAside); err != nil || string(b) != content {
				t.Errorf("the damaged witness was not kept as %s: %q, %v", st.SetAside, b, err)
			}
			if h := db.NumberingHold(); h != nil {
				t.Fatalf("held: %+v", h)
			}
			issueN(t, db, "a", 2)
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			if got := marksOf(readWitnessJSON(t, m.witness))["101-A"]; got != "2/2" {
				t.Errorf("the new witness: %s, want 2/2", got)
			}
		})
	}
	t.Run("cannot be read", func(t *testing.T) {
		t.Parallel()
		m := newMachine(t)
		if err := os.MkdirAll(m.witness, 0o700); err != nil { // a folder where the file should be
			t.Fatal(err)
		}
		db := m.open(t)
		if st := db.WitnessStatus(); st == nil || !strings.Contains(st.Problem, "no se pudo leer el testigo de numeración") || st.SetAside != "" {
			t.Fatalf("WitnessStatus = %+v", st)
		}
		if got := issueN(t, db, "a", 2); got[1] != 2 {
			t.Errorf("numbers %v", got)
		}
		if fi, err := os.Stat(m.witness); err != nil || !fi.IsDir() {
			t.Errorf("what stood in the witness's place was touched: %v, %v", fi, err)
		}
	})
	t.Run("cannot be written", func(t *testing.T) {
		t.Parallel()
		m := newMachine(t)
		blocker := filepath.Join(t.TempDir(), "un-archivo")
		if err := os.WriteFile(blocker, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		m.witness = filepath.Join(blocker, "witness", "caja1.json") // below a file: no one can make it
		db := m.open(t)
		if st := db.WitnessStatus(); st == nil || !strings.Contains(st.Problem, "no se pudo escribir el testigo de numeración") {
			t.Fatalf("WitnessStatus = %+v", st)
		}
		if got := issueN(t, db, "a", 12); got[11] != 12 {
			t.Errorf("numbers %v", got)
		}
	})
}

// TestWitness_SeveralProfiles: profiles, environments and companies on one
// machine share the witness folder, each with its own file: one's numbers
// never hold or raise another's.
func TestWitness_SeveralProfiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keys := []store.WitnessKey{{RUC: "219999830019", Environment: "test", Profile: "caja1"},
		{RUC: "219999830019", Environment: "test", Profile: "caja2"},
		{RUC: "219999830019", Environment: "produccion", Profile: "caja1"},
		{RUC: "210000000017", Environment: "test", Profile: "caja1"}}
	seen := map[string]bool{}
	for i, k := range keys {
		m := newMachine(t)
		m.key, m.witness = k, store.WitnessFile(dir, k)
		if seen[m.witness] {
			t.Fatalf("two keys share the witness file %s", m.witness)
		}
		seen[m.witness] = true
		db := m.open(t)
		if n := nextNumber(t, db); n != 1 {
			t.Errorf("%+v: next A-%d, want A-1", k, n)
		}
		issueN(t, db, "a", 3*(i+1))
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for i, k := range keys {
		if got := marksOf(readWitnessJSON(t, store.WitnessFile(dir, k)))["101-A"]; got != fmt.Sprintf("%d/%d", 3*(i+1), 3*(i+1)) {
			t.Errorf("%+v: witness %s", k, got)
		}
	}
	if p := store.WitnessFile(dir, store.WitnessKey{RUC: "../x", Environment: "test", Profile: ".."}); !strings.HasPrefix(p, dir) {
		t.Errorf("a key with path elements names %s, outside %s", p, dir)
	}
}

// TestRestore_Witness: the witness is one more bound of the numbers used
// since a backup: with the data directory lost (no journal, no store), a
// backup taken after A-3 (its journal's block reserved up to A-10) is
// refused against the witness's A-18 until a technician confirms, and
// numbering then resumes above it.
func TestRestore_Witness(t *testing.T) {
	t.Parallel()
	m := newMachine(t)
	db := m.open(t)
	issueN(t, db, "a", 3)
	backup := filepath.Join(t.TempDir(), "copia.db")
	if _, err := db.Backup(ctx, backup, store.BackupMeta{Profile: "caja1", Environment: "test", RUC: m.key.RUC}, store.RecordChecks{}); err != nil {
		t.Fatal(err)
	}
	issueN(t, db, "b", 15)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{m.store, m.journal} {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	o := store.RestoreOptions{Backup: backup, Store: m.store, Journal: m.journal, Witness: m.witness, WitnessKey: m.key,
		Meta: store.BackupMeta{Profile: "caja1", Environment: "test", RUC: m.key.RUC}}
	_, err := store.Restore(ctx, o)
	if ce := wantCode(t, err, cfe.ECONFLICT); !strings.Contains(ce.Message, "la copia llega al 3 y se usaron hasta el 18 (testigo de numeración de este equipo)") ||
		!strings.Contains(ce.Message, "--confirmar-numeros-usados 101:A:18") {
		t.Fatalf("restore behind the witness: %q", ce.Message)
	}
	o.Confirmed = []cfe.LastNumber{{Type: cfe.ETicket, Serie: "A", Last: 18}}
	if _, err := store.Restore(ctx, o); err != nil {
		t.Fatal(err)
	}
	db = m.open(t)
	if h := db.NumberingHold(); h != nil {
		t.Fatalf("held after the restore: %+v", h)
	}
	if n := nextNumber(t, db); n != 19 {
		t.Errorf("next e-Ticket A-%d after the restore, want A-19", n)
	}
}

// TestWitness_KilledNeverHolds kills a committing agent that keeps a journal
// and a witness at random moments (killPoint; once it has acknowledged some,
// so that the last round's data directory has something to lose):
// reopened, the data directory is never
// taken for an older copy (no hold, numbering right after what the store
// holds); and once the data directory is lost after a kill, numbering
// resumes above every number the killed agent acknowledged, skipping at most
// a block and the CFEs in flight.
func TestWitness_KilledNeverHolds(t *testing.T) {
	t.Parallel()
	rounds := 6
	if testing.Short() {
		rounds = 3
	}
	storePath, journalPath := journalDirs(t)
	if err := os.MkdirAll(filepath.Dir(storePath), 0o700); err != nil {
		t.Fatal(err)
	}
	witness := store.WitnessFile(t.TempDir(), crashWitnessKey)
	opts := store.Options{Journal: journalPath, JournalBlock: crashJournalBlock, Witness: witness, WitnessKey: crashWitnessKey}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rnd := rand.New(rand.NewPCG(seed, 0))
	highest := map[cfe.Type]int64{}
	busy := 0
	for round := range rounds {
		lines, stderr := runAndKill(t, storePath, fmt.Sprint("wrun", round), killPoint(rnd, false),
			"CFE_STORE_TEST_JOURNAL="+journalPath, "CFE_STORE_TEST_WITNESS="+witness)
		if stderr != "" {
			t.Fatalf("round %d: agent reported: %s", round, stderr)
		}
		if len(lines) > 0 {
			busy++
		}
		for _, a := range lines {
			highest[a.typ] = max(highest[a.typ], a.nro)
		}
		last := round == rounds-1
		if last {
			// The data directory is lost right after the kill: only the
			// witness is left.
			for _, f := range []string{storePath, journalPath} {
				if err := os.Remove(f); err != nil {
					t.Fatal(err)
				}
			}
		}
		db, err := store.Open(storePath, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range crashRanges {
			if err := db.PutRange(ctx, r); err != nil && cfe.ErrorCode(err) != cfe.ECONFLICT {
				t.Fatal(err)
			}
		}
		if h := db.NumberingHold(); h != nil {
			t.Fatalf("round %d: held after a kill: %+v", round, h)
		}
		if st := db.WitnessStatus(); st.OlderCopy || st.Problem != "" {
			t.Fatalf("round %d: WitnessStatus after a kill = %+v", round, st)
		}
		st, err := db.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for typ, top := range highest {
			r, err := db.Reserve(ctx, typ, today)
			if err != nil {
				t.Fatal(err)
			}
			db.Release(r)
			switch {
			case !last && r.Nro != st.ByType[typ]+1:
				t.Fatalf("round %d, type %d: %d CFEs stored, next number %d", round, typ, st.ByType[typ], r.Nro)
			case last && (r.Nro <= top || r.Nro > top+crashJournalBlock+64):
				t.Fatalf("round %d, type %d: the killed agent acknowledged up to %d; with only the witness left the next number is %d", round, typ, top, r.Nro)
			}
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d kills, %d while committing; acknowledged up to e-Ticket A-%d and e-Factura A-%d", rounds, busy, highest[cfe.ETicket], highest[cfe.EFactura])
	if busy == 0 {
		t.Fatal("no round acknowledged anything: the kills did not hit committing agents")
	}
}
