package store_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/store"
)

// keyedIssued is the signed CFE of a paper form of range r numbered nro.
func keyedIssued(r cfe.CAERange, nro int64, uuid string) *cfe.Issued {
	r.ID = cfe.RangeID(r.Type, r.Serie, r.DNro)
	return issuedFor(&cfe.Reservation{Type: r.Type, Serie: r.Serie, Nro: nro, Range: r}, uuid, signAt)
}

// wantField fails unless err is EINVALID naming campo with a message
// containing fragment.
func wantField(t *testing.T, err error, campo, fragment string) {
	t.Helper()
	ce := wantCode(t, err, cfe.EINVALID)
	for _, f := range ce.Fields {
		if f.Campo == campo && strings.Contains(f.Mensaje, fragment) {
			return
		}
	}
	t.Fatalf("error %v: want field %s with %q, got %+v", err, campo, fragment, ce.Fields)
}

// TestDB_KeyedRange: a keyed-in number is checked against the contingency
// ranges and what is stored, reading only.
func TestDB_KeyedRange(t *testing.T) {
	t.Parallel()
	db, _ := openStore(t, store.Options{})
	paper := newRange(201, "XA", 101, 200, cfe.Date{Year: 2027, Month: time.January, Day: 1})
	putRanges(t, db, paper, newRange(cfe.ETicket, "A", 1, 100, cfe.Date{Year: 2027, Month: time.January, Day: 1}))

	r, err := db.KeyedRange(ctx, 201, "XA", 150, "")
	if err != nil || r.ID != "201-XA-101" {
		t.Fatalf("KeyedRange = %+v, %v", r, err)
	}
	_, err = db.KeyedRange(ctx, cfe.ETicket, "A", 5, "")
	wantField(t, err, "cfe.idDoc.tipoCfe", "no es un tipo de comprobante de contingencia")
	_, err = db.KeyedRange(ctx, 201, "XB", 150, "")
	wantField(t, err, "cfe.idDoc.serie", "no hay un rango CAE de contingencia")
	_, err = db.KeyedRange(ctx, 201, "XA", 201, "")
	wantField(t, err, "cfe.idDoc.numero", "201 no está en los rangos CAE de e-Ticket Contingencia serie XA (101 a 200)")
	_, err = db.KeyedRange(ctx, 211, "XA", 150, "")
	wantField(t, err, "cfe.idDoc.serie", "no hay un rango CAE de contingencia")
	_, err = db.KeyedRange(ctx, 201, "XA", 150, "uuid-x")
	wantField(t, err, "corrige", "no fue ingresado todavía")

	// A contingency type is never numbered by Reserve.
	_, err = db.Reserve(ctx, 201, today)
	wantField(t, err, "tipo", "se ingresa con la serie y el número impresos")
}

// TestDB_CommitKeyed: keyed-in forms are stored in any order without a
// counter, each number once; a batch is all or nothing; the range's use
// counts the forms keyed in.
func TestDB_CommitKeyed(t *testing.T) {
	t.Parallel()
	db, _ := openStore(t, store.Options{})
	paper := newRange(281, "XA", 1, 10, cfe.Date{Year: 2027, Month: time.January, Day: 1})
	putRanges(t, db, paper)

	if err := db.CommitKeyed(ctx, []cfe.KeyedCFE{{Doc: keyedIssued(paper, 7, "form-7")}, {Doc: keyedIssued(paper, 3, "form-3")}}); err != nil {
		t.Fatalf("CommitKeyed: %v", err)
	}
	got, err := db.FindByNumber(ctx, 281, "XA", 7)
	if err != nil || got.UUID != "form-7" || got.Delivery.State != cfe.DeliveryPending {
		t.Fatalf("FindByNumber 7 = %+v, %v", got, err)
	}
	// Found by Search (GET /comprobantes) like any CFE.
	if res, err := db.Search(ctx, store.SearchQuery{Type: 281, Serie: "XA", Nro: 7, Page: 1, PageSize: 10}); err != nil || res.Total != 1 || len(res.CFEs) != 1 || res.CFEs[0].UUID != "form-7" {
		t.Errorf("Search 281 XA-7 = %+v, %v; want form-7", res, err)
	}
	if res, err := db.Search(ctx, store.SearchQuery{Type: 281, Page: 1, PageSize: 10}); err != nil || res.Total != 2 {
		t.Errorf("Search 281 = %d CFEs, %v; want the two keyed in", res.Total, err)
	}
	if n := db.LastNumber(281, "XA"); n != 0 {
		t.Errorf("LastNumber = %d: a keyed-in number moved the counter", n)
	}
	if p, err := db.PendingOutbox(ctx, 10); err != nil || len(p) != 2 {
		t.Errorf("outbox = %d CFEs, %v; want the two keyed in", len(p), err)
	}

	// Keyed twice under another uuid: refused naming the first, nothing written.
	before := db.Committed()
	err = db.CommitKeyed(ctx, []cfe.KeyedCFE{{Doc: keyedIssued(paper, 5, "form-5")}, {Doc: keyedIssued(paper, 7, "other")}})
	wantField(t, err, "cfe.idDoc.numero", "ya fue ingresado con el uuid form-7")
	if !strings.Contains(err.Error(), "comprobante 2 de 2") {
		t.Errorf("batch error %q does not say which CFE", err)
	}
	if _, err := db.FindByUUID(ctx, "form-5"); cfe.ErrorCode(err) != cfe.ENOTFOUND {
		t.Errorf("form-5 of the refused batch: %v, want it not stored", err)
	}
	// The same number twice in one batch, and a number outside the range.
	err = db.CommitKeyed(ctx, []cfe.KeyedCFE{{Doc: keyedIssued(paper, 8, "a")}, {Doc: keyedIssued(paper, 8, "b")}})
	wantField(t, err, "cfe.idDoc.numero", "está dos veces")
	err = db.CommitKeyed(ctx, []cfe.KeyedCFE{{Doc: keyedIssued(paper, 11, "a")}})
	wantField(t, err, "cfe.idDoc.numero", "11 no está en los rangos CAE")
	// A uuid already stored.
	err = db.CommitKeyed(ctx, []cfe.KeyedCFE{{Doc: keyedIssued(paper, 9, "form-3")}})
	wantCode(t, err, cfe.ECONFLICT)
	if db.Committed() != before {
		t.Errorf("refused key-ins committed %d CFEs", db.Committed()-before)
	}

	st, err := db.RangeStatus(ctx, today)
	if err != nil || len(st) != 1 {
		t.Fatalf("RangeStatus = %+v, %v", st, err)
	}
	if st[0].Used != 2 || st[0].Remaining != 8 || st[0].Skipped != 0 {
		t.Errorf("range use: used %d, remaining %d, skipped %d; want 2, 8, 0", st[0].Used, st[0].Remaining, st[0].Skipped)
	}

	// The file passes the backup's record checks (no counter for the serie).
	if _, err := db.Backup(ctx, filepath.Join(t.TempDir(), "copy.db"), backupMeta, store.RecordChecks{}); err != nil {
		t.Fatalf("Backup: %v", err)
	}
}

