package sandbox_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/internal/testtool/reportcheck"
	"github.com/cfe-agent/cfe-agent/sandbox"
	"github.com/cfe-agent/cfe-agent/sandbox/dgi"
	"github.com/cfe-agent/cfe-agent/sandbox/dgi/emulator"
	"github.com/cfe-agent/cfe-agent/sandbox/issuing"
	"github.com/cfe-agent/cfe-agent/signer"
)

// reportEnv is a sandbox that sends to an in-process DGI emulator on the
// real clock (DGI's clock), with the daily reporter on a clock of its own
// (rc), which the tests move past midnight.
type reportEnv struct {
	*env
	rc *clock
}

func startReporting(t *testing.T) *reportEnv {
	t.Helper()
	rc := &clock{t: time.Now()}
	e := start(t, func(c *sandbox.Config) {
		withDGI(c)
		c.DGI.ReportClock, c.DGI.ReportPoll, c.DGI.ReportCheck = rc.Now, 20*time.Millisecond, 20*time.Millisecond
	})
	return &reportEnv{env: e, rc: rc}
}

// deliverAgent delivers Alfa's e-Ticket serie-nro, signed by an agent at
// signedAt under the sandbox's generated CAE (the one DGI's emulator
// knows), and returns its signed XML.
func (e *reportEnv) deliverAgent(t *testing.T, serie string, nro int64, signedAt time.Time) []byte {
	t.Helper()
	doc := ticket(nro, signedAt)
	doc.IdDoc.Serie = serie
	for _, r := range signer.SandboxRanges(rucAlfa, cfe.DateOf(signedAt.In(cfe.Montevideo))) {
		if r.Type == cfe.ETicket {
			doc.CAEData = cfe.CAEData{CAEID: r.CAEID, DNro: r.DNro, HNro: r.HNro, FecVenc: r.Vencimiento}
		}
	}
	signed := sign(t, agentSigner(t), doc)
	req := issuing.ReceiveRequest{UUID: fmt.Sprintf("5d1f0b8e-0000-4000-8000-%s%011d", serie, nro), XmlFirmado: string(signed.XML)}
	e.do("POST", "/api/v1/comprobante/recibirFirmado", req, "X-API-Key", keyAlfa).expect(t, http.StatusOK)
	return signed.XML
}

// states reads the company's report states (with a JWT of a user of one
// company: no key's rate limit counts the polling).
func (e *reportEnv) states(t *testing.T, auth []string) []dgi.ReportState {
	t.Helper()
	var out []dgi.ReportState
	e.do("GET", "/api/v1/reportediario", nil, auth...).expect(t, http.StatusOK).decode(t, &out)
	return out
}

// awaitState waits until the company's report of day d is SecEnvio seq in
// one of states, and returns it.
func (e *reportEnv) awaitState(t *testing.T, auth []string, d cfe.Date, seq int, states ...string) dgi.ReportState {
	t.Helper()
	var got dgi.ReportState
	if !testtool.WaitUntil(t, time.Minute, func() bool {
		e.rc.Advance(time.Minute) // the reporter asks DGI for the later state a while after its answer
		e.srv.DGIReporter().Kick()
		for _, s := range e.states(t, auth) {
			if s.FechaResumen == d {
				got = s
			}
		}
		for _, st := range states {
			if got.SecEnvio == seq && got.EstadoDgi == st {
				return true
			}
		}
		return false
	}) {
		t.Fatalf("the report of %s: %+v, want SecEnvio %d in %v (reporter: %q)", d, got, seq, states, e.srv.DGIReporter().LastError(1))
	}
	return got
}

