package hosted_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/hosted"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/signer"
	"github.com/cfe-agent/cfe-agent/store"
)

// TestClient_Held: the CFEs the service holds in the agent's ranges, with
// the uuid and security code each was delivered with, found however long
// after its range's authorization it was signed; a span whose answer
// cannot be read is asked again in halves.
func TestClient_Held(t *testing.T) {
	t.Parallel()
	c := newClock()
	p := startPeer(t, c)
	l := openLocal(t, filepath.Join(t.TempDir(), "agent.db"), c)
	defer l.close(t)
	client := newClient(t, p, hosted.Config{APIKey: keyAgent})
	ctx := context.Background()
	ranges, err := l.db.Ranges(ctx)
	if err != nil {
		t.Fatal(err)
	}
	uuids := l.sign(t, "primero", 3)
	c.Advance(20 * 24 * time.Hour)
	uuids = append(uuids, l.sign(t, "despues", 2)...)
	d := runDeliverer(t, l, client)
	waitDrained(t, l)
	d.stop()
	today := cfe.DateOf(c.Now().In(cfe.Montevideo))

	// check compares an answer with what the store holds.
	check := func(t *testing.T, got []hosted.IssuedSummary) {
		t.Helper()
		if len(got) != len(uuids) {
			t.Fatalf("Held found %d CFEs, want %d: %+v", len(got), len(uuids), got)
		}
		for _, g := range got {
			mine, err := l.db.FindByUUID(ctx, g.UUID)
			if err != nil {
				t.Fatalf("the service holds %s, which the store does not: %v", g.UUID, err)
			}
			if g.TipoCfe != int(mine.Type) || g.Serie != mine.Serie || g.Nro != mine.Nro || g.CodSeguridad != mine.CodSeguridad || g.CodSeguridad == "" {
				t.Errorf("the service lists %+v, the store holds %s-%d with code %s", g, mine.Serie, mine.Nro, mine.CodSeguridad)
			}
		}
	}

	t.Run("from the ranges' authorization to today", func(t *testing.T) {
		before := p.requestsTo("/api/v1/cfeemitido/buscar")
		got, err := client.Held(ctx, ranges, today)
		if err != nil {
			t.Fatal(err)
		}
		check(t, got)
		// 2026-01-05 to the day after today, two weeks at a time, one type.
		days := int(today.AddDays(1).Time(time.UTC).Sub(ranges[0].Autorizado.Time(time.UTC))/(24*time.Hour)) + 1
		if n := p.requestsTo("/api/v1/cfeemitido/buscar") - before; n != (days+13)/14 {
			t.Errorf("%d searches for %d days, want %d", n, days, (days+13)/14)
		}
		if got, err := client.Held(ctx, ranges, today.AddDays(400)); err != nil || len(got) != len(uuids) {
			t.Errorf("searched from 400 days later: %d CFEs (%v)", len(got), err)
		}
	})

	t.Run("an answer too large to read is asked in halves", func(t *testing.T) {
		// A service whose answer for more than a day is cut, as the client
		// cuts an answer larger than it reads.
		target, err := url.Parse(p.url())
		if err != nil {
			t.Fatal(err)
		}
		proxy := httputil.NewSingleHostReverseProxy(target)
		var cut atomic.Int32
		front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			q := r.URL.Query()
			if r.URL.Path == "/api/v1/cfeemitido/buscar" && q.Get("fechaFirmaDesde") != q.Get("fechaFirmaHasta") {
				cut.Add(1)
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`[{"id":1,"uuid":"cortado","tipoCfe":101,`))
				return
			}
			proxy.ServeHTTP(w, r)
		}))
		defer front.Close()
		cfg := hosted.Config{BaseURL: front.URL, APIKey: keyAgent, Now: c.Now, Sleep: c.Sleep, Timeout: 5 * time.Second}
		cutting, err := hosted.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		recent := slices.Clone(ranges)
		for i := range recent {
			recent[i].Autorizado = today.AddDays(-25)
		}
		got, err := cutting.Held(ctx, recent, today)
		if err != nil {
			t.Fatal(err)
		}
		check(t, got)
		if cut.Load() == 0 {
			t.Fatal("no answer was cut: the test proved nothing")
		}
	})
}

