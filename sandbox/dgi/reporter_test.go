package dgi_test

import (
	"context"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/dgi"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/sandbox/data"
	sdgi "github.com/cfe-agent/cfe-agent/sandbox/dgi"
	"github.com/cfe-agent/cfe-agent/sandbox/dgi/emulator"
	"github.com/cfe-agent/cfe-agent/signer"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

// TestReporter_UnknownOutcomeAsksFirst: a report whose answer never
// arrives (DGI answers after the client gave up) is recorded with its
// attempt and asked about (EFACCONSULTARENVIOSREPORTE) before anything is
// sent again: DGI ends with one report of the day, and the provider takes
// its state from DGI's answer to the question.
func TestReporter_UnknownOutcomeAsksFirst(t *testing.T) {
	t.Parallel()
	const ruc = "219999830019"
	db, err := data.Open(t.TempDir(), "sandbox")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	co := &data.Company{RUC: ruc, RazonSocial: "Empresa de Prueba S.A."}
	if err := db.Update(func(tx *bolt.Tx) error { return data.PutCompany(tx, co) }); err != nil {
		t.Fatal(err)
	}
	// Two days ago on the real clock: DGI's emulator (real clock) refuses a
	// report of a day after its today.
	day := cfe.DateOf(time.Now().In(cfe.Montevideo)).AddDays(-2)
	clk := &clock{t: day.Time(cfe.Montevideo).Add(15 * time.Hour)}
	creds, err := signer.GenerateTestCertificate(ruc, co.RazonSocial, clk.Now().Add(-24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	em, err := emulator.New(emulator.Config{Listen: "127.0.0.1:0", AdminListen: "127.0.0.1:0", DataDir: t.TempDir(), Processing: -1})
	if err != nil {
		t.Fatal(err)
	}
	if err := em.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { em.Close() })
	client, err := dgi.New(dgi.Config{ReceptionURL: em.URL() + dgi.PathReception, QueryURL: em.URL() + dgi.PathQueries,
		Credentials: creds, DGICertificate: em.Certificate(), Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(client.Close)
	rep := sdgi.NewReporter(sdgi.ReporterConfig{DB: db,
		Credentials: func(context.Context, int64) (*signer.Credentials, error) { return creds, nil },
		NewDGI:      func(*signer.Credentials) (sdgi.ReportDGI, error) { return client, nil },
		Build: func(c sdgi.ReportContent) ([]byte, error) {
			return cfe.BuildReport(cfe.ReportInput{RUC: c.RUC, Date: c.Date, Seq: c.Seq, CFEs: c.CFEs, Annulled: c.Annulled,
				UIValue: cfe.DefaultTaxConfig().ValorUI, Now: c.Now})
		},
		Now: clk.Now})
	ctx := context.Background()
	state := func() *data.DailyReportRecord {
		t.Helper()
		var rec *data.DailyReportRecord
		if err := db.View(func(tx *bolt.Tx) error {
			var err error
			rec, err = data.GetDailyReport(tx, co.ID, day)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return rec
	}
	if err := rep.Round(ctx); err != nil || state() != nil {
		t.Fatalf("a round during the day: %v, %+v", err, state())
	}

	// After midnight the day's report (a zero day) goes; its answer is late.
	clk.Set(day.AddDays(1).Time(cfe.Montevideo).Add(30 * time.Minute))
	em.SetDelay(5 * time.Second)
	if err := rep.Round(ctx); err == nil {
		t.Fatal("a round whose report was not answered reports no error")
	}
	rec := state()
	if rec == nil || rec.State != "" || rec.Attempts != 1 || rec.Seq != 1 || rec.LastError == "" {
		t.Fatalf("after the lost answer: %+v, want SecEnvio 1 recorded, one attempt, no state", rec)
	}

	em.SetDelay(0)
	if !testtool.WaitUntil(t, 20*time.Second, func() bool { list, _ := em.Reports(); return len(list) == 1 }) {
		t.Fatal("DGI never recorded the late report")
	}
	clk.Set(clk.Now().Add(time.Hour))
	if err := rep.Round(ctx); err != nil {
		t.Fatal(err)
	}
	rec = state()
	if rec.State != cfe.ReportProcessed && rec.State != cfe.ReportReceived || rec.Attempts != 1 || rec.IDReceptor == 0 {
		t.Fatalf("after asking: %+v, want DGI's state, still one attempt", rec)
	}
	if list, err := em.Reports(); err != nil || len(list) != 1 {
		t.Fatalf("DGI holds %+v (%v): the report was sent twice", list, err)
	}
}
