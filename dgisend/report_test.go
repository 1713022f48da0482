package dgisend_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/dgi"
	"github.com/cfe-agent/cfe-agent/dgisend"
	"github.com/cfe-agent/cfe-agent/sandbox/dgi/emulator"
)

// testReports is the tests' report builder: a signed Reporte of the
// e-Tickets the test issued, by signature date, with their count and used
// range (amounts zero: the emulator compares counts and ranges). omit
// leaves the last e-Ticket of a day out, to make a report DGI finds
// inconsistent.
type testReports struct {
	r      *rig
	mu     sync.Mutex
	issued []*cfe.Issued
	omit   bool
	built  []string // "date/seq" of every report built
}

func (b *testReports) add(docs []*cfe.Issued) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.issued = append(b.issued, docs...)
}

func (b *testReports) build(_ context.Context, d cfe.Date, seq int) ([]byte, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.built = append(b.built, fmt.Sprintf("%s/%d", d, seq))
	var nros []int64
	serie := ""
	for _, doc := range b.issued {
		if doc.Type == cfe.ETicket && cfe.DateOf(doc.TmstFirma.In(cfe.Montevideo)) == d {
			nros, serie = append(nros, doc.Nro), doc.Serie
		}
	}
	slices.Sort(nros)
	if b.omit && len(nros) > 0 {
		nros = nros[:len(nros)-1]
	}
	var x strings.Builder
	fmt.Fprintf(&x, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+`<Reporte xmlns="http://cfe.dgi.gub.uy"><Caratula version="1.0"><RUCEmisor>%s</RUCEmisor>`+
		`<FechaResumen>%s</FechaResumen><SecEnvio>%d</SecEnvio><TmstFirmaEnv>%s</TmstFirmaEnv><CantComprobantes>%d</CantComprobantes></Caratula>`,
		company.RUCEmisor, d, seq, dgi.FormatFechaHora(b.r.clk.Now()), len(nros))
	if len(nros) > 0 {
		fmt.Fprintf(&x, `<Rsmn_Tck><TipoComp>101</TipoComp><RsmnData><Montos><Mnts_FyT_Item><Fecha>%s</Fecha><CodSuc>1</CodSuc>`+
			`<TotMntNoGrv>0</TotMntNoGrv><TotMntExpyAsim>0</TotMntExpyAsim><TotMntImpPerc>0</TotMntImpPerc><TotMntIVAenSusp>0</TotMntIVAenSusp>`+
			`<TotMntIVATasaMin>0</TotMntIVATasaMin><TotMntIVATasaBas>0</TotMntIVATasaBas><TotMntIVAOtra>0</TotMntIVAOtra>`+
			`<MntIVATasaMin>0</MntIVATasaMin><MntIVATasaBas>0</MntIVATasaBas><MntIVAOtra>0</MntIVAOtra><IVATasaMin>10</IVATasaMin>`+
			`<IVATasaBas>22</IVATasaBas><TotMntTotal>0</TotMntTotal><TotMntRetenido>0</TotMntRetenido></Mnts_FyT_Item></Montos>`+
			`<CantDocsUtil>%d</CantDocsUtil><CantDocsMay_topeUI>0</CantDocsMay_topeUI><CantDocsAnulados>0</CantDocsAnulados><CantDocsEmi>%d</CantDocsEmi>`+
			`<RngDocsUtil><RDU_Item><Serie>%s</Serie><NroDesde>%d</NroDesde><NroHasta>%d</NroHasta></RDU_Item></RngDocsUtil></RsmnData></Rsmn_Tck>`,
			d, len(nros), len(nros), serie, nros[0], nros[len(nros)-1])
	}
	x.WriteString(`</Reporte>`)
	s, err := b.r.sign.Signer.Sign([]byte(x.String()))
	if err != nil {
		return nil, err
	}
	return s.XML, nil
}