// TestRestore_RefusesWhatTheServiceHoldsOtherwise: a copy of the agent's
// data that went on signing by itself (the service unreachable) holds A-4
// and A-5 with other content than the agent delivered; its backup, restored
// in the agent's data directory, is this directory's store (the same
// identity) and not behind, but the service, asked through Held, holds
// other documents under: refused, naming them.
func TestRestore_RefusesWhatTheServiceHoldsOtherwise(t *testing.T) {
	t.Parallel()
	c := newClock()
	p := startPeer(t, c)
	client := newClient(t, p, hosted.Config{APIKey: keyAgent})
	ctx := context.Background()
	checks := store.RecordChecks{Signature: func(xml []byte) (string, error) {
		v, err := signer.Verify(xml, signer.VerifyOptions{})
		if err != nil {
			return "", err
		}
		return v.DigestValue, nil
	}}
	meta := store.BackupMeta{Profile: "caja", Environment: "sandbox", RUC: testRUC}
	dirs := func() (path, journal string) {
		d := t.TempDir()
		return filepath.Join(d, "agent.db"), filepath.Join(d, "numbering", "agent.json")
	}
	agentPath, agentJournal := dirs()
	agent := openLocalWith(t, agentPath, c, store.Options{Journal: agentJournal})
	agent.sign(t, "tienda", 3)
	d := runDeliverer(t, agent, client)
	waitDrained(t, agent)
	d.stop()
	atA3 := filepath.Join(t.TempDir(), "copia-A-3.db")
	if _, err := agent.db.Backup(ctx, atA3, meta, checks); err != nil {
		t.Fatal(err)
	}

	// The copy: the data directory copied after A-3 (store and journal),
	// signing offline.
	agent.close(t)
	copyPath, copyJournal := dirs()
	testtool.CopyFile(t, agentPath, copyPath)
	if err := os.MkdirAll(filepath.Dir(copyJournal), 0o700); err != nil {
		t.Fatal(err)
	}
	testtool.CopyFile(t, agentJournal, copyJournal)
	agent = openLocalWith(t, agentPath, c, store.Options{Journal: agentJournal})
	clone := openLocalWith(t, copyPath, c, store.Options{Journal: copyJournal})
	clone.sign(t, "copia", 2)
	cloneBackup := filepath.Join(t.TempDir(), "copia-A-5.db")
	if _, err := clone.db.Backup(ctx, cloneBackup, meta, checks); err != nil {
		t.Fatal(err)
	}
	clone.close(t)

	// The agent signs and delivers its own.
	agent.sign(t, "tienda-2", 2)
	d = runDeliverer(t, agent, client)
	waitDrained(t, agent)
	d.stop()
	agent.close(t)

	service := func(ctx context.Context, info *store.BackupInfo) store.ServiceAnswer {
		today := cfe.DateOf(c.Now().In(cfe.Montevideo))
		var ans store.ServiceAnswer
		var err error
		if ans.Last, err = client.LastNumbers(ctx, info.SeriesInUse(), today); err != nil {
			t.Error(err)
			return ans
		}
		ans.LastKnown = true
		held, err := client.Held(ctx, info.SeriesInUse(), today)
		if err != nil {
			t.Error(err)
			return ans
		}
		for _, h := range held {
			ans.CFEs = append(ans.CFEs, store.ServiceCFE{Type: cfe.Type(h.TipoCfe), Serie: h.Serie, Nro: h.Nro, UUID: h.UUID, CodSeguridad: h.CodSeguridad})
		}
		ans.CFEsKnown = true
		return ans
	}
	o := store.RestoreOptions{Backup: cloneBackup, Store: agentPath, Journal: agentJournal, Meta: meta, Records: checks, Service: service}
	_, err := store.Restore(ctx, o)
	if cfe.ErrorCode(err) != cfe.ECONFLICT {
		t.Fatalf("restore of the copy's backup: %v, want ECONFLICT", err)
	}
	msg := cfe.ErrorMessage(err)
	for _, want := range []string{"2 comprobantes distintos", "número 4: la copia tiene el uuid copia-0001", "número 5: la copia tiene el uuid copia-0002", "el servicio el uuid tienda-2-0002"} {
		if !strings.Contains(msg, want) {
			t.Errorf("refusal %q lacks %q", msg, want)
		}
	}
	// The agent's own backup at A-3 compares equal: restored (confirming
	// the numbers used since).
	o.Backup = atA3
	o.Confirmed = []cfe.LastNumber{{Type: cfe.ETicket, Serie: "A", Last: 5}}
	res, err := store.Restore(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if !res.ServiceCompared || res.Compared != 3 {
		t.Fatalf("compared %v, %d CFEs; want A-1..A-3", res.ServiceCompared, res.Compared)
	}
}
