package hosted_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"
	"golang.org/x/crypto/bcrypt"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/hosted"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/internal/testtool/reportcheck"
	"github.com/cfe-agent/cfe-agent/issuer"
	"github.com/cfe-agent/cfe-agent/sandbox"
	sdgi "github.com/cfe-agent/cfe-agent/sandbox/dgi"
	"github.com/cfe-agent/cfe-agent/signer"
	"github.com/cfe-agent/cfe-agent/store"
)

// TestAnnulledDeliverer: the agent's annulled numbers reach the service
// once — an answer lost after the service recorded the range is followed by
// the same range again, which the service recognises (registrado false), so
// one range is recorded and the agent marks it delivered; a service that is
// down keeps the range pending with the attempt recorded, and it goes once
// the service is back; a range the service refuses for good (it overlaps
// numbers recorded there) is kept with the service's message and never
// sent again.
func TestAnnulledDeliverer(t *testing.T) {
	t.Parallel()
	c := newClock()
	p := startPeer(t, c)
	l := openLocal(t, filepath.Join(t.TempDir(), "agente.db"), c)
	defer l.close(t)
	ctx := context.Background()
	l.sign(t, "anu", 2)
	client := newClient(t, p, hosted.Config{APIKey: keyAgent})
	if n, err := hosted.NewDeliverer(hosted.DelivererConfig{Outbox: l.db, Client: client}).Pass(ctx); err != nil || n != 2 {
		t.Fatalf("delivered %d CFEs: %v", n, err)
	}
	annul := func(from, to int64) {
		t.Helper()
		if err := l.db.AnnulNumbers(ctx, cfe.AnnulledRange{Type: cfe.ETicket, Serie: "A", From: from, To: to, Note: "rollo dañado"}); err != nil {
			t.Fatal(err)
		}
	}
	d := hosted.NewAnnulledDeliverer(hosted.AnnulledDelivererConfig{Outbox: l.db, Client: client})
	today := cfe.DateOf(c.Now().In(cfe.Montevideo))
	pending := func() int {
		t.Helper()
		list, err := l.db.AnnulledUndelivered(ctx, today, 100)
		if err != nil {
			t.Fatal(err)
		}
		return len(list)
	}
	ranges := func() []sdgi.AnnulledRange {
		var out []sdgi.AnnulledRange
		p.get("/api/v1/numerosanulados", url.Values{}, &out)
		return out
	}

	// The first answer is lost.
	annul(3, 5)
	lost := 0
	p.loseAnswers(func(r *http.Request) bool {
		if r.URL.Path == "/api/v1/numerosanulados" && lost == 0 {
			lost++
			return true
		}
		return false
	})
	if n, err := d.Pass(ctx); err != nil || n != 1 {
		t.Fatalf("pass: %d, %v", n, err)
	}
	if got := p.requestsTo("/api/v1/numerosanulados"); got != 2 {
		t.Errorf("the range was sent %d times, want 2 (the lost answer, then again)", got)
	}
	if got := ranges(); len(got) != 1 || got[0].Desde != 3 || got[0].Hasta != 5 || got[0].Motivo != cfe.AnnulTechnician || got[0].Detalle != "rollo dañado" {
		t.Fatalf("the service holds %+v, want 101 A 3-5 once", got)
	}
	if pending() != 0 || d.Status().Delivered != 1 {
		t.Fatalf("pending %d, status %+v", pending(), d.Status())
	}

	// The service is down: the range waits, the attempt recorded.
	annul(8, 8)
	p.stop()
	if _, err := d.Pass(ctx); cfe.ErrorCode(err) != cfe.EUNAVAILABLE {
		t.Fatalf("pass with the service down: %v, want EUNAVAILABLE", err)
	}
	if pending() != 1 || !strings.Contains(d.Status().LastError, "no se pudieron entregar los números anulados") {
		t.Fatalf("pending %d, status %+v", pending(), d.Status())
	}
	p.start()
	if n, err := d.Pass(ctx); err != nil || n != 1 || pending() != 0 || d.Status().LastError != "" {
		t.Fatalf("pass after the service is back: %d, %v; pending %d, status %+v", n, err, pending(), d.Status())
	}

	// Refused for good: numbers 10-12 are already annulled at the service
	// (another till's range), and the agent annuls 11-14.
	req, _ := http.NewRequest(http.MethodPost, p.url()+"/api/v1/numerosanulados", strings.NewReader(
		`{"tipoCfe":101,"serie":"A","desde":10,"hasta":12,"motivo":"technician","fechaAnulacion":"`+c.Now().Format(time.RFC3339)+`"}`))
	req.Header.Set("X-API-Key", keyInspector)
	req.Header.Set("Content-Type", "application/json")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("the other till's range: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	annul(11, 14)
	if n, err := d.Pass(ctx); err != nil || n != 1 {
		t.Fatalf("pass with a refused range: %d, %v", n, err)
	}
	refusals, err := l.db.AnnulledRefusals(ctx, today.AddDays(-1), today)
	if err != nil || len(refusals) != 1 || refusals[0].Range.From != 11 || !strings.Contains(refusals[0].Reason, "se superponen con los números 10 a 12") {
		t.Fatalf("refusals %+v (%v)", refusals, err)
	}
	before := p.requestsTo("/api/v1/numerosanulados")
	if n, err := d.Pass(ctx); err != nil || n != 0 || p.requestsTo("/api/v1/numerosanulados") != before {
		t.Fatalf("a refused range was sent again: %d, %v", n, err)
	}
	if d.Status().Refused != 1 || len(ranges()) != 3 {
		t.Errorf("status %+v, the service holds %+v", d.Status(), ranges())
	}
}

// till is one till of the company: its own store, its serie's CAE ranges
// (the sandbox's generated ones, which DGI's emulator knows), its branch
// (CdgDGISucur) and key.
type till struct {
	*local
	client *hosted.Client
}

func newTill(t *testing.T, base, key, serie string, sucursal int) *till {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "caja-"+serie+".db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	for _, r := range signer.SandboxRanges(testRUC, cfe.DateOf(time.Now().In(cfe.Montevideo))) {
		if r.Type == cfe.ETicket {
			r.Serie, r.ID = serie, cfe.RangeID(r.Type, serie, r.DNro)
			if err := db.PutRange(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	creds, err := certificate()
	if err != nil {
		t.Fatal(err)
	}
	sg, err := signer.New(signer.Config{Credentials: creds})
	if err != nil {
		t.Fatal(err)
	}
	emisor := cfe.Emisor{RUCEmisor: testRUC, RznSoc: "Empresa de Prueba S.A.", CdgDGISucur: sucursal,
		DomFiscal: "Av. 18 de Julio 1000", Ciudad: "Montevideo", Departamento: "Montevideo"}
	l := &local{db: db, iss: issuer.New(issuer.Config{Store: db, Signer: dgiSigner{sg}, Emisor: func() cfe.Emisor { return emisor },
		Tax: cfe.DefaultTaxConfig(), Zone: montevideo})}
	client, err := hosted.New(hosted.Config{BaseURL: base, APIKey: key, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return &till{local: l, client: client}
}

// deliver sends the till's CFEs and annulled numbers to the service.
func (tl *till) deliver(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	if _, err := hosted.NewDeliverer(hosted.DelivererConfig{Outbox: tl.db, Client: tl.client}).Pass(ctx); err != nil || tl.pending(t) != 0 {
		t.Fatalf("CFEs not delivered: %v (%d pending)", err, tl.pending(t))
	}
	if _, err := hosted.NewAnnulledDeliverer(hosted.AnnulledDelivererConfig{Outbox: tl.db, Client: tl.client}).Pass(ctx); err != nil {
		t.Fatalf("annulled numbers not delivered: %v", err)
	}
}

// signed returns the till's signed CFEs of day d.
func (tl *till) signed(t *testing.T, d cfe.Date) [][]byte {
	t.Helper()
	list, err := tl.db.ListByDate(context.Background(), d, d, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, c := range list {
		out = append(out, c.XML)
	}
	return out
}

// TestReport_TwoTills: two tills of one company — serie A in branch 2,
// serie B in branch 3, each with its own store, key and annulled numbers —
// against one sandbox, which as the provider sends DGI's emulator one
// report of the RUC for the day: both series' used and annulled ranges in
// one Rsmn_Tck block, amounts by CodSuc, valid against
// ReporteDiarioCFE.xsd, its signature verified by xmlsec1, the counts,
// ranges and amounts recomputed from the tills' signed CFEs
// independently (reportcheck), and DGI's emulator finds it consistent
// with the CFEs it received (DR). The agent reads the state back
// (ReportStates, DailyReports).
func TestReport_TwoTills(t *testing.T) {
	t.Parallel()
	rc := &clock{t: time.Now()}
	sb, err := sandbox.New(sandbox.Config{Environment: sandbox.EnvSandbox, DataDir: t.TempDir(), Listen: "127.0.0.1:0",
		DemoPassword: "demo-password", Seed: testSeed(), PasswordCost: bcrypt.MinCost,
		DGI: sandbox.DGIConfig{Enabled: true, Processing: -1, Poll: 20 * time.Millisecond, Retry: 50 * time.Millisecond,
			ReportClock: rc.Now, ReportPoll: 20 * time.Millisecond, ReportCheck: 20 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	if err := sb.Open(); err != nil {
		sb.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := sb.Close(); err != nil {
			t.Error(err)
		}
	})
	ctx := context.Background()
	one, two := newTill(t, sb.URL(), keyAgent, "A", 2), newTill(t, sb.URL(), keyInspector, "B", 3)
	annul := func(tl *till, serie string, from, to int64) {
		t.Helper()
		if err := tl.db.AnnulNumbers(ctx, cfe.AnnulledRange{Type: cfe.ETicket, Serie: serie, From: from, To: to, Note: "prueba"}); err != nil {
			t.Fatal(err)
		}
	}
	// Till 1: A-1..4, 5-7 voided, A-8..9. Till 2: B-1..3, 4-5 voided, B-6.
	one.sign(t, "caja1", 4)
	annul(one, "A", 5, 7)
	one.sign(t, "caja1b", 2)
	two.sign(t, "caja2", 3)
	annul(two, "B", 4, 5)
	two.sign(t, "caja2b", 1)
	one.deliver(t)
	two.deliver(t)
	day := cfe.DateOf(time.Now().In(cfe.Montevideo))
	cfes := append(one.signed(t, day), two.signed(t, day)...)
	if len(cfes) != 10 {
		t.Fatalf("the tills signed %d CFEs today, want 10", len(cfes))
	}

	rc.Advance(day.AddDays(1).Time(cfe.Montevideo).Add(time.Hour).Sub(rc.Now()))
	sb.DGIReporter().Kick()
	states := hosted.NewReportStates(hosted.ReportStatesConfig{Client: one.client})
	var got []cfe.DailyReportState
	if !testtool.WaitUntil(t, time.Minute, func() bool {
		rc.Advance(time.Minute) // the reporter asks DGI for the later state a while after its answer
		sb.DGIReporter().Kick()
		if err := states.Read(ctx); err != nil {
			t.Logf("reading the states: %v", err)
		}
		got, _ = states.States(ctx)
		return len(got) == 1 && got[0].State == cfe.ReportProcessed
	}) {
		t.Fatalf("the day's report: %+v (reader %q, reporter %q)", got, states.LastError(), sb.DGIReporter().LastError(1))
	}
	if got[0].Date != day || got[0].Seq != 1 || got[0].ReceiverID == 0 || got[0].SentAt.IsZero() || got[0].CheckedAt.IsZero() {
		t.Errorf("state %+v", got[0])
	}

	req, _ := http.NewRequest(http.MethodGet, sb.URL()+"/api/v1/reportediario/xml?fecha="+day.String(), nil)
	req.Header.Set("X-API-Key", keyInspector)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	report, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || resp.Header.Get("X-Sec-Envio") != "1" {
		t.Fatalf("GET the report: %d %v %s", resp.StatusCode, err, report)
	}
	testtool.MustValidateXSD(t, testtool.XSD(t, "ReporteDiarioCFE.xsd"), report)
	if out, ok := testtool.XMLSecVerify(t, report, ""); !ok {
		t.Fatalf("xmlsec1 does not verify the report:\n%s", out)
	}
	if v, err := signer.Verify(report, signer.VerifyOptions{}); err != nil || signer.CertRUC(v.Certificate) != testRUC {
		t.Fatalf("the report is not signed with the company's certificate: %v", err)
	}
	annulled, err := one.db.Annulled(ctx, day, day)
	if err != nil {
		t.Fatal(err)
	}
	more, err := two.db.Annulled(ctx, day, day)
	if err != nil {
		t.Fatal(err)
	}
	want := reportcheck.Check(t, report, reportcheck.Input{RUC: testRUC, Date: day, SignDay: cfe.DateOf(rc.Now().In(cfe.Montevideo)),
		CFEs: cfes, Annulled: append(annulled, more...),
		Rate:    func(string, cfe.Date) (decimal.Decimal, bool) { return decimal.Decimal{}, false },
		UIValue: cfe.DefaultTaxConfig().ValorUI, TopeUI: decimal.NewFromInt(5000)})
	b := want.Blocks[cfe.ETicket]
	if b == nil || b.Used != 15 || b.Annulled != 5 || b.Issued != 10 ||
		strings.Join(b.UsedRuns, " ") != "A:1-9 B:1-6" || strings.Join(b.AnnulRuns, " ") != "A:5-7 B:4-5" {
		t.Fatalf("the recomputed e-Ticket block %+v: want used A:1-9 B:1-6 (15), annulled A:5-7 B:4-5 (5), issued 10", b)
	}
	branches := map[string]bool{}
	for k := range b.Items {
		branches[strings.Split(k, "/")[1]] = true
	}
	if len(branches) != 2 || !branches["2"] || !branches["3"] {
		t.Errorf("amount groups %v: want one per branch, CodSuc 2 and 3", b.Items)
	}
}