// reportRig is a rig whose clock starts at 10:00 in Montevideo, with a
// reporter using the rig's store, DGI client and clock.
func reportRig(t *testing.T, dgiClient dgisend.ReportDGI) (*rig, *testReports, *dgisend.Reporter) {
	t.Helper()
	r := newRig(t, dgisend.Config{})
	now := r.clk.Now().In(cfe.Montevideo)
	r.clk.Add(time.Date(now.Year(), now.Month(), now.Day(), 10, 0, 0, 0, cfe.Montevideo).Sub(now))
	if dgiClient == nil {
		dgiClient = r.client
	}
	b := &testReports{r: r}
	rep := dgisend.NewReporter(dgisend.ReporterConfig{Store: r.db, DGI: dgiClient, Build: b.build, Now: r.clk.Now})
	return r, b, rep
}

func pass(t *testing.T, rep *dgisend.Reporter) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := rep.Pass(ctx)
	if err != nil {
		t.Fatalf("Pass: %v", err)
	}
	return p
}

// dayStates writes the reporter's view of the days, newest first:
// "2026-11-27 1 AR".
func dayStates(t *testing.T, rep *dgisend.Reporter, now time.Time) []string {
	t.Helper()
	days, err := rep.Days(context.Background(), now)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range days {
		out = append(out, fmt.Sprintf("%s %d %s", d.Date, d.Seq, d.State))
	}
	return out
}

func emulatorReports(t *testing.T, em *emulator.Emulator) []string {
	t.Helper()
	list, err := em.Reports()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range list {
		out = append(out, fmt.Sprintf("%s %d %s", r.FechaResumen, r.SecEnvio, r.Estado))
	}
	return out
}

// untilMidnight moves the clock to 00:10 of the next day in Montevideo.
func untilMidnight(r *rig) {
	now := r.clk.Now().In(cfe.Montevideo)
	r.clk.Add(time.Date(now.Year(), now.Month(), now.Day()+1, 0, 10, 0, 0, cfe.Montevideo).Sub(now))
}

// TestReporter_ARThenDR: after midnight the day's report waits until DGI
// has received the day's CFEs, is then sent (AR) and read again until DGI
// processed it (DR); the next day, without receipts, is reported too (a
// zero report), and nothing is reported before the first day of CFEs.
func TestReporter_ARThenDR(t *testing.T) {
	t.Parallel()
	r, b, rep := reportRig(t, nil)
	day := cfe.DateOf(r.clk.Now().In(cfe.Montevideo))
	b.add(r.issue(t, 3, cfe.ETicket))

	if pass(t, rep) || len(b.built) != 0 {
		t.Fatalf("a report before the day is over: %v", b.built)
	}
	untilMidnight(r)
	if pass(t, rep) || len(b.built) != 0 || !strings.Contains(rep.Status().Waiting, "espera a que DGI reciba") {
		t.Fatalf("the report did not wait for the day's CFEs to reach DGI: built %v, status %+v", b.built, rep.Status())
	}
	r.drain(t, 20)
	if !pass(t, rep) {
		t.Fatal("the report was not sent once DGI had the day's CFEs")
	}
	now := r.clk.Now()
	if got := dayStates(t, rep, now); !slices.Equal(got, []string{day.String() + " 1 AR"}) {
		t.Fatalf("after sending: %v (status %+v)", got, rep.Status())
	}
	// Read again only every Check; DGI processes it after its Processing.
	r.clk.Add(5 * time.Minute)
	pass(t, rep)
	if got := dayStates(t, rep, r.clk.Now()); got[0] != day.String()+" 1 AR" {
		t.Fatalf("before the next check: %v", got)
	}
	r.clk.Add(dgisend.DefaultReportCheck)
	if !pass(t, rep) {
		t.Fatal("the processed state was not read")
	}
	if got := dayStates(t, rep, r.clk.Now()); got[0] != day.String()+" 1 DR" {
		t.Fatalf("after processing: %v", got)
	}
	// The next day has no receipts: its report is sent all the same.
	untilMidnight(r)
	pass(t, rep)
	if got := dayStates(t, rep, r.clk.Now()); !slices.Equal(got, []string{day.AddDays(1).String() + " 1 AR", day.String() + " 1 DR"}) {
		t.Fatalf("the zero day: %v", got)
	}
	if got := emulatorReports(t, r.em); len(got) != 2 || got[0] != day.String()+" 1 DR" || !strings.HasPrefix(got[1], day.AddDays(1).String()+" 1 ") {
		t.Fatalf("DGI holds %v", got)
	}
	if !slices.Equal(b.built, []string{day.String() + "/1", day.AddDays(1).String() + "/1"}) {
		t.Fatalf("built %v: each day's report once, oldest first, and nothing before the first day of CFEs", b.built)
	}
}

