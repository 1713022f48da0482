package store_test

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/store"
)

// backupOf takes a backup of the store at path (with its journal) into a new
// folder and returns it.
func backupOf(t *testing.T, path, journal string) string {
	t.Helper()
	db := openAt(t, path, store.Options{Journal: journal})
	out := filepath.Join(t.TempDir(), "copia.db")
	if _, err := db.Backup(ctx, out, store.BackupMeta{Profile: "p", Environment: "sandbox", RUC: "219999830019"}, store.RecordChecks{}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

// verifyCalls is a RepairSource.Verify that records what it was given and
// answers err.
type verifyCalls struct {
	got []*cfe.Issued
	err error
}

func (v *verifyCalls) verify(c *cfe.Issued) error {
	v.got = append(v.got, c)
	return v.err
}

// TestDB_Repair_FromBackup: a quarantined CFE is put back from a backup
// that holds it intact; it returns to the outbox ahead of every later CFE,
// reads back byte for byte, and leaves the quarantine for good. A backup
// that does not hold it, one that holds other content under its uuid, and a
// copy Verify refuses change nothing.
func TestDB_Repair_FromBackup(t *testing.T) {
	t.Parallel()
	path, journal, docs := tenSigned(t)
	backup := backupOf(t, path, journal)
	before := filepath.Join(t.TempDir(), "antes.db") // a store that never had q-04: the first three only
	{
		db := openAt(t, before, store.Options{})
		putRanges(t, db, newRange(cfe.ETicket, "A", 1, 1000, farAway))
		for i := range 3 {
			issue(t, db, cfe.ETicket, fmt.Sprintf("q-%02d", i+1))
		}
		_ = db.Close()
	}
	other := filepath.Join(t.TempDir(), "otro.db") // another store: q-04 is its A-1
	{
		db := openAt(t, other, store.Options{})
		putRanges(t, db, newRange(cfe.ETicket, "A", 1, 1000, farAway))
		issue(t, db, cfe.ETicket, "q-04")
		_ = db.Close()
	}
	testtool.DamageStoredCFE(t, path, "q-04", testtool.StoredXML)
	db := openAt(t, path, store.Options{Journal: journal})
	pendingUUIDs(t, db, 100) // meets q-04: quarantined

	refusals := []struct {
		name, backup string
		verifyErr    error
		code, says   string
	}{
		{"a backup from before its signature", before, nil, cfe.ECONFLICT, "no tiene el comprobante q-04"},
		{"another store's CFE under the same uuid", other, nil, cfe.ECONFLICT, "no tiene el mismo comprobante q-04"},
		{"a file that does not exist", filepath.Join(t.TempDir(), "no.db"), nil, cfe.ENOTFOUND, "no se puede leer la copia"},
		{"a copy whose signature does not verify", backup, cfe.Errorf(cfe.EINVALID, "la firma no verifica"), cfe.EINVALID, "la firma no verifica"},
	}
	for _, r := range refusals {
		v := &verifyCalls{err: r.verifyErr}
		_, err := db.Repair(ctx, "q-04", store.RepairSource{Backup: r.backup, Verify: v.verify})
		if cfe.ErrorCode(err) != r.code || !strings.Contains(cfe.ErrorMessage(err), r.says) {
			t.Errorf("%s: %v, want %s saying %q", r.name, err, r.code, r.says)
		}
		if db.QuarantineCount() != 1 {
			t.Fatalf("%s: the CFE left the quarantine", r.name)
		}
	}

	v := &verifyCalls{}
	res, err := db.Repair(ctx, "q-04", store.RepairSource{Backup: backup, Verify: v.verify})
	if err != nil {
		t.Fatalf("Repair from a good backup: %v", err)
	}
	if !res.Requeued || len(v.got) != 1 || !bytes.Equal(v.got[0].XML, docs[3].XML) {
		t.Fatalf("Repair = %+v, Verify saw %d copies", res, len(v.got))
	}
	sameIssued(t, res.CFE, docs[3])
	got, err := db.FindByUUID(ctx, "q-04")
	if err != nil {
		t.Fatalf("FindByUUID after the repair: %v", err)
	}
	sameIssued(t, got, docs[3])
	// Back in the outbox at its own place: first of the rest.
	if got := pendingUUIDs(t, db, 100); !slices.Equal(got, except()) {
		t.Fatalf("PendingOutbox after the repair = %v", got)
	}
	if db.QuarantineCount() != 0 || auditKinds(t, db)[store.AuditRepaired] != 1 {
		t.Fatalf("after the repair: %d quarantined, audit %v", db.QuarantineCount(), auditKinds(t, db))
	}
	_, err = db.Repair(ctx, "q-04", store.RepairSource{Backup: backup, Verify: v.verify})
	if cfe.ErrorCode(err) != cfe.ECONFLICT || !strings.Contains(cfe.ErrorMessage(err), "no hay nada que recuperar") {
		t.Errorf("a second Repair: %v, want ECONFLICT: nothing to repair", err)
	}
	if err := db.MarkDelivered(ctx, "q-04", 4004); err != nil {
		t.Fatalf("delivering the repaired CFE: %v", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = openAt(t, path, store.Options{Journal: journal})
	if got, err := db.FindByUUID(ctx, "q-04"); err != nil || got.Delivery.HostedID != 4004 {
		t.Fatalf("after a reopen: %+v, %v", got, err)
	}
}

// TestDB_Repair_Record: a CFE whose JSON record no longer decodes is put
// back whole from a backup; its delivery state must agree with where the
// live file keeps it.
func TestDB_Repair_Record(t *testing.T) {
	t.Parallel()
	path, journal, docs := tenSigned(t)
	backup := backupOf(t, path, journal)
	db := openAt(t, path, store.Options{Journal: journal})
	if err := db.MarkDelivered(ctx, "q-02", 202); err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	testtool.DamageStoredCFE(t, path, "q-02", testtool.StoredRecord) // delivered since the backup
	testtool.DamageStoredCFE(t, path, "q-09", testtool.StoredRecord) // pending
	db = openAt(t, path, store.Options{Journal: journal})
	pendingUUIDs(t, db, 100)
	v := &verifyCalls{}

	_, err := db.Repair(ctx, "q-02", store.RepairSource{Backup: backup, Verify: v.verify})
	if cfe.ErrorCode(err) != cfe.ECONFLICT || !strings.Contains(cfe.ErrorMessage(err), "use una copia más reciente") {
		t.Errorf("repairing a delivered CFE's record from a backup taken before its delivery: %v", err)
	}
	res, err := db.Repair(ctx, "q-09", store.RepairSource{Backup: backup, Verify: v.verify})
	if err != nil || !res.Requeued {
		t.Fatalf("Repair of q-09's record = %+v, %v", res, err)
	}
	got, err := db.FindByUUID(ctx, "q-09")
	if err != nil {
		t.Fatal(err)
	}
	sameIssued(t, got, docs[8])
	if got.Delivery.State != cfe.DeliveryPending {
		t.Errorf("repaired q-09 is %q, want pending", got.Delivery.State)
	}
	// The XML-only source cannot rebuild a record.
	_, err = db.Repair(ctx, "q-02", store.RepairSource{Verify: v.verify,
		Fetch: func(_ context.Context, _ *cfe.Issued) ([]byte, error) { return docs[1].XML, nil }})
	if cfe.ErrorCode(err) != cfe.ECONFLICT || !strings.Contains(cfe.ErrorMessage(err), "solo una copia de seguridad") {
		t.Errorf("repairing a damaged record from an XML: %v", err)
	}
}

// TestDB_Repair_Fetch: the hosted service's copy of the signed XML repairs
// a CFE whose record still reads; a copy of another number is refused, and
// so is one Verify refuses.
func TestDB_Repair_Fetch(t *testing.T) {
	t.Parallel()
	path, journal, docs := tenSigned(t)
	testtool.DamageStoredCFE(t, path, "q-06", testtool.StoredXML)
	db := openAt(t, path, store.Options{Journal: journal})
	pendingUUIDs(t, db, 100)
	fetch := func(xml []byte) func(context.Context, *cfe.Issued) ([]byte, error) {
		return func(_ context.Context, known *cfe.Issued) ([]byte, error) {
			if known.UUID != "q-06" || known.Nro != 6 || known.XML != nil {
				t.Errorf("Fetch was given %+v, want q-06's record without XML", known)
			}
			return xml, nil
		}
	}
	v := &verifyCalls{}
	_, err := db.Repair(ctx, "q-06", store.RepairSource{Fetch: fetch(docs[4].XML), Verify: v.verify})
	if cfe.ErrorCode(err) != cfe.ECONFLICT || !strings.Contains(cfe.ErrorMessage(err), "el número") {
		t.Errorf("A-5's XML for A-6: %v", err)
	}
	_, err = db.Repair(ctx, "q-06", store.RepairSource{Fetch: fetch(docs[5].XML),
		Verify: (&verifyCalls{err: cfe.Errorf(cfe.ECONFLICT, "no es el documento")}).verify})
	if cfe.ErrorMessage(err) != "no es el documento" || db.QuarantineCount() != 1 {
		t.Errorf("a copy Verify refused: %v, %d quarantined", err, db.QuarantineCount())
	}
	res, err := db.Repair(ctx, "q-06", store.RepairSource{Fetch: fetch(docs[5].XML), Verify: v.verify})
	if err != nil || !res.Requeued {
		t.Fatalf("Repair from the service's copy = %+v, %v", res, err)
	}
	got, err := db.FindByUUID(ctx, "q-06")
	if err != nil {
		t.Fatal(err)
	}
	sameIssued(t, got, docs[5])
	_, err = db.Repair(ctx, "", store.RepairSource{Fetch: fetch(nil), Verify: v.verify})
	wantCode(t, err, cfe.EINVALID)
	_, err = db.Repair(ctx, "q-06", store.RepairSource{Backup: "x"})
	wantCode(t, err, cfe.EINVALID)
	_, err = db.Repair(ctx, "no-existe", store.RepairSource{Fetch: fetch(nil), Verify: v.verify})
	wantCode(t, err, cfe.ENOTFOUND)
}
