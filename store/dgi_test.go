package store_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/store"
)

func wantDGICounts(t *testing.T, db *store.DB, want cfe.DGICounts) {
	t.Helper()
	got, err := db.DGICounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got.OldestPending = time.Time{}
	if got != want {
		t.Fatalf("DGI counts = %+v, want %+v", got, want)
	}
}

func seqsOf(items []cfe.DGIItem) []uint64 {
	var out []uint64
	for _, it := range items {
		out = append(out, it.Seq)
	}
	return out
}

// TestDB_DGILifecycle walks CFEs through every DGI state: pending,
// in an envelope, unknown, received, accepted, rejected (the number
// annulled), an envelope refused (its CFEs put back and sent first), and
// checks that every state survives a reopen.
func TestDB_DGILifecycle(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, time.March, 10, 10, 0, 0, 0, cfe.Montevideo)
	now := t0
	path := filepath.Join(t.TempDir(), "agent.db")
	db, err := store.Open(path, store.Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	putRanges(t, db, newRange(cfe.ETicket, "A", 1, 100, farAway), newRange(cfe.EFactura, "A", 1, 100, farAway))

	// Before DGIBegin, nothing is pending and the counts are zero.
	if _, err := db.DGIPending(ctx, 10); err == nil {
		t.Fatal("DGIPending before DGIBegin: want an error")
	}
	wantDGICounts(t, db, cfe.DGICounts{})

	// A CFE the provider already accepted is left to it.
	issue(t, db, cfe.ETicket, "p1")
	if err := db.MarkDelivered(ctx, "p1", 9); err != nil {
		t.Fatal(err)
	}
	for i, u := range []string{"a", "b", "c", "d"} {
		now = t0.Add(time.Duration(i+1) * time.Minute)
		issue(t, db, cfe.ETicket, u)
	}
	start, err := db.DGIBegin(ctx)
	if err != nil || start != 1 {
		t.Fatalf("DGIBegin = %d, %v; want 1 (after the CFE the provider holds)", start, err)
	}
	if again, err := db.DGIBegin(ctx); err != nil || again != start {
		t.Fatalf("DGIBegin again = %d, %v; want %d", again, err, start)
	}
	wantDGICounts(t, db, cfe.DGICounts{Pendientes: 4})

	pend, err := db.DGIPending(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	if got := seqsOf(pend); len(got) != 3 || got[0] != 2 || got[2] != 4 || pend[0].UUID != "a" || len(pend[0].XML) == 0 {
		t.Fatalf("pending = %v (%+v)", got, pend[0])
	}
	// Skipping a CFE is refused; so is an empty envelope.
	if _, err := db.DGIOpenEnvelope(ctx, pend[1:2], now); err == nil {
		t.Fatal("an envelope that skips a pending CFE: want an error")
	}
	if _, err := db.DGIOpenEnvelope(ctx, nil, now); err == nil {
		t.Fatal("an empty envelope: want an error")
	}
	e1, err := db.DGIOpenEnvelope(ctx, pend[:2], now)
	if err != nil || e1.ID != 1 || e1.State != cfe.EnvelopePrepared {
		t.Fatalf("DGIOpenEnvelope = %+v, %v", e1, err)
	}
	if _, err := db.DGIOpenEnvelope(ctx, pend[:1], now); err == nil {
		t.Fatal("a CFE in two envelopes: want an error")
	}
	wantDGICounts(t, db, cfe.DGICounts{Pendientes: 4})

	// Sent, no answer: unknown; then found at DGI: received.
	if _, err := db.DGIEnvelopeUnknown(ctx, e1.ID, "se cortó la conexión"); err != nil {
		t.Fatal(err)
	}
	wantDGICounts(t, db, cfe.DGICounts{Pendientes: 2, Desconocidos: 2})
	fh := now.Add(time.Minute)
	if _, err := db.DGIEnvelopeReceived(ctx, e1.ID, 700, "tok", fh); err != nil {
		t.Fatal(err)
	}
	if _, err := db.DGIEnvelopeReceived(ctx, e1.ID, 701, "tok", fh); err == nil {
		t.Fatal("received again under another IDReceptor: want a conflict")
	}
	wantDGICounts(t, db, cfe.DGICounts{Enviados: 2, Pendientes: 2})

	// The second envelope is refused as a whole: its CFEs go back.
	pend, _ = db.DGIPending(ctx, 10)
	if got := seqsOf(pend); len(got) != 2 || got[0] != 4 {
		t.Fatalf("pending after envelope 1 = %v", got)
	}
	e2, err := db.DGIOpenEnvelope(ctx, pend[:1], now)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.DGIEnvelopeRefused(ctx, e2.ID, []cfe.DGIReason{{Codigo: "S03", Glosa: "Certificado"}}); err != nil {
		t.Fatal(err)
	}
	pend, _ = db.DGIPending(ctx, 10)
	if got := seqsOf(pend); len(got) != 2 || got[0] != 4 || got[1] != 5 {
		t.Fatalf("pending after a refused envelope = %v, want [4 5] (put back first)", got)
	}
	e3, err := db.DGIOpenEnvelope(ctx, pend, now)
	if err != nil || e3.ID != 3 {
		t.Fatalf("envelope 3 = %+v, %v", e3, err)
	}

	// Verdicts: a accepted, b rejected (annulled).
	bad := []cfe.DGIReason{{Codigo: "E05", Glosa: "Formato", Detalle: "falta el RUC"}}
	env, err := db.DGIRecordVerdicts(ctx, e1.ID, []cfe.DGIVerdict{{Seq: 2, State: cfe.DGIAccepted}, {Seq: 3, State: cfe.DGIRejected, Reasons: bad}})
	if err != nil || env.State != cfe.EnvelopeDone {
		t.Fatalf("verdicts = %+v, %v", env, err)
	}
	if _, err := db.DGIRecordVerdicts(ctx, e1.ID, []cfe.DGIVerdict{{Seq: 4, State: cfe.DGIAccepted}}); err == nil {
		t.Fatal("a verdict on a CFE of another envelope: want an error")
	}
	wantDGICounts(t, db, cfe.DGICounts{Enviados: 2, Aceptados: 1, Rechazados: 1, Pendientes: 2})

	// Reopen: everything is still there.
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err = store.Open(path, store.Options{Now: func() time.Time { return now }}); err != nil {
		t.Fatal(err)
	}
	wantDGICounts(t, db, cfe.DGICounts{Enviados: 2, Aceptados: 1, Rechazados: 1, Pendientes: 2})
	rej, err := db.DGIRejections(ctx, 10)
	if err != nil || len(rej) != 1 || rej[0].UUID != "b" || rej[0].Nro != 3 || rej[0].Reasons[0].Codigo != "E05" {
		t.Fatalf("rejections = %+v, %v", rej, err)
	}
	st, err := db.DGIState(ctx, cfe.ETicket, "A", 3)
	if err != nil || st.State != cfe.DGIRejected || st.Envelope != 1 {
		t.Fatalf("state of A-3 = %+v, %v", st, err)
	}
	open, err := db.DGIOpenEnvelopes(ctx)
	if err != nil || len(open) != 1 || open[0].ID != 3 || len(open[0].Seqs) != 2 {
		t.Fatalf("open envelopes = %+v, %v", open, err)
	}
	got, _ := db.DGIEnvelope(ctx, 1)
	if got.IDReceptor != 700 || got.Token != "tok" || !got.Fechahora.Equal(fh) {
		t.Fatalf("envelope 1 after reopen = %+v", got)
	}

	// Overdue: an e-Factura committed long ago and not received.
	now = t0.Add(time.Hour)
	issue(t, db, cfe.EFactura, "f1")
	urgent := func(tp cfe.Type, _ decimal.Decimal) bool { return cfe.UrgentForDGI(tp, false) }
	if od, n, err := db.DGIOverdue(ctx, now.Add(-10*time.Minute), urgent, 5); err != nil || n != 0 || len(od) != 0 {
		t.Fatalf("overdue before 10 minutes = %v, %d, %v", od, n, err)
	}
	od, n, err := db.DGIOverdue(ctx, now.Add(10*time.Minute), urgent, 5)
	if err != nil || n != 1 || od[0].UUID != "f1" {
		t.Fatalf("overdue = %+v, %d, %v", od, n, err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	boltCheck(t, path)
}
