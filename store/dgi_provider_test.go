package store_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/store"
)

// TestDB_DGIProvider: provider mode's records. Only CFEs the hosted service
// accepted are awaited, in commit order, up to the first still in the
// outbox; the service's states are recorded with direct mode's counts and
// rejections (a BE annulled, audited), survive a reopen, and a CFE with
// DGI's verdict is awaited no more. DGIBegin afterwards (a switch to direct
// mode) leaves the provider's CFEs to it.
func TestDB_DGIProvider(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, time.March, 10, 10, 0, 0, 0, cfe.Montevideo)
	path := filepath.Join(t.TempDir(), "agent.db")
	db, err := store.Open(path, store.Options{Now: func() time.Time { return t0 }})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	putRanges(t, db, newRange(cfe.ETicket, "A", 1, 100, farAway))
	for _, u := range []string{"a", "b", "c", "d"} {
		issue(t, db, cfe.ETicket, u)
	}
	awaited := func(want ...uint64) []cfe.DGICFE {
		t.Helper()
		got, err := db.DGIProviderAwaiting(ctx, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("awaited %+v, want seqs %v", got, want)
		}
		for i, g := range got {
			if g.Seq != want[i] {
				t.Fatalf("awaited %+v, want seqs %v", got, want)
			}
		}
		return got
	}
	awaited() // nothing delivered yet
	for i, u := range []string{"a", "b", "d"} {
		if err := db.MarkDelivered(ctx, u, int64(i+1)); err != nil {
			t.Fatal(err)
		}
	}
	// c (seq 3) is still in the outbox: d waits behind it.
	if got := awaited(1, 2); got[0].UUID != "a" || got[0].State != "" || got[1].Nro != 2 {
		t.Fatalf("awaited %+v", got)
	}
	if err := db.DGIProviderRecord(ctx, []cfe.DGIProviderState{{Seq: 1, State: "inventado"}}); err == nil {
		t.Fatal("an unknown state was recorded")
	}
	if err := db.DGIProviderRecord(ctx, []cfe.DGIProviderState{{Seq: 1, State: cfe.DGISent}, {Seq: 2, State: cfe.DGIPending}}); err != nil {
		t.Fatal(err)
	}
	if got := awaited(1, 2); got[0].State != cfe.DGISent || got[1].State != cfe.DGIPending {
		t.Fatalf("awaited %+v", got)
	}
	if err := db.MarkDelivered(ctx, "c", 4); err != nil {
		t.Fatal(err)
	}
	awaited(1, 2, 3, 4)
	if err := db.DGIProviderRecord(ctx, []cfe.DGIProviderState{
		{Seq: 1, State: cfe.DGIAccepted},
		{Seq: 2, State: cfe.DGIRejected, Reasons: []cfe.DGIReason{{Codigo: "E05", Glosa: "Formato", Detalle: "falta el RUC"}}},
		{Seq: 3, State: cfe.DGIAccepted}, {Seq: 4, State: cfe.DGIUnknown},
	}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err = store.Open(path, store.Options{Now: func() time.Time { return t0 }}); err != nil {
		t.Fatal(err)
	}
	if got := awaited(4); got[0].State != cfe.DGIUnknown {
		t.Fatalf("awaited %+v", got)
	}
	counts, err := db.DGIProviderCounts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	counts.OldestPending = time.Time{}
	if want := (cfe.DGICounts{Enviados: 3, Aceptados: 2, Rechazados: 1, Desconocidos: 1}); counts != want {
		t.Fatalf("counts %+v, want %+v", counts, want)
	}
	rej, err := db.DGIRejections(ctx, 5)
	if err != nil || len(rej) != 1 || rej[0].UUID != "b" || rej[0].Reasons[0].Codigo != "E05" {
		t.Fatalf("rejections %+v (%v)", rej, err)
	}
	if st, err := db.DGIState(ctx, cfe.ETicket, "A", 2); err != nil || st.State != cfe.DGIRejected {
		t.Fatalf("state of A-2: %+v (%v)", st, err)
	}
	// Turning direct mode on later sends none of what the provider holds.
	if start, err := db.DGIBegin(ctx); err != nil || start != 4 {
		t.Fatalf("DGIBegin = %d (%v), want 4", start, err)
	}
	if pend, err := db.DGIPending(ctx, 10); err != nil || len(pend) != 0 {
		t.Fatalf("direct mode's pending %+v (%v)", pend, err)
	}
}

// TestDB_DGIProviderBegin: reading begins at the first CFE not yet
// delivered (what was delivered before is not awaited), once; and a CFE
// the service never reports on stops being awaited 31 days after its
// commit, once a later one is reported.
func TestDB_DGIProviderBegin(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, time.March, 10, 10, 0, 0, 0, cfe.Montevideo)
	now := t0
	db, err := store.Open(filepath.Join(t.TempDir(), "agent.db"), store.Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	putRanges(t, db, newRange(cfe.ETicket, "A", 1, 100, farAway))
	for _, u := range []string{"old1", "old2", "new1"} {
		issue(t, db, cfe.ETicket, u)
	}
	for i, u := range []string{"old1", "old2"} {
		if err := db.MarkDelivered(ctx, u, int64(i+1)); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.DGIProviderBegin(ctx); err != nil {
		t.Fatal(err)
	}
	seqs := func() []uint64 {
		t.Helper()
		got, err := db.DGIProviderAwaiting(ctx, 10)
		if err != nil {
			t.Fatal(err)
		}
		var out []uint64
		for _, g := range got {
			out = append(out, g.Seq)
		}
		return out
	}
	if got := seqs(); len(got) != 0 {
		t.Fatalf("awaited %v before new1 is delivered", got)
	}
	if err := db.MarkDelivered(ctx, "new1", 3); err != nil {
		t.Fatal(err)
	}
	issue(t, db, cfe.ETicket, "new2")
	if err := db.MarkDelivered(ctx, "new2", 4); err != nil {
		t.Fatal(err)
	}
	if err := db.DGIProviderBegin(ctx); err != nil { // again: changes nothing
		t.Fatal(err)
	}
	if got := seqs(); len(got) != 2 || got[0] != 3 || got[1] != 4 {
		t.Fatalf("awaited %v, want [3 4] (old1 and old2 were delivered before reading began)", got)
	}
	// new1 is never reported; new2 is, 32 days later: new1 is given up.
	now = t0.Add(32 * 24 * time.Hour)
	if err := db.DGIProviderRecord(ctx, []cfe.DGIProviderState{{Seq: 4, State: cfe.DGIAccepted}}); err != nil {
		t.Fatal(err)
	}
	if got := seqs(); len(got) != 0 {
		t.Fatalf("awaited %v after new1 was given up", got)
	}
}