// TestDB_CommitKeyed_correction: a contingency receipt DGI observed (CE)
// is listed until it is sent again corrected under the same number; the
// correction takes the number over, the observed one is kept, marked.
func TestDB_CommitKeyed_correction(t *testing.T) {
	t.Parallel()
	db, _ := openStore(t, store.Options{})
	paper := newRange(211, "XA", 1, 10, cfe.Date{Year: 2027, Month: time.January, Day: 1})
	putRanges(t, db, paper)
	if _, err := db.DGIBegin(ctx); err != nil {
		t.Fatal(err)
	}
	if err := db.CommitKeyed(ctx, []cfe.KeyedCFE{{Doc: keyedIssued(paper, 4, "first")}}); err != nil {
		t.Fatal(err)
	}
	// Before DGI observed it, a correction is refused.
	_, err := db.KeyedRange(ctx, 211, "XA", 4, "first")
	wantField(t, err, "corrige", "DGI no observó")

	pend, err := db.DGIPending(ctx, 10)
	if err != nil || len(pend) != 1 {
		t.Fatalf("DGIPending = %d, %v", len(pend), err)
	}
	env, err := db.DGIOpenEnvelope(ctx, pend, signAt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.DGIEnvelopeReceived(ctx, env.ID, 77, "tok", signAt); err != nil {
		t.Fatal(err)
	}
	obs := []cfe.DGIReason{{Codigo: "C06", Glosa: "Importe informado en el CFC excede montos habituales"}}
	if _, err := db.DGIRecordVerdicts(ctx, env.ID, []cfe.DGIVerdict{{Seq: pend[0].Seq, State: cfe.DGIObserved, Reasons: obs}}); err != nil {
		t.Fatal(err)
	}
	list, err := db.DGIObservations(ctx, 10)
	if err != nil || len(list) != 1 || list[0].UUID != "first" || list[0].Reasons[0].Codigo != "C06" {
		t.Fatalf("DGIObservations = %+v, %v", list, err)
	}

	// Another uuid without corrige is still refused; corrige naming
	// something else too.
	_, err = db.KeyedRange(ctx, 211, "XA", 4, "")
	wantField(t, err, "cfe.idDoc.numero", "ya fue ingresado con el uuid first")
	_, err = db.KeyedRange(ctx, 211, "XA", 4, "someone-else")
	wantField(t, err, "corrige", "está guardado con el uuid first")

	corrected := keyedIssued(paper, 4, "second")
	corrected.TmstFirma = signAt.Add(time.Hour) // signed again after DGI's answer
	if err := db.CommitKeyed(ctx, []cfe.KeyedCFE{{Doc: corrected, Corrects: "first"}}); err != nil {
		t.Fatalf("correction: %v", err)
	}
	now, err := db.FindByNumber(ctx, 211, "XA", 4)
	if err != nil || now.UUID != "second" || now.Corrects != "first" {
		t.Fatalf("number 4 = %+v, %v; want the correction", now, err)
	}
	old, err := db.FindByUUID(ctx, "first")
	if err != nil || old.CorrectedBy != "second" {
		t.Fatalf("observed one = %+v, %v; want it kept, marked corrected", old, err)
	}
	if list, _ := db.DGIObservations(ctx, 10); len(list) != 0 {
		t.Errorf("observations after the correction: %+v", list)
	}
	// The correction goes to DGI: it is the next pending CFE.
	pend, err = db.DGIPending(ctx, 10)
	if err != nil || len(pend) != 1 || pend[0].UUID != "second" {
		t.Fatalf("DGIPending after the correction = %+v, %v", pend, err)
	}
	// A second correction of the same observation is refused: first was corrected.
	_, err = db.KeyedRange(ctx, 211, "XA", 4, "first")
	wantField(t, err, "corrige", "está guardado con el uuid second")

	if _, err := db.Backup(ctx, filepath.Join(t.TempDir(), "copy.db"), backupMeta, store.RecordChecks{}); err != nil {
		t.Fatalf("Backup with a corrected CFE: %v", err)
	}
}
