package store_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/store"
)

// tenSigned makes a store holding e-Tickets A-1..A-10 (uuids q-01..q-10),
// all pending, closed, and returns the store's and the journal's paths and
// the CFEs as committed.
func tenSigned(t *testing.T) (path, journal string, docs []*cfe.Issued) {
	t.Helper()
	path, journal = journalDirs(t)
	db := openAt(t, path, store.Options{Journal: journal})
	putRanges(t, db, newRange(cfe.ETicket, "A", 1, 1000, farAway))
	for i := range 10 {
		docs = append(docs, issue(t, db, cfe.ETicket, fmt.Sprintf("q-%02d", i+1)))
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return path, journal, docs
}

// pendingUUIDs returns the uuids PendingOutbox(limit) answers.
func pendingUUIDs(t *testing.T, db *store.DB, limit int) []string {
	t.Helper()
	list, err := db.PendingOutbox(ctx, limit)
	if err != nil {
		t.Fatalf("PendingOutbox: %v", err)
	}
	return uuids(list)
}

// except returns q-01..q-10 without the given ones.
func except(skip ...string) []string {
	var out []string
	for i := range 10 {
		if u := fmt.Sprintf("q-%02d", i+1); !slices.Contains(skip, u) {
			out = append(out, u)
		}
	}
	return out
}

// auditKinds counts the audit events of db by kind.
func auditKinds(t *testing.T, db *store.DB) map[string]int {
	t.Helper()
	evs, err := db.AuditEvents(ctx, 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, ev := range evs {
		n[ev.Kind]++
	}
	return n
}

// wantRecordDamaged fails unless err is the Spanish error of a stored CFE
// that cannot be read back, naming it and the way to recover it.
func wantRecordDamaged(t *testing.T, err error, name, uuid string) {
	t.Helper()
	ce := wantCode(t, err, cfe.EUNAVAILABLE)
	if !errors.Is(err, store.ErrRecordDamaged) || errors.Is(err, store.ErrDamaged) {
		t.Fatalf("error %v: want ErrRecordDamaged (and not the whole file's ErrDamaged)", err)
	}
	if ce.Respuesta != cfe.RespErrorInterno {
		t.Errorf("Respuesta %q, want %q", ce.Respuesta, cfe.RespErrorInterno)
	}
	testtool.MustContain(t, "the damaged CFE's message", ce.Message, name, "está dañado",
		"copia de seguridad", "servicio en la nube", "cfe-agent recuperar "+uuid, "su número sigue usado")
}

// TestDB_PendingOutbox_Quarantine is issue 28 item 3 in the store: one
// stored CFE whose XML no longer decompresses, and one whose record no longer
// decodes, among ten pending. The outbox answers the other eight in commit
// order, moves the two to the quarantine (durably: a reopen finds them there
// without writing again), and never hands their numbers out again; reads of
// them answer a clear error and the lists still show them.
func TestDB_PendingOutbox_Quarantine(t *testing.T) {
	t.Parallel()
	path, journal, _ := tenSigned(t)
	testtool.DamageStoredCFE(t, path, "q-04", testtool.StoredXML)
	testtool.DamageStoredCFE(t, path, "q-07", testtool.StoredRecord)

	since := time.Date(2026, time.March, 10, 15, 0, 0, 0, cfe.Montevideo)
	opts := store.Options{Journal: journal, Now: func() time.Time { return since }}
	db := openAt(t, path, opts)
	// The first page of three stops before either: nothing is held yet.
	if got := pendingUUIDs(t, db, 3); !slices.Equal(got, except("q-04", "q-05", "q-06", "q-07", "q-08", "q-09", "q-10")) {
		t.Fatalf("PendingOutbox(3) = %v", got)
	}
	if n := db.QuarantineCount(); n != 0 {
		t.Fatalf("QuarantineCount = %d before the outbox met a damaged CFE", n)
	}
	if got := pendingUUIDs(t, db, 100); !slices.Equal(got, except("q-04", "q-07")) {
		t.Fatalf("PendingOutbox = %v, want the eight others in commit order", got)
	}
	// A page of five goes past the held ones to five good CFEs.
	if got := pendingUUIDs(t, db, 5); !slices.Equal(got, except("q-04", "q-07", "q-08", "q-09", "q-10")) {
		t.Fatalf("PendingOutbox(5) = %v", got)
	}

	st, err := db.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Pending != 8 || st.Quarantined != 2 || len(st.Quarantine) != 2 || st.CFEs != 10 {
		t.Fatalf("Stats = %+v, want 8 pending, 2 quarantined, 10 CFEs", st)
	}
	for i, want := range []struct {
		uuid, name, reason string
	}{
		{"q-04", "e-Ticket A-4", "XML firmado"},
		{"q-07", "e-Ticket A-7", "registro"}, // the number from the number index: the record does not read
	} {
		q := st.Quarantine[i]
		if q.UUID != want.uuid || q.Name() != want.name || !q.Since.Equal(since) || !strings.Contains(q.Reason, want.reason) {
			t.Errorf("quarantined %d = %+v (%s), want %s %s since %s, reason about %q", i, q, q.Name(), want.uuid, want.name, since, want.reason)
		}
	}
	if q := st.Quarantine[0]; !q.CommittedAt.Equal(signAt) && q.CommittedAt.IsZero() {
		t.Errorf("quarantined q-04 has no commit time: %+v", q)
	}

	// Readers of them answer the clear error; the others read as before.
	_, err = db.FindByUUID(ctx, "q-04")
	wantRecordDamaged(t, err, "e-Ticket A-4", "q-04")
	_, err = db.FindByNumber(ctx, cfe.ETicket, "A", 4)
	wantRecordDamaged(t, err, "e-Ticket A-4", "q-04")
	_, err = db.FindByUUID(ctx, "q-07")
	wantRecordDamaged(t, err, "q-07", "q-07")
	_, err = db.ListByDate(ctx, today, today, 100)
	wantRecordDamaged(t, err, "q-0", "q-0") // an envelope must not silently leave one out
	if _, err := db.FindByUUID(ctx, "q-05"); err != nil {
		t.Errorf("FindByUUID of an intact CFE: %v", err)
	}
	if db.Damaged() != nil {
		t.Fatalf("one damaged record marked the whole file damaged: %v", db.Damaged())
	}

	// The recent list shows them, held.
	last, err := db.Last(ctx, 10)
	if err != nil {
		t.Fatalf("Last: %v", err)
	}
	states := map[string]string{}
	for _, is := range last {
		states[fmt.Sprintf("%s %s-%d", is.UUID, is.Serie, is.Nro)] = is.Delivery.State
	}
	if states["q-04 A-4"] != cfe.DeliveryQuarantined || states["q-07 A-7"] != cfe.DeliveryQuarantined || states["q-05 A-5"] != cfe.DeliveryPending || len(last) != 10 {
		t.Errorf("Last = %v, want q-04 and q-07 %q among 10", states, cfe.DeliveryQuarantined)
	}

	// A held CFE is not in the outbox: delivery updates refuse it.
	for name, err := range map[string]error{
		"MarkDelivered": db.MarkDelivered(ctx, "q-04", 1),
		"MarkRejected":  db.MarkRejected(ctx, "q-04", "x"),
		"RecordAttempt": db.RecordAttempt(ctx, "q-04", errors.New("x"), since),
	} {
		if cfe.ErrorCode(err) != cfe.ECONFLICT || !strings.Contains(cfe.ErrorMessage(err), "cuarentena") {
			t.Errorf("%s on a quarantined CFE: %v, want ECONFLICT saying it is quarantined", name, err)
		}
	}
	if n := auditKinds(t, db)[store.AuditQuarantined]; n != 2 {
		t.Errorf("%d quarantine audit events, want 2", n)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	// Durable: the reopened store knows them without meeting them again.
	db = openAt(t, path, opts)
	if n := db.QuarantineCount(); n != 2 {
		t.Fatalf("QuarantineCount after a reopen = %d, want 2", n)
	}
	q, err := db.Quarantined(ctx)
	if err != nil || len(q) != 2 || q[0].UUID != "q-04" || q[1].UUID != "q-07" {
		t.Fatalf("Quarantined after a reopen = %+v, %v", q, err)
	}
	if got := pendingUUIDs(t, db, 100); !slices.Equal(got, except("q-04", "q-07")) {
		t.Fatalf("PendingOutbox after a reopen = %v", got)
	}
	if n := auditKinds(t, db)[store.AuditQuarantined]; n != 2 {
		t.Errorf("%d quarantine audit events after a reopen, want still 2", n)
	}
	// Their numbers stay used: the next e-Ticket is A-11.
	if doc := issue(t, db, cfe.ETicket, "q-11"); doc.Nro != 11 {
		t.Fatalf("the next e-Ticket got number %d, want 11", doc.Nro)
	}
	if got := pendingUUIDs(t, db, 100); !slices.Equal(got, append(except("q-04", "q-07"), "q-11")) {
		t.Fatalf("PendingOutbox after a new CFE = %v", got)
	}
}

// TestDB_PendingOutbox_DamagedEntry: only the outbox entry of a CFE is
// damaged (its uuid no longer reads). The CFE is found through its signed
// XML's number and delivered in its place; delivering it clears the entry.
func TestDB_PendingOutbox_DamagedEntry(t *testing.T) {
	t.Parallel()
	path, journal, _ := tenSigned(t)
	testtool.DamageStoredCFE(t, path, "q-01", testtool.StoredEntry)
	db := openAt(t, path, store.Options{Journal: journal})
	if _, err := db.Stats(ctx); err != nil {
		t.Fatalf("Stats with the first outbox entry damaged: %v", err)
	}
	if got := pendingUUIDs(t, db, 100); !slices.Equal(got, except()) {
		t.Fatalf("PendingOutbox = %v, want all ten in order", got)
	}
	if err := db.MarkDelivered(ctx, "q-01", 77); err != nil {
		t.Fatal(err)
	}
	if got := pendingUUIDs(t, db, 100); !slices.Equal(got, except("q-01")) || db.QuarantineCount() != 0 {
		t.Fatalf("after delivering it: PendingOutbox = %v, quarantined %d", got, db.QuarantineCount())
	}
}

// TestDB_Rejected_Damaged: a refused CFE that cannot be read back makes the
// rejected list answer its clear error.
func TestDB_Rejected_Damaged(t *testing.T) {
	t.Parallel()
	path, journal, _ := tenSigned(t)
	db := openAt(t, path, store.Options{Journal: journal})
	if err := db.MarkRejected(ctx, "q-02", "rechazado en la prueba"); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	testtool.DamageStoredCFE(t, path, "q-02", testtool.StoredXML)
	db = openAt(t, path, store.Options{Journal: journal})
	_, err := db.Rejected(ctx, 10)
	wantRecordDamaged(t, err, "e-Ticket A-2", "q-02")
}

// TestDB_Backup_RefusesWhileQuarantined: a backup taken while a CFE is held
// in quarantine would carry its damage: it is refused, naming the CFE and
// the command that recovers it (not a CFE "that would never be sent").
func TestDB_Backup_RefusesWhileQuarantined(t *testing.T) {
	t.Parallel()
	path, journal, _ := tenSigned(t)
	testtool.DamageStoredCFE(t, path, "q-04", testtool.StoredXML)
	db := openAt(t, path, store.Options{Journal: journal})
	if got := pendingUUIDs(t, db, 100); !slices.Equal(got, except("q-04")) {
		t.Fatalf("pending %v, want %v", got, except("q-04"))
	}
	out := filepath.Join(t.TempDir(), "copia.db")
	_, err := db.Backup(ctx, out, store.BackupMeta{Profile: "p", Environment: "sandbox", RUC: "219999830019"}, store.RecordChecks{})
	if err == nil {
		t.Fatal("a backup of a store with a quarantined CFE was taken")
	}
	testtool.MustContain(t, "the refusal", cfe.ErrorMessage(err), "e-Ticket serie A número 4", "está dañado y en cuarentena", "cfe-agent recuperar q-04")
	if strings.Contains(cfe.ErrorMessage(err), "no se enviaría nunca") {
		t.Errorf("the refusal says the CFE would never be sent: %s", cfe.ErrorMessage(err))
	}
	if _, serr := os.Stat(out); !errors.Is(serr, fs.ErrNotExist) {
		t.Errorf("a refused backup left %s (stat: %v)", out, serr)
	}
}