// TestReport_Provider: the sandbox, as the provider, reports Alfa's day to
// DGI after midnight by the reporter's clock: the agents' CFEs (one of them
// rejected by DGI, BE) and their annulled numbers, one report, valid
// against ReporteDiarioCFE.xsd, its signature verified by xmlsec1 and made
// with the company's certificate, and its counts, ranges and amounts recomputed
// independently (reportcheck); Beta, with nothing that day, gets its zero
// report. A CFE of the day delivered late makes a correction, SecEnvio 2,
// the earlier report listed under anteriores.
func TestReport_Provider(t *testing.T) {
	t.Parallel()
	e := startReporting(t)
	alfa, beta := bearer(e.login("ana", anaPassword).Token), bearer(e.login("carla", carlaPassword).Token)
	emu := e.srv.DGIEmulator()
	if err := emu.Reject(emulator.Rejection{TipoCFE: cfe.ETicket, Serie: "A", Nro: 2, Codigo: "E05", Detalle: "rechazo elegido"}); err != nil {
		t.Fatal(err)
	}
	signedAt := time.Now().Add(-time.Minute).In(cfe.Montevideo).Truncate(time.Second)
	day := cfe.DateOf(signedAt)
	var cfes [][]byte
	for _, nro := range []int64{1, 2, 3, 7} {
		cfes = append(cfes, e.deliverAgent(t, "A", nro, signedAt))
	}
	annulledAt := signedAt.Add(10 * time.Second)
	e.do("POST", "/api/v1/numerosanulados", map[string]any{"tipoCfe": 101, "serie": "A", "desde": 4, "hasta": 6,
		"motivo": cfe.AnnulSkippedBlock, "fechaAnulacion": annulledAt.Format(time.RFC3339)}, "X-API-Key", keyAlfa).expect(t, http.StatusOK)
	// Nothing is reported before the day ends.
	e.srv.DGIReporter().Kick()
	if got := e.states(t, alfa); len(got) != 0 {
		t.Fatalf("reports before midnight: %+v", got)
	}

	e.rc.Set(day.AddDays(1).Time(cfe.Montevideo).Add(30 * time.Minute))
	e.srv.DGIReporter().Kick()
	st := e.awaitState(t, alfa, day, 1, "DR")
	if st.CantidadCfe != 4 || st.CantidadAnulados != 4 || st.FechaEnvio == nil || st.IdReceptor == 0 {
		t.Errorf("the report's state: %+v, want 4 CFEs (the BE included) and 4 annulled numbers (the BE and 4-6)", st)
	}
	report := e.do("GET", "/api/v1/reportediario/xml?fecha="+day.String(), nil, alfa...).expect(t, http.StatusOK).body
	testtool.MustValidateXSD(t, testtool.XSD(t, "ReporteDiarioCFE.xsd"), report)
	if out, ok := testtool.XMLSecVerify(t, report, ""); !ok {
		t.Fatalf("xmlsec1 does not verify the report:\n%s", out)
	}
	if v, err := signer.Verify(report, signer.VerifyOptions{}); err != nil || signer.CertRUC(v.Certificate) != rucAlfa {
		t.Fatalf("the report is not signed with Alfa's certificate: %v", err)
	}
	in := reportcheck.Input{RUC: rucAlfa, Date: day, SignDay: cfe.DateOf(e.rc.Now().In(cfe.Montevideo)), CFEs: cfes,
		Annulled: []cfe.AnnulledRange{
			{Type: cfe.ETicket, Serie: "A", From: 2, To: 2, Reason: cfe.AnnulDGIRejected, At: signedAt, Day: day},
			{Type: cfe.ETicket, Serie: "A", From: 4, To: 6, Reason: cfe.AnnulSkippedBlock, At: annulledAt},
		},
		Rate:    func(string, cfe.Date) (decimal.Decimal, bool) { return decimal.Decimal{}, false },
		UIValue: cfe.DefaultTaxConfig().ValorUI, TopeUI: decimal.NewFromInt(5000)}
	want := reportcheck.Check(t, report, in)
	if b := want.Blocks[cfe.ETicket]; b == nil || b.Used != 7 || b.Annulled != 4 || b.Issued != 3 {
		t.Errorf("the recomputation itself: %+v, want 7 used (A 1-7), 4 annulled, 3 issued", b)
	}

	// Beta had nothing that day: its report is a zero day.
	zero := e.awaitState(t, beta, day, 1, "DR")
	if zero.CantidadCfe != 0 || zero.CantidadAnulados != 0 {
		t.Errorf("Beta's zero day: %+v", zero)
	}

	// A CFE of the day delivered after its report: a correction.
	cfes = append(cfes, e.deliverAgent(t, "A", 8, signedAt.Add(30*time.Second)))
	e.srv.DGIReporter().Kick()
	st = e.awaitState(t, alfa, day, 2, "DR")
	if st.CantidadCfe != 5 || len(st.Anteriores) != 1 || st.Anteriores[0].SecEnvio != 1 {
		t.Errorf("the correction: %+v, want 5 CFEs and SecEnvio 1 under anteriores", st)
	}
	report = e.do("GET", "/api/v1/reportediario/xml?fecha="+day.String(), nil, alfa...).expect(t, http.StatusOK).body
	in.CFEs = cfes
	reportcheck.Check(t, report, in)
}
