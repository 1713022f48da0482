package app

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/internal/testtool/reportcheck"
	"github.com/cfe-agent/cfe-agent/issuer"
	"github.com/cfe-agent/cfe-agent/store"
)

// monthClock is an injected clock the test moves by hand.
type monthClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *monthClock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *monthClock) set(t time.Time) { c.mu.Lock(); c.now = t; c.mu.Unlock() }

var uuidRE = regexp.MustCompile(`"uuid":\s*"[^"]*"`)

// TestReports_SeededMonth is issue 31's done-when over the agent's store: a
// month of CFEs signed under an injected clock — every type the examples
// sign (e-Tickets, e-Facturas, exports, remitos, resguardos, boletas, cuenta
// ajena), pesos and dollars, credit and debit notes, from two branches
// (CodSuc 1 and 2) — with numbers skipped (cae used-elsewhere) and voided
// (numeros anular), a CFE DGI rejected, and the rates the technician set.
// Every day's report (zero days included) is built and signed from the
// store (Reports.Build), validates against ReporteDiarioCFE.xsd (xmllint),
// verifies (xmlsec1), and agrees with an independent recomputation from
// the signed CFEs the store returns. CFCs (2xx) are not in it: the agent
// refuses to sign them (they are paper receipts), so its store never holds
// one; cfe.TestBuildReport_EveryType covers their blocks.
func TestReports_SeededMonth(t *testing.T) {
	t.Parallel()
	a := newTestAgent(t, nil)
	ctx := context.Background()
	var err error
	start := time.Now().In(cfe.Montevideo).AddDate(0, 0, -20)
	start = time.Date(start.Year(), start.Month(), start.Day(), 9, 0, 0, 0, cfe.Montevideo)
	clock := &monthClock{now: start}
	// The store reads the same clock (the day annulled numbers count on).
	path := a.Config.StorePath(a.DataDir, a.Name)
	if err := a.DB.Close(); err != nil {
		t.Fatal(err)
	}
	if a.DB, err = store.Open(path, store.Options{Now: clock.Now}); err != nil {
		t.Fatal(err)
	}
	branch := func(suc int) *issuer.Issuer {
		em := a.Profile.Emisor()
		em.CdgDGISucur = suc
		return issuer.New(issuer.Config{Store: a.DB, Signer: issuingSigner(a.Signer, nil), Emisor: func() cfe.Emisor { return em },
			Tax: taxConfig(a.Profile.Tax), Zone: montevideo, Now: clock.Now})
	}
	tills := []*issuer.Issuer{branch(1), branch(2)}
	files, err := filepath.Glob(filepath.Join(testtool.RepoRoot(t), "examples", "*.json"))
	if err != nil || len(files) < 10 {
		t.Fatalf("examples: %v %v", files, err)
	}
	var examples [][]byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		examples = append(examples, b)
	}
	n := 0
	signOne := func(till int, body []byte) {
		t.Helper()
		n++
		body = uuidRE.ReplaceAll(body, fmt.Appendf(nil, `"uuid":"00000000-0000-4000-8000-%012d"`, n))
		req, err := cfe.DecodeRequest(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tills[till].Issue(ctx, req); err != nil {
			t.Fatalf("signing %s: %v", body[:80], err)
		}
	}
	// Rates for every day of the month and the days before it.
	var rates []store.Rate
	for d := -12; d <= 22; d++ {
		day := cfe.DateOf(start).AddDays(d)
		rates = append(rates, store.Rate{Currency: "USD", Day: day, Value: decimal.RequireFromString("39.5").Add(decimal.New(int64(d), -2)),
			Source: "prueba: tabla sembrada"})
	}
	if err := a.DB.SetRates(ctx, rates); err != nil {
		t.Fatal(err)
	}
	// The numbers the previous software used, before the first e-Factura.
	if err := a.DB.MarkUsedElsewhere(ctx, cfe.EFactura, "A", 5, "sistema anterior"); err != nil {
		t.Fatal(err)
	}
	days := []cfe.Date{}
	for d := 0; d < 12; d++ {
		day := cfe.DateOf(start).AddDays(d)
		days = append(days, day)
		if d%4 == 3 {
			continue // a zero day
		}
		for i, ex := range examples {
			if (i+d)%3 == 0 {
				continue // not every type every day
			}
			clock.set(start.AddDate(0, 0, d).Add(time.Duration(i) * time.Minute))
			signOne((i+d)%2, ex)
		}
		if d == 2 {
			// The technician voids the next e-Tickets of serie A ahead.
			last := a.DB.LastNumber(cfe.ETicket, "A")
			if err := a.DB.AnnulNumbers(ctx, cfe.AnnulledRange{Type: cfe.ETicket, Serie: "A", From: last + 3, To: last + 5,
				Note: "rollo dañado"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// DGI rejects one CFE (the first one): its number is annulled on its day.
	if _, err := a.DB.DGIBegin(ctx); err != nil {
		t.Fatal(err)
	}
	pend, err := a.DB.DGIPending(ctx, 1)
	if err != nil || len(pend) != 1 {
		t.Fatalf("pending: %v %v", pend, err)
	}
	env, err := a.DB.DGIOpenEnvelope(ctx, pend, clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.DB.DGIRecordVerdicts(ctx, env.ID, []cfe.DGIVerdict{{Seq: env.Seqs[0], State: cfe.DGIRejected,
		Reasons: []cfe.DGIReason{{Codigo: "E07", Glosa: "Fecha de emisión"}}}}); err != nil {
		t.Fatal(err)
	}

	reports, err := a.Reports()
	if err != nil {
		t.Fatal(err)
	}
	reports.Now = func() time.Time { return start.AddDate(0, 0, 30) }
	table, err := a.DB.RateTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string][]byte{}
	var total, annulledSeen, dollarDays int64
	for _, day := range days {
		out, err := reports.Build(ctx, day, 1)
		if err != nil {
			t.Fatalf("report of %s: %v", day, err)
		}
		docs[fmt.Sprintf("rep-%s.xml", day)] = out.XML
		issued, err := a.DB.ListByDate(ctx, day, day, 100000)
		if err != nil {
			t.Fatal(err)
		}
		var xmls [][]byte
		for _, c := range issued {
			xmls = append(xmls, c.XML)
		}
		annulled, err := a.DB.Annulled(ctx, day, day)
		if err != nil {
			t.Fatal(err)
		}
		exp := reportcheck.Check(t, out.XML, reportcheck.Input{RUC: a.Profile.Company.RUC, Date: day,
			SignDay: cfe.DateOf(reports.Now().In(cfe.Montevideo)), CFEs: xmls, Annulled: annulled,
			Rate: func(cur string, d cfe.Date) (decimal.Decimal, bool) {
				v, _, ok := table.Rate(cur, d)
				return v, ok
			}, UIValue: a.Profile.Tax.ValorUI, TopeUI: a.Profile.Tax.TopeUI})
		total += exp.Total
		annulledSeen += int64(len(annulled))
		if len(out.Rates) > 0 {
			dollarDays++
		}
		if len(issued) == 0 && exp.Total != 0 {
			t.Errorf("%s: no CFE but %d comprobantes", day, exp.Total)
		}
	}
	for name, msg := range testtool.ValidateXSDBatch(t, testtool.XSD(t, "ReporteDiarioCFE.xsd"), docs) {
		t.Errorf("xmllint: %s: %s", name, msg)
	}
	for name, msg := range testtool.XMLSecVerifyBatch(t, docs) {
		t.Errorf("xmlsec1 --verify: %s: %s", name, msg)
	}
	// The month had what it should: CFEs, the annulled numbers of three
	// sources, foreign-currency days, two branches.
	if total < 50 || annulledSeen < 3 || dollarDays < 3 {
		t.Errorf("the month holds %d comprobantes, %d annulled runs, %d days with table rates", total, annulledSeen, dollarDays)
	}
	var both bool
	for _, b := range docs {
		if bytes.Contains(b, []byte("<CodSuc>1</CodSuc>")) && bytes.Contains(b, []byte("<CodSuc>2</CodSuc>")) {
			both = true
		}
	}
	if !both {
		t.Error("no report has both branches")
	}
}
