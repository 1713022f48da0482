package hosted_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/hosted"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/store"
)

// TestClient_LastNumbers: the service's highest number per type and serie,
// found by searching back from today through the sandbox's
// GET /api/v1/cfeemitido/buscar, however long ago it was signed.
func TestClient_LastNumbers(t *testing.T) {
	c := newClock()
	p := startPeer(t, c)
	l := openLocal(t, filepath.Join(t.TempDir(), "agent.db"), c)
	defer l.close(t)
	client := newClient(t, p, hosted.Config{APIKey: keyAgent})
	ranges, err := l.db.Ranges(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	today := cfe.DateOf(c.Now().In(cfe.Montevideo))

	got, err := client.LastNumbers(context.Background(), ranges, today)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Fatalf("an empty service reports %+v", got)
	}

	// A type the agent never signed: searched type by type back to its
	// authorization date, and absent from the answer.
	ranges = append(ranges, cfe.CAERange{RUC: testRUC, Type: cfe.EFactura, Serie: "A", DNro: 1, HNro: 500, CAEID: "90260000003",
		Autorizado: cfe.Date{Year: 2025, Month: 12, Day: 1}, Vencimiento: cfe.Date{Year: 2027, Month: 12, Day: 31}, Source: "manual"})
	l.sign(t, "ultimo", 5)
	d := runDeliverer(t, l, client)
	waitDrained(t, l)
	d.stop()
	for _, tc := range []struct {
		name  string
		today cfe.Date
	}{
		{"signed today", today},
		{"signed 40 days ago", today.AddDays(40)},
		{"signed 200 days ago", today.AddDays(200)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := p.requestsTo("/api/v1/cfeemitido/buscar")
			got, err := client.LastNumbers(context.Background(), ranges, tc.today)
			if err != nil {
				t.Fatal(err)
			}
			want := []cfe.LastNumber{{Type: cfe.ETicket, Serie: "A", Last: 5}}
			if !slices.Equal(got, want) {
				t.Fatalf("LastNumbers = %+v, want %+v (serie B has none)", got, want)
			}
			t.Logf("%d searches", p.requestsTo("/api/v1/cfeemitido/buscar")-before)
		})
	}

	noKey := newClient(t, p, hosted.Config{})
	if _, err := noKey.LastNumbers(context.Background(), ranges, today); cfe.ErrorCode(err) != cfe.EUNAUTHORIZED {
		t.Errorf("without credentials: %v, want EUNAUTHORIZED", err)
	}
}

// TestRestoredBackup_ResumesAboveTheService is reproduction 2 with an old
// backup: the store file is copied after are signed and
// delivered to the sandbox, then the copy is put back (and no numbering
// journal is left to tell). The store, held because it has no journal, asks
// the service; numbering resumes at A-6 and the service ends up with A-1 to
// A-7, each number once.
func TestRestoredBackup_ResumesAboveTheService(t *testing.T) {
	c := newClock()
	p := startPeer(t, c)
	client := newClient(t, p, hosted.Config{APIKey: keyAgent})
	dir := t.TempDir()
	path, journal := filepath.Join(dir, "agent.db"), filepath.Join(dir, "numbering", "agent.json")
	opts := store.Options{Journal: journal, HoldWithoutJournal: true}
	ctx := context.Background()

	// A new data directory with a hosted service: held until it answers.
	l := openLocalWith(t, path, c, opts)
	ranges, err := l.db.Ranges(ctx)
	if err != nil {
		t.Fatal(err)
	}
	resume := func(l *local) {
		t.Helper()
		lasts, err := client.LastNumbers(ctx, ranges, cfe.DateOf(c.Now().In(cfe.Montevideo)))
		if err != nil {
			t.Fatal(err)
		}
		var seqs []cfe.LastNumber
		for _, n := range lasts {
			seqs = append(seqs, cfe.LastNumber{Type: n.Type, Serie: n.Serie, Last: n.Last})
		}
		if err := l.db.ResumeNumbering(ctx, "the sandbox", seqs); err != nil {
			t.Fatal(err)
		}
	}
	resume(l)
	first := l.sign(t, "antes", 3)
	l.close(t)
	backup := filepath.Join(t.TempDir(), "copia.db")
	testtool.CopyFile(t, path, backup)

	l = openLocalWith(t, path, c, opts)
	second := l.sign(t, "despues", 2)
	d := runDeliverer(t, l, client)
	waitDrained(t, l)
	d.stop()
	l.close(t)

	// The backup of A-1..A-3 comes back, and the journal is lost with it.
	testtool.CopyFile(t, backup, path)
	if err := os.Remove(journal); err != nil {
		t.Fatal(err)
	}
	l = openLocalWith(t, path, c, opts)
	defer l.close(t)
	if h := l.db.NumberingHold(); h == nil {
		t.Fatal("a store without its journal is not held")
	}
	if _, err := l.iss.Issue(ctx, mustRequest(t, "mientras-tanto")); cfe.ErrorCode(err) != cfe.EUNAVAILABLE {
		t.Fatalf("signing while held: %v, want EUNAVAILABLE (05)", err)
	}
	resume(l)
	third := l.sign(t, "restaurado", 2)
	d = runDeliverer(t, l, client)
	waitDrained(t, l)
	d.stop()

	got := p.received()
	checkReceived(t, got, slices.Concat(first, second, third))
	var numbers []int64
	for _, g := range got {
		numbers = append(numbers, g.Nro)
	}
	slices.Sort(numbers)
	if !slices.Equal(numbers, []int64{1, 2, 3, 4, 5, 6, 7}) {
		t.Fatalf("the service holds numbers %v, want 1 to 7 once each", numbers)
	}
	for _, u := range third {
		is, err := l.db.FindByUUID(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		if is.Nro <= 5 {
			t.Errorf("after the restore %s got A-%d again", u, is.Nro)
		}
	}
}

func mustRequest(t *testing.T, uuid string) *cfe.Request {
	t.Helper()
	req, err := cfe.DecodeRequest(strings.NewReader(`{"uuid":"` + uuid + `","cfe":{"idDoc":{"tipoCfe":101,"formaPago":1},
		"detalles":[{"indicadorFacturacion":3,"nombreItem":"Yerba","cantidad":1,"precioUnitario":100}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	return req
}
