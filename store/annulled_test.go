package store_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/store"
)

var allDays = [2]cfe.Date{{Year: 2000, Month: 1, Day: 1}, {Year: 2099, Month: 12, Day: 31}}

func annulledOf(t testing.TB, db *store.DB) []cfe.AnnulledRange {
	t.Helper()
	a, err := db.Annulled(ctx, allDays[0], allDays[1])
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// accountFor fails t when a number of (typ, serie) from 1 to the serie's
// last number is neither in issued (every number any incarnation of the
// store signed) nor annulled, or is both outside allowBoth.
func accountFor(t testing.TB, db *store.DB, typ cfe.Type, serie string, issued map[int64]bool, allowBoth map[int64]bool) {
	t.Helper()
	annulled := map[int64]string{}
	for _, a := range annulledOf(t, db) {
		if a.Type != typ || a.Serie != serie {
			continue
		}
		for n := a.From; n <= a.To; n++ {
			if prev, dup := annulled[n]; dup && a.Reason != cfe.AnnulDGIRejected && prev != cfe.AnnulDGIRejected {
				t.Errorf("%d %s-%d annulled twice (%s and %s)", typ, serie, n, prev, a.Reason)
			}
			annulled[n] = a.Reason
		}
	}
	last := db.LastNumber(typ, serie)
	if last == 0 {
		t.Fatalf("%d %s: no number used", typ, serie)
	}
	for n := int64(1); n <= last; n++ {
		_, ann := annulled[n]
		switch {
		case !issued[n] && !ann:
			t.Errorf("%d %s-%d is inside the used range (1-%d) but neither issued nor annulled", typ, serie, n, last)
		case issued[n] && ann && annulled[n] != cfe.AnnulDGIRejected && !allowBoth[n]:
			t.Errorf("%d %s-%d is issued and annulled (%s)", typ, serie, n, annulled[n])
		}
	}
	for n := range annulled {
		if n > last && annulled[n] != cfe.AnnulTechnician {
			t.Errorf("%d %s-%d annulled (%s) above the last number %d", typ, serie, n, annulled[n], last)
		}
	}
}

func issueNumbers(t testing.TB, db *store.DB, typ cfe.Type, prefix string, n int, into map[int64]bool) []int64 {
	t.Helper()
	var out []int64
	for i := range n {
		d := issue(t, db, typ, fmt.Sprintf("%s-%d", prefix, i))
		if into[d.Nro] {
			t.Fatalf("number %d signed twice", d.Nro)
		}
		into[d.Nro] = true
		out = append(out, d.Nro)
	}
	return out
}

// TestDB_AnnulNumbers: the technician voids unused numbers; numbering
// skips them, before and after a restart; what cannot be voided is refused
// with nothing changed.
func TestDB_AnnulNumbers(t *testing.T) {
	t.Parallel()
	storePath, journalPath := journalDirs(t)
	now := time.Date(2026, 3, 14, 15, 0, 0, 0, cfe.Montevideo)
	opts := store.Options{Journal: journalPath, Now: func() time.Time { return now }}
	db := openAt(t, storePath, opts)
	rng := newRange(cfe.ETicket, "A", 1, 50, farAway)
	putRanges(t, db, rng)
	issued := map[int64]bool{}
	issueNumbers(t, db, cfe.ETicket, "a", 3, issued)

	void := func(from, to int64, note string) error {
		return db.AnnulNumbers(ctx, cfe.AnnulledRange{Type: cfe.ETicket, Serie: "A", From: from, To: to, Note: note})
	}
	if err := void(6, 8, "rollo de papel dañado"); err != nil {
		t.Fatal(err)
	}
	refusals := []struct {
		from, to int64
		note     string
		want     string
	}{
		{2, 4, "x", "ya están usados"},
		{8, 9, "x", "ya están anulados"},
		{49, 51, "x", "no están dentro de un rango CAE"},
		{10, 12, " ", "motivo"},
		{12, 10, "x", "no es válido"},
	}
	for _, r := range refusals {
		before := annulledOf(t, db)
		err := void(r.from, r.to, r.note)
		ce := wantCode(t, err, cfe.EINVALID)
		if !strings.Contains(ce.Error(), r.want) {
			t.Errorf("void %d-%d: %q lacks %q", r.from, r.to, ce.Error(), r.want)
		}
		if after := annulledOf(t, db); len(after) != len(before) {
			t.Errorf("void %d-%d refused but changed the annulled numbers: %v", r.from, r.to, after)
		}
	}
	if err := db.AnnulNumbers(ctx, cfe.AnnulledRange{Type: 201, Serie: "A", From: 1, To: 1, Note: "x"}); cfe.ErrorCode(err) != cfe.EINVALID {
		t.Errorf("a contingency type: %v, want EINVALID", err)
	}
	// 4 and 5, then past the voided 6-8.
	if got := issueNumbers(t, db, cfe.ETicket, "b", 3, issued); got[0] != 4 || got[1] != 5 || got[2] != 9 {
		t.Fatalf("numbers after the void: %v, want 4 5 9", got)
	}
	// After a restart the voided numbers are still skipped, and the range's
	// use counts the CFEs only.
	if err := void(10, 10, "error de tipeo del técnico"); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openAt(t, storePath, opts)
	if got := issueNumbers(t, db, cfe.ETicket, "c", 1, issued); got[0] != 11 {
		t.Fatalf("after a restart the next number is %d, want 11 (10 voided)", got[0])
	}
	st, err := db.RangeStatus(ctx, today)
	if err != nil {
		t.Fatal(err)
	}
	if st[0].Used != 7 || st[0].Remaining != 39 {
		t.Errorf("range status used %d remaining %d, want 7 CFEs and 39 numbers left (4 voided)", st[0].Used, st[0].Remaining)
	}
	a := annulledOf(t, db)
	if len(a) != 2 || a[0].From != 6 || a[0].To != 8 || a[0].Reason != cfe.AnnulTechnician || a[0].Note != "rollo de papel dañado" ||
		a[0].Day != (cfe.Date{Year: 2026, Month: 3, Day: 14}) {
		t.Errorf("annulled = %+v", a)
	}
	if d, err := db.Annulled(ctx, cfe.Date{Year: 2026, Month: 3, Day: 15}, cfe.Date{Year: 2026, Month: 3, Day: 20}); err != nil || len(d) != 0 {
		t.Errorf("annulled on other days: %+v, %v", d, err)
	}
	accountFor(t, db, cfe.ETicket, "A", issued, nil)
}

// TestDB_Annulled_EveryNumberAccounted runs every way a number is skipped
// — a technician's void, cae used-elsewhere, the journal's block after a
// lost store, a restore's bound — and DGI's rejection, and checks that
// every number of each serie's used range is issued or annulled.
func TestDB_Annulled_EveryNumberAccounted(t *testing.T) {
	t.Parallel()
	const block = 10
	storePath, journalPath := journalDirs(t)
	opts := store.Options{Journal: journalPath, JournalBlock: block}
	db := openAt(t, storePath, opts)
	tck := newRange(cfe.ETicket, "A", 1, 1000, farAway)
	fac := newRange(cfe.EFactura, "B", 1, 1000, farAway)
	rem := newRange(cfe.ERemito, "C", 1, 1000, farAway)
	putRanges(t, db, tck, fac, rem)
	issuedA, issuedB, issuedC := map[int64]bool{}, map[int64]bool{}, map[int64]bool{}

	// used-elsewhere: B-1..20 were used by the previous billing software.
	if err := db.MarkUsedElsewhere(ctx, cfe.EFactura, "B", 20, "sistema anterior"); err != nil {
		t.Fatal(err)
	}
	if got := issueNumbers(t, db, cfe.EFactura, "fac", 2, issuedB); got[0] != 21 {
		t.Fatalf("e-Factura after used-elsewhere: %v", got)
	}
	// technician: C-3..4 voided ahead.
	issueNumbers(t, db, cfe.ERemito, "rem", 2, issuedC)
	if err := db.AnnulNumbers(ctx, cfe.AnnulledRange{Type: cfe.ERemito, Serie: "C", From: 3, To: 4, Note: "remitos en papel"}); err != nil {
		t.Fatal(err)
	}
	issueNumbers(t, db, cfe.ERemito, "rem2", 2, issuedC)
	issueNumbers(t, db, cfe.ETicket, "tck0", 0, issuedA)
	// DGI rejects a CFE: its number is both issued and annulled (counted
	// as annulled in the report).
	if _, err := db.DGIBegin(ctx); err != nil {
		t.Fatal(err)
	}
	pend, err := db.DGIPending(ctx, 100)
	if err != nil || len(pend) == 0 {
		t.Fatalf("pending for DGI: %v %v", pend, err)
	}
	env, err := db.DGIOpenEnvelope(ctx, pend[:1], time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.DGIRecordVerdicts(ctx, env.ID, []cfe.DGIVerdict{{Seq: env.Seqs[0], State: cfe.DGIRejected,
		Reasons: []cfe.DGIReason{{Codigo: "E07", Glosa: "Fecha"}}}}); err != nil {
		t.Fatal(err)
	}
	var rejected *cfe.AnnulledRange
	for _, a := range annulledOf(t, db) {
		if a.Reason == cfe.AnnulDGIRejected {
			rejected = &a
		}
	}
	if rejected == nil || rejected.Note != "E07 Fecha" || rejected.Day != cfe.DateOf(signAt.In(cfe.Montevideo)) {
		t.Errorf("DGI's rejection among the annulled: %+v", rejected)
	}
	accountFor(t, db, cfe.EFactura, "B", issuedB, nil)
	accountFor(t, db, cfe.ERemito, "C", issuedC, nil)

	// The journal's block: A-1..3, a clean stop, A-4 (a new block: the
	// journal says committed 3, reserved 13), then the store is lost
	// after a crash (the journal as the crash left it).
	issueNumbers(t, db, cfe.ETicket, "tck", 3, issuedA)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openAt(t, storePath, opts)
	issueNumbers(t, db, cfe.ETicket, "tck2", 1, issuedA)
	dirty := filepath.Join(t.TempDir(), "dirty.json")
	testtool.CopyFile(t, journalPath, dirty)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	lost := filepath.Join(t.TempDir(), "lost.db")
	testtool.CopyFile(t, storePath, lost)
	if err := os.Remove(storePath); err != nil {
		t.Fatal(err)
	}
	testtool.CopyFile(t, dirty, journalPath)
	db = openAt(t, storePath, opts)
	for _, r := range []cfe.CAERange{tck, fac, rem} {
		if err := db.PutRange(ctx, r); err != nil && cfe.ErrorCode(err) != cfe.ECONFLICT {
			t.Fatal(err)
		}
	}
	if got := issueNumbers(t, db, cfe.ETicket, "tck3", 1, issuedA); got[0] != 14 {
		t.Fatalf("after the lost store the next e-Ticket is %d, want 14 (above the journal's reserved 13)", got[0])
	}
	// The lost file signed A-4, above the journal's committed mark: the
	// block 4-13 is annulled although A-4 exists (docs/reporte-diario.md:
	// the technician corrects the day's report when the hosted service or
	// DGI shows it).
	accountFor(t, db, cfe.ETicket, "A", issuedA, map[int64]bool{4: true})

	// A restore's bound: the backup (A up to 14) comes back over this store
	// after another crash: the journal is reserved past what was used, the
	// technician confirms the last number used.
	backup := filepath.Join(t.TempDir(), "backup.db")
	if _, err := db.Backup(ctx, backup, backupMeta, store.RecordChecks{}); err != nil {
		t.Fatal(err)
	}
	issueNumbers(t, db, cfe.ETicket, "tck4", 1, issuedA) // A-15 (block 14-23)
	dirty2 := filepath.Join(t.TempDir(), "dirty2.json")
	testtool.CopyFile(t, journalPath, dirty2)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// The store is lost again: the restore replaces nothing, the journal as
	// the crash left it bounds what was used.
	if err := os.Remove(storePath); err != nil {
		t.Fatal(err)
	}
	testtool.CopyFile(t, dirty2, journalPath)
	res, err := store.Restore(ctx, store.RestoreOptions{Backup: backup, Store: storePath, Journal: journalPath, Meta: backupMeta,
		Confirmed: []cfe.LastNumber{{Type: cfe.ETicket, Serie: "A", Last: 15}}})
	if err != nil {
		t.Fatal(err)
	}
	_ = res
	db = openAt(t, storePath, opts)
	if got := issueNumbers(t, db, cfe.ETicket, "tck5", 1, issuedA); got[0] != 24 {
		t.Fatalf("after the restore the next e-Ticket is %d, want 24", got[0])
	}
	var restoreBound bool
	for _, a := range annulledOf(t, db) {
		if a.Reason == cfe.AnnulRestoreBound && a.Type == cfe.ETicket && a.From == 16 && a.To == 23 {
			restoreBound = true
		}
	}
	if !restoreBound {
		t.Errorf("no restore-bound annulment of A-16..23: %+v", annulledOf(t, db))
	}
	// The restored store's A-4 is the backup's own; 5-13 come back from
	// the restore's journal as the lost store's block did.
	accountFor(t, db, cfe.ETicket, "A", issuedA, map[int64]bool{4: true})
}
