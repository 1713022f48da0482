package store_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/store"
)

// TestDB_DGIReports walks a day's reports through the store: recorded with
// their signed bytes before they leave, sent (outcome unknown until an
// answer), answered AR then ER, corrected with SecEnvio + 1 only once the
// first has an answer, and the earlier one FR; the day's state is its last
// report's, and everything survives a reopen.
func TestDB_DGIReports(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, time.March, 11, 0, 10, 0, 0, cfe.Montevideo)
	path := filepath.Join(t.TempDir(), "agent.db")
	open := func() *store.DB {
		db, err := store.Open(path, store.Options{Now: func() time.Time { return now }})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	db := open()
	day := cfe.Date{Year: 2026, Month: time.March, Day: 10}
	other := day.AddDays(-1)

	if st, err := db.DGIReportStates(ctx, 5); err != nil || len(st) != 0 {
		t.Fatalf("a store without reports: %v, %v", st, err)
	}
	// Only SecEnvio 1 opens a day.
	wantCode(t, reportErr(db.DGIReportOpen(ctx, day, 2, []byte("<Reporte/>"))), cfe.EINVALID)
	r1, err := db.DGIReportOpen(ctx, day, 1, []byte("<Reporte>1</Reporte>"))
	if err != nil || r1.Phase != cfe.ReportRecorded || r1.Seq != 1 {
		t.Fatalf("open 1: %+v, %v", r1, err)
	}
	// A second report while the first has no answer is refused.
	wantCode(t, reportErr(db.DGIReportOpen(ctx, day, 2, []byte("<Reporte>2</Reporte>"))), cfe.ECONFLICT)
	if _, err := db.DGIReportOpen(ctx, other, 1, []byte("<Reporte>o</Reporte>")); err != nil {
		t.Fatal(err)
	}

	sent := now.Add(time.Minute)
	if r, err := db.DGIReportSending(ctx, day, 1, sent); err != nil || r.Phase != cfe.ReportUnknown || r.Attempts != 1 {
		t.Fatalf("sending: %+v, %v", r, err)
	}
	// Nothing reached DGI: recorded again, to be sent.
	if r, err := db.DGIReportFailed(ctx, day, 1, "sin conexión", true); err != nil || r.Phase != cfe.ReportRecorded || r.LastError != "sin conexión" {
		t.Fatalf("failed: %+v, %v", r, err)
	}
	if _, err := db.DGIReportSending(ctx, day, 1, sent); err != nil {
		t.Fatal(err)
	}
	// A second failure after it was sent once may have reached DGI: still unknown.
	if r, err := db.DGIReportFailed(ctx, day, 1, "se cortó", false); err != nil || r.Phase != cfe.ReportUnknown {
		t.Fatalf("unknown: %+v, %v", r, err)
	}
	if _, err := db.DGIReportAnswered(ctx, day, 1, cfe.ReportReceived, 41, nil, sent); err != nil {
		t.Fatal(err)
	}
	erReasons := []cfe.DGIReason{{Codigo: "ER", Glosa: "Inconsistencias", Detalle: "e-Ticket: 2 emitidos, DGI recibió 3"}}
	if _, err := db.DGIReportAnswered(ctx, day, 1, cfe.ReportMismatch, 0, erReasons, sent.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	// The correction.
	if _, err := db.DGIReportOpen(ctx, day, 3, []byte("<Reporte>3</Reporte>")); err == nil {
		t.Fatal("SecEnvio 3 after 1: want an error")
	}
	if _, err := db.DGIReportOpen(ctx, day, 2, []byte("<Reporte>2</Reporte>")); err != nil {
		t.Fatal(err)
	}
	if _, err := db.DGIReportSending(ctx, day, 2, sent.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.DGIReportAnswered(ctx, day, 2, cfe.ReportReceived, 42, nil, sent.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.DGIReportAnswered(ctx, day, 1, cfe.ReportSuperseded, 0, nil, sent.Add(3*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = open()
	defer func() { _ = db.Close() }()
	all, err := db.DGIReports(ctx, other, day)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 3 || all[0].Date != other || all[1].Seq != 1 || all[2].Seq != 2 {
		t.Fatalf("reports: %+v", all)
	}
	if string(all[1].XML) != "<Reporte>1</Reporte>" || all[1].State != cfe.ReportSuperseded || all[1].ReceiverID != 41 ||
		len(all[1].Reasons) != 0 || all[1].Attempts != 2 {
		t.Fatalf("report 1 after a reopen: %+v", all[1])
	}
	states, err := db.DGIReportStates(ctx, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(states) != 2 || states[0].Date != day || states[0].Seq != 2 || states[0].State != cfe.ReportReceived ||
		states[0].ReceiverID != 42 || states[1].Date != other || states[1].State != "" {
		t.Fatalf("states: %+v", states)
	}
	if _, err := db.DGIReportSending(ctx, day, 9, now); err == nil {
		t.Fatal("an unknown report: want an error")
	}
}

func reportErr(_ *cfe.DGIDailyReport, err error) error { return err }
