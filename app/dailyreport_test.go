package app

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/dgi"
	"github.com/cfe-agent/cfe-agent/dgisend"
	"github.com/cfe-agent/cfe-agent/localapi"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
	"github.com/cfe-agent/cfe-agent/sandbox/dgi/emulator"
)

// fakeClock is a clock tests move.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Set(t time.Time) { c.mu.Lock(); c.t = t; c.mu.Unlock() }

// TestDGI_DailyReportShown: a day's report DGI finds inconsistent (a report
// of no receipts for a day of two e-Tickets) reaches /state's
// dgi.reportes (ER, sec_envio 1, sent and checked), a degraded warning with
// the command that corrects it, the status page's row, and doctor's
// "Reporte diario" line; at 18:00 of the next business day the report is
// late: dgi.urgencia_reporte "roja", doctor FAIL.
func TestDGI_DailyReportShown(t *testing.T) {
	t.Parallel()
	a, clk, today := erReportAgent(t)
	ctx := context.Background()
	f := NewFacade(a, FacadeConfig{Zone: montevideo, Now: clk.Now})
	rep, err := f.Report(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if rep.DGI == nil || len(rep.DGI.Reportes) != 1 {
		t.Fatalf("dgi block %+v", rep.DGI)
	}
	r := rep.DGI.Reportes[0]
	if r.Fecha != today || r.SecEnvio != 1 || r.Estado != "ER" || len(r.Motivos) != 1 || r.Enviado == nil || r.Consultado == nil || rep.DGI.UrgenciaReporte != "" {
		t.Fatalf("the day's report %+v (urgency %q)", r, rep.DGI.UrgenciaReporte)
	}
	if rep.Status != "degraded" || !strings.Contains(strings.Join(rep.Warnings, "\n"), "reenvíelo corregido con «cfe-agent reporte reenviar --fecha "+today.String()+"»") {
		t.Fatalf("status %s, warnings %q", rep.Status, rep.Warnings)
	}
	// The status page.
	w := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.Header.Set("Accept", "text/html")
	localapi.NewStatusPage(f).ServeHTTP(w, req)
	page := w.Body.String()
	if !strings.Contains(page, `data-fecha="`+today.String()+`" data-estado="ER"`) || !strings.Contains(page, "con inconsistencias (ER)") ||
		!strings.Contains(page, "Reportes diarios a DGI") {
		t.Fatalf("the status page lacks the day's report:\n%s", page)
	}
	// Doctor.
	lines := doctorReportLines(rep)
	if len(lines) != 2 || lines[0].Status != CheckWarn || !strings.Contains(lines[0].Message, "con inconsistencias (ER), secuencia 1") {
		t.Fatalf("doctor: %+v", lines)
	}
	// 18:00 of the next business day: red, and doctor fails.
	clk.Set(cfe.NextBusinessDay(today).Time(cfe.Montevideo).Add(18 * time.Hour))
	rep, err = f.Report(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	if rep.DGI.UrgenciaReporte != "roja" || rep.Status != "degraded" {
		t.Fatalf("at the deadline: urgency %q, status %s", rep.DGI.UrgenciaReporte, rep.Status)
	}
	if lines := doctorReportLines(rep); lines[0].Status != CheckFail {
		t.Fatalf("doctor at the deadline: %+v", lines)
	}
}

// erReportAgent is a direct-mode agent whose DGI emulator holds two
// e-Tickets signed today and a report of today (SecEnvio 1) that claims no
// receipts, which DGI found inconsistent (ER); its clock is just after
// midnight of tomorrow.
func erReportAgent(t *testing.T) (*Agent, *fakeClock, cfe.Date) {
	t.Helper()
	clk := &fakeClock{t: time.Now()}
	em, err := emulator.New(emulator.Config{DataDir: t.TempDir(), Listen: "127.0.0.1:0", AdminListen: "127.0.0.1:0", Processing: -1, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	if err := em.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = em.Close() })
	a := directAgent(t, em, nil)
	runSender(t, a)
	for i := range 2 {
		sign(t, a, fmt.Sprintf("rep-%d", i), 100+i)
	}
	waitFor(t, "DGI's verdicts", func() bool { rep := reportOf(t, a); return rep.DGI != nil && rep.DGI.Aceptados == 2 })
	today := cfe.DateOf(time.Now().In(cfe.Montevideo))

	zero := func(_ context.Context, d cfe.Date, seq int) ([]byte, error) {
		x := fmt.Sprintf(`<?xml version="1.0" encoding="UTF-8"?>`+"\n"+`<Reporte xmlns="http://cfe.dgi.gub.uy"><Caratula version="1.0">`+
			`<RUCEmisor>%s</RUCEmisor><FechaResumen>%s</FechaResumen><SecEnvio>%d</SecEnvio><TmstFirmaEnv>%s</TmstFirmaEnv>`+
			`<CantComprobantes>0</CantComprobantes></Caratula></Reporte>`, a.Profile.Company.RUC, d, seq, dgi.FormatFechaHora(clk.Now()))
		s, err := a.Signer.Sign([]byte(x))
		if err != nil {
			return nil, err
		}
		return s.XML, nil
	}
	cfg, _, err := reporterConfig(a)
	if err != nil {
		t.Fatal(err)
	}
	cfg.DGI, cfg.Build, cfg.Now = a.DGIClient, zero, clk.Now
	a.Reporter = dgisend.NewReporter(cfg)
	a.ReportDays = directReports{r: a.Reporter}
	clk.Set(today.AddDays(1).Time(cfe.Montevideo).Add(10 * time.Minute))
	ctx := context.Background()
	if _, err := a.Reporter.Pass(ctx); err != nil {
		t.Fatal(err)
	}
	clk.Set(clk.Now().Add(dgisend.DefaultReportCheck))
	if _, err := a.Reporter.Pass(ctx); err != nil {
		t.Fatal(err)
	}

	return a, clk, today
}

// TestCaja_CierreReporte: GET /cierre's reporte is the day's daily-report
// state the store recorded (direct mode), in /state's dgi.reportes shape;
// null for a day the agent knows no report of.
func TestCaja_CierreReporte(t *testing.T) {
	t.Parallel()
	a, clk, today := erReportAgent(t)
	f := NewFacade(a, FacadeConfig{Zone: montevideo, Now: clk.Now})
	ctx := context.Background()
	c, err := f.Cierre(ctx, today)
	if err != nil {
		t.Fatal(err)
	}
	r := c.Reporte
	if c.Cantidad != 2 || r == nil || r.Fecha != today || r.SecEnvio != 1 || r.Estado != "ER" || len(r.Motivos) != 1 ||
		r.Enviado == nil || r.Consultado == nil {
		t.Fatalf("the close of %s: %d receipts, report %+v", today, c.Cantidad, r)
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"reporte":{"fecha":"`+today.String()+`","sec_envio":1,"estado":"ER","motivos":[{"codigo":`) {
		t.Fatalf("the close's JSON: %s", b)
	}
	// A day before the agent reported on: no state.
	c, err = f.Cierre(ctx, today.AddDays(-30))
	if err != nil {
		t.Fatal(err)
	}
	if c.Reporte != nil {
		t.Fatalf("a day without a report has %+v", c.Reporte)
	}
	b, _ = json.Marshal(c)
	if !strings.Contains(string(b), `"reporte":null`) {
		t.Fatalf("the close's JSON without a report: %s", b)
	}
}

func doctorReportLines(rep *apitype.StateReport) []Check {
	var out []Check
	d := &doctor{emit: func(c Check) { out = append(out, c) }}
	d.dailyReports(rep)
	return out
}