// TestReporter_BackfillOldestFirst: an agent that was off for days reports
// every day since its first CFEs, oldest first, each once.
func TestReporter_BackfillOldestFirst(t *testing.T) {
	t.Parallel()
	r, b, rep := reportRig(t, nil)
	day := cfe.DateOf(r.clk.Now().In(cfe.Montevideo))
	b.add(r.issue(t, 2, cfe.ETicket))
	r.drain(t, 20)
	r.clk.Add(3*24*time.Hour + 15*time.Hour) // 01:00 four days later: four days due
	for pass(t, rep) {
	}
	want := []string{day.AddDays(3).String() + " 1 AR", day.AddDays(2).String() + " 1 AR", day.AddDays(1).String() + " 1 AR", day.String() + " 1 AR"}
	if got := dayStates(t, rep, r.clk.Now()); !slices.Equal(got, want) {
		t.Fatalf("days %v, want %v", got, want)
	}
	if want := []string{day.String() + "/1", day.AddDays(1).String() + "/1", day.AddDays(2).String() + "/1", day.AddDays(3).String() + "/1"}; !slices.Equal(b.built, want) {
		t.Fatalf("built %v, want %v", b.built, want)
	}
}

// TestReporter_WrongSequenceBR: DGI already holds SecEnvio 1 of the day
// (another copy of the agent sent it): the reporter's SecEnvio 1 is BR R05,
// recorded with DGI's reasons and not sent again; the technician's resend
// goes as SecEnvio 2 and is AR.
func TestReporter_WrongSequenceBR(t *testing.T) {
	t.Parallel()
	r, b, rep := reportRig(t, nil)
	day := cfe.DateOf(r.clk.Now().In(cfe.Montevideo))
	b.add(r.issue(t, 1, cfe.ETicket))
	r.drain(t, 20)
	untilMidnight(r)
	other, err := b.build(context.Background(), day, 1)
	if err != nil {
		t.Fatal(err)
	}
	if ack, err := r.client.SendReport(context.Background(), other); err != nil || ack.Estado != dgi.ReportOK {
		t.Fatalf("the other copy's report: %+v %v", ack, err)
	}
	pass(t, rep)
	days, err := rep.Days(context.Background(), r.clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(days) != 1 || days[0].State != "BR" || len(days[0].Reasons) != 1 || days[0].Reasons[0].Codigo != "R05" || days[0].ReceiverID == 0 {
		t.Fatalf("the day: %+v, want BR R05 with DGI's IDReceptor", days)
	}
	r.clk.Add(time.Hour)
	if pass(t, rep) {
		t.Fatal("a BR report was sent again without a technician")
	}
	if _, err := rep.Resend(context.Background(), day.AddDays(1)); cfe.ErrorCode(err) != cfe.EINVALID {
		t.Fatalf("resending today: %v, want EINVALID", err)
	}
	got, err := rep.Resend(context.Background(), day)
	if err != nil || got.Seq != 2 {
		t.Fatalf("Resend: %+v %v", got, err)
	}
	if _, err := rep.Resend(context.Background(), day); cfe.ErrorCode(err) != cfe.ECONFLICT {
		t.Fatalf("a second resend before DGI answered the first: %v, want ECONFLICT", err)
	}
	pass(t, rep)
	if got := dayStates(t, rep, r.clk.Now()); !slices.Equal(got, []string{day.String() + " 2 AR"}) {
		t.Fatalf("after the resend: %v", got)
	}
	if got := emulatorReports(t, r.em); !slices.Equal(got, []string{day.String() + " 1 AR", day.String() + " 1 BR", day.String() + " 2 AR"}) &&
		!slices.Equal(got, []string{day.String() + " 1 FR", day.String() + " 1 BR", day.String() + " 2 AR"}) {
		t.Fatalf("DGI holds %v", got)
	}
}

// TestReporter_ERCorrected: a report DGI finds inconsistent (it leaves out
// an e-Ticket DGI received) turns ER once processed; the technician's
// corrected report goes with SecEnvio 2, the earlier one becomes FR, and
// the correction DR.
func TestReporter_ERCorrected(t *testing.T) {
	t.Parallel()
	r, b, rep := reportRig(t, nil)
	day := cfe.DateOf(r.clk.Now().In(cfe.Montevideo))
	b.add(r.issue(t, 3, cfe.ETicket))
	r.drain(t, 20)
	untilMidnight(r)
	b.omit = true
	pass(t, rep)
	r.clk.Add(dgisend.DefaultReportCheck)
	pass(t, rep)
	days, err := rep.Days(context.Background(), r.clk.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(days) != 1 || days[0].State != "ER" || len(days[0].Reasons) == 0 {
		t.Fatalf("the day: %+v, want ER with a reason", days)
	}
	r.clk.Add(time.Hour)
	if pass(t, rep) {
		t.Fatal("an ER report was changed without a technician")
	}
	b.omit = false
	if _, err := rep.Resend(context.Background(), day); err != nil {
		t.Fatal(err)
	}
	pass(t, rep)
	r.clk.Add(dgisend.DefaultReportCheck)
	pass(t, rep)
	reports, err := r.db.DGIReports(context.Background(), day, day)
	if err != nil {
		t.Fatal(err)
	}
	if len(reports) != 2 || reports[0].State != "FR" || reports[1].State != "DR" || reports[1].Seq != 2 {
		t.Fatalf("the day's reports: %+v", reports)
	}
	if got := emulatorReports(t, r.em); !slices.Equal(got, []string{day.String() + " 1 FR", day.String() + " 2 DR"}) {
		t.Fatalf("DGI holds %v", got)
	}
}

// TestReporter_UnknownOutcomeAsksFirst: a report whose answer never
// arrives (DGI answers after the client gave up) is asked about before it
// is sent again: DGI ends with one report of the day, recorded AR.
func TestReporter_UnknownOutcomeAsksFirst(t *testing.T) {
	t.Parallel()
	r, b, _ := reportRig(t, nil)
	short, err := dgi.New(dgi.Config{ReceptionURL: r.em.URL() + dgi.PathReception, QueryURL: r.em.URL() + dgi.PathQueries,
		Credentials: r.sign.Signer.Credentials(), DGICertificate: r.em.Certificate(), Timeout: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(short.Close)
	rep := dgisend.NewReporter(dgisend.ReporterConfig{Store: r.db, DGI: short, Build: b.build, Now: r.clk.Now})
	day := cfe.DateOf(r.clk.Now().In(cfe.Montevideo))
	b.add(r.issue(t, 1, cfe.ETicket))
	r.drain(t, 20)
	untilMidnight(r)
	r.em.SetDelay(10 * time.Second) // answered after the client gave up
	pass(t, rep)
	reports, err := r.db.DGIReports(context.Background(), day, day)
	if err != nil {
		t.Fatal(err)
	}
	if len(reports) != 1 || reports[0].Phase != cfe.ReportUnknown || !strings.Contains(rep.Status().LastError, "se le preguntará") {
		t.Fatalf("after the lost answer: %+v, status %+v", reports, rep.Status())
	}
	r.em.SetDelay(0)
	r.clk.Add(time.Hour)
	pass(t, rep)
	if got := dayStates(t, rep, r.clk.Now()); !slices.Equal(got, []string{day.String() + " 1 DR"}) {
		t.Fatalf("after asking: %v (DGI received it an hour ago and processed it)", got)
	}
	if got := emulatorReports(t, r.em); len(got) != 1 {
		t.Fatalf("DGI holds %v: the report was sent twice", got)
	}
	reports, _ = r.db.DGIReports(context.Background(), day, day)
	if reports[0].Attempts != 1 {
		t.Fatalf("attempts %d: it was sent again instead of asked about", reports[0].Attempts)
	}
}
