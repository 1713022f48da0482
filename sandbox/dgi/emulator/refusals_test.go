package emulator

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/dgi"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/signer"
)

var httpClient = &http.Client{Timeout: time.Minute}

// post sends raw bytes to the reception service and returns the status and
// body.
func post(t testing.TB, e *Emulator, body []byte, action string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, e.URL()+dgi.PathReception, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "text/xml;charset=UTF-8")
	req.Header.Set("SOAPAction", `"`+action+`"`)
	res, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, b
}

// sendRaw signs an envelope request with creds (the company's when nil),
// whatever the envelope holds, and returns the emulator's verified ACKSobre.
func sendRaw(t testing.TB, e *Emulator, env []byte, creds *signer.Credentials) *dgi.ACKSobre {
	t.Helper()
	if creds == nil {
		creds = getFixture(t).creds
	}
	req, err := dgi.SignRequest(dgi.OpSendEnvelope, creds, env)
	if err != nil {
		t.Fatal(err)
	}
	status, body := post(t, e, req, dgi.OpSendEnvelope.SOAPAction())
	m, err := dgi.ReadMessage(body, dgi.ReadOptions{Certificate: e.Certificate()})
	if err != nil || status != http.StatusOK {
		t.Fatalf("HTTP %d, %v:\n%s", status, err, body)
	}
	doc, err := dgi.XMLData(m.Element, "Dataout")
	if err != nil {
		t.Fatal(err)
	}
	ack, err := dgi.ParseACKSobre(doc, e.Certificate())
	if err != nil {
		t.Fatal(err)
	}
	return ack
}

func codes(ms []dgi.Motivo) string {
	var s []string
	for _, m := range ms {
		s = append(s, m.Codigo)
	}
	return strings.Join(s, ",")
}

// A request without WS-Security gets DGI's gateway fault, unsigned; one
// whose Body was changed after signing, or signed by a certificate that
// does not verify it, gets a signed fault with exception 101; neither is
// recorded.
func TestEmulator_refusesUnsignedAndBadlySignedRequests(t *testing.T) {
	t.Parallel()
	f := getFixture(t)
	e := startEmulator(t, "", Config{})
	env := f.envelope(t, 1, f.issued[101])
	signed, err := dgi.SignRequest(dgi.OpSendEnvelope, f.creds, env)
	if err != nil {
		t.Fatal(err)
	}
	// Unsigned: the same Body without the Header.
	start, end := bytes.Index(signed, []byte("<soapenv:Header>")), bytes.Index(signed, []byte("</soapenv:Header>"))
	unsigned := append(append([]byte{}, signed[:start]...), signed[end+len("</soapenv:Header>"):]...)
	status, body := post(t, e, unsigned, dgi.OpSendEnvelope.SOAPAction())
	m, err := dgi.ReadMessage(body, dgi.ReadOptions{})
	if status != http.StatusInternalServerError || err != nil || m.Fault == nil || m.Fault.String != "No signature in message!" || m.Signed {
		t.Errorf("unsigned request: HTTP %d %v %+v", status, err, m)
	}
	// Tampered: one character of the envelope changed after signing.
	tampered := bytes.Replace(signed, []byte("<Idemisor>1</Idemisor>"), []byte("<Idemisor>2</Idemisor>"), 1)
	if bytes.Equal(tampered, signed) {
		t.Fatal("the test did not change the request")
	}
	for name, req := range map[string][]byte{"tampered": tampered} {
		status, body := post(t, e, req, dgi.OpSendEnvelope.SOAPAction())
		m, err := dgi.ReadMessage(body, dgi.ReadOptions{Certificate: e.Certificate()})
		if status != http.StatusInternalServerError || err != nil || m.Fault == nil || m.Fault.Detail == nil || m.Fault.Detail.Codigo != dgi.ExcSecurity {
			t.Errorf("%s request: HTTP %d %v %+v", name, status, err, m)
		}
	}
	// The client sees a refusal, not an unknown outcome.
	if n, _ := e.EnvelopeCount(); n != 0 {
		t.Errorf("%d envelopes recorded from refused requests", n)
	}
}

// DGI's checks of an envelope: over 250 CFEs (S04), over 2 MB (S07), a
// Caratula count that is not the content's (S05), CFEs signed with another
// certificate than the Caratula's (S06), a RUC that is not the signer's
// (S02), something that is not an envelope (S01); each BS with DGI's glosa,
// no Token.
func TestEmulator_envelopeRefusals(t *testing.T) {
	t.Parallel()
	f := getFixture(t)
	e := startEmulator(t, "", Config{})
	one := f.issued[101]
	cert := f.creds.Certificate.Raw
	many := func(n int) [][]byte {
		out := make([][]byte, n)
		for i := range out {
			out[i] = one
		}
		return out
	}
	big := many(1)
	for len(bytes.Join(big, nil)) <= cfe.MaxEnvelopeBytes {
		big = append(big, one)
	}
	for _, c := range []struct {
		name  string
		env   []byte
		creds *signer.Credentials
		want  string
	}{
		{"251 CFEs", rawEnvelope(company.RUCEmisor, cfe.RUCDGI, 10, 251, cert, f.at, many(251)...), nil, "S04"},
		{"over 2 MB", rawEnvelope(company.RUCEmisor, cfe.RUCDGI, 11, len(big), cert, f.at, big...), nil, "S07"},
		{"CantCFE 2 for 1", rawEnvelope(company.RUCEmisor, cfe.RUCDGI, 12, 2, cert, f.at, one), nil, "S05"},
		{"mixed certificates", rawEnvelope(company.RUCEmisor, cfe.RUCDGI, 13, 2, cert, f.at, one, f.sign(t, 101, 2, f.creds2, nil)), nil, "S06"},
		{"another company signs", f.envelope(t, 14, one), f.other, "S02"},
		{"not an envelope", []byte(`<?xml version="1.0" encoding="UTF-8"?><Reporte xmlns="http://cfe.dgi.gub.uy"/>`), nil, "S01"},
	} {
		ack := sendRaw(t, e, c.env, c.creds)
		if ack.Estado != dgi.EnvelopeRejected || !strings.Contains(codes(ack.Motivos), c.want) || ack.Token != "" {
			t.Errorf("%s: %s %s (%+v), want BS %s", c.name, ack.Estado, codes(ack.Motivos), ack.Motivos, c.want)
		}
		for _, m := range ack.Motivos {
			if m.Glosa != dgi.EnvelopeReasons[m.Codigo] {
				t.Errorf("%s: %s with glosa %q", c.name, m.Codigo, m.Glosa)
			}
		}
	}
}

// The same envelope twice: the second is S08 and the emulator counts two
// envelopes for its CFE; the same CFE in a new envelope is received (AS) and
// rejected E02, naming the first envelope (InfoRespOri).
func TestEmulator_S08AndE02(t *testing.T) {
	t.Parallel()
	f := getFixture(t)
	e := startEmulator(t, "", Config{Processing: -1})
	c := client(t, e, nil, 0)
	cfe1 := f.sign(t, 101, 40, nil, nil)
	env := f.envelope(t, 20, cfe1)
	first, err := c.SendEnvelope(ctx(t), env)
	if err != nil || first.Estado != dgi.EnvelopeReceived {
		t.Fatalf("first: %+v %v", first, err)
	}
	again, err := c.SendEnvelope(ctx(t), env)
	if err != nil || again.Estado != dgi.EnvelopeRejected || !again.Duplicate() || !strings.Contains(again.Motivos[0].Detalle, fmt.Sprint(first.IDReceptor)) {
		t.Fatalf("again: %+v %v, want BS S08 naming IDReceptor %d", again, err, first.IDReceptor)
	}
	other, err := c.SendEnvelope(ctx(t), f.envelope(t, 21, cfe1))
	if err != nil || other.Estado != dgi.EnvelopeReceived {
		t.Fatalf("new envelope: %+v %v", other, err)
	}
	ack, err := c.EnvelopeStatus(ctx(t), other.IDReceptor, other.Token)
	if err != nil {
		t.Fatal(err)
	}
	v := ack.CFEs[0]
	if v.Estado != dgi.CFERejected || codes(v.Motivos) != "E02" || v.Original == nil || v.Original.IDReceptor != first.IDReceptor ||
		v.Original.IDEmisor != 20 || v.Original.Token != first.Token || ack.CantCFERechazados != 1 {
		t.Errorf("E02: %+v original %+v", v, v.Original)
	}
	counts, _ := e.Counts()
	if len(counts) != 1 || counts[0].Sobres != 3 || counts[0].Estado != dgi.CFEReceived || counts[0].IDReceptor != first.IDReceptor {
		t.Errorf("counts %+v, want one CFE in 3 envelopes, AE in the first", counts)
	}
	// The query service: the CFE is DGI's, AE, from the first envelope.
	st, err := c.CFEState(ctx(t), dgi.CFEQuery{Tipo: 101, Serie: "A", Nro: 40})
	if err != nil || st.Estado != dgi.CFEReceived || st.IdReceptor != first.IDReceptor || st.IdEmisor != 20 || st.Token != first.Token {
		t.Errorf("CFEState %+v %v", st, err)
	}
	if _, err := c.CFEState(ctx(t), dgi.CFEQuery{Tipo: 101, Serie: "A", Nro: 41}); cfe.ErrorCode(err) != cfe.ENOTFOUND {
		t.Errorf("CFEState of a CFE never sent: %v, want ENOTFOUND", err)
	}
	list, err := c.Envelopes(ctx(t), dgi.EnvelopeQuery{IdEmisor: 20, Desde: f.at.Add(-time.Hour), Hasta: time.Now().Add(time.Hour)})
	if err != nil || len(list) != 2 || list[0].Estado != dgi.EnvelopeReceived || list[1].Estado != dgi.EnvelopeRejected || list[1].Token != "" {
		t.Errorf("Envelopes of IdEmisor 20: %+v %v, want AS then BS", list, err)
	}
}

// Each CFE check: a number outside the CAE (E03), a CAE of another type
// (E09), a signature that does not verify (E04), an XSD-invalid CFE (E05),
// a signature date outside the CAE (E07); a contingency receipt with a
// constancia the emulator does not know is observed (CE, C03), a valid one
// received; a chosen rejection (knob) gives its code and detail.
func TestEmulator_CFEVerdicts(t *testing.T) {
	t.Parallel()
	f := getFixture(t)
	e := startEmulator(t, "", Config{Processing: -1})
	c := client(t, e, nil, 0)
	if err := e.Reject(Rejection{TipoCFE: 101, Serie: "A", Nro: 57, Codigo: "E12", Detalle: "referencia inexistente (prueba)"}); err != nil {
		t.Fatal(err)
	}
	if err := e.Reject(Rejection{TipoCFE: 201, Serie: "A", Nro: 1, Codigo: "E02"}); err == nil {
		t.Error("a rejection E02 of a contingency receipt was accepted")
	}
	tampered := bytes.Replace(f.sign(t, 101, 53, nil, nil), []byte("<Nro>53</Nro>"), []byte("<Nro>54</Nro>"), 1)
	unknownItem := func() []byte {
		x, err := cfe.MarshalXML(f.templates[101])
		if err != nil {
			t.Fatal(err)
		}
		x = bytes.Replace(x, []byte("</IdDoc>"), []byte("<Extra>1</Extra></IdDoc>"), 1)
		s, err := f.sg.Sign(x)
		if err != nil {
			t.Fatal(err)
		}
		return s.XML
	}()
	cases := []struct {
		doc       []byte
		estado    string
		code      string
		ordinalNo int64
	}{
		{f.sign(t, 101, 1_000_001, nil, nil), dgi.CFERejected, "E03", 1_000_001},
		{f.sign(t, 111, 51, nil, func(c *cfe.CFE) { c.CAEData.CAEID = strings.Replace(c.CAEData.CAEID, "111", "101", 1) }), dgi.CFERejected, "E09", 51},
		{tampered, dgi.CFERejected, "E04", 54},
		{unknownItem, dgi.CFERejected, "E05", 1},
		{f.sign(t, 101, 55, nil, func(c *cfe.CFE) { c.TmstFirma = c.TmstFirma.AddDate(3, 0, 0) }), dgi.CFERejected, "E07", 55},
		{f.sign(t, 201, 56, nil, func(c *cfe.CFE) { c.CAEData.CAEID = "12345678901" }), dgi.CFCObserved, "C03", 56},
		{f.sign(t, 101, 57, nil, nil), dgi.CFERejected, "E12", 57},
		{f.sign(t, 201, 58, nil, nil), dgi.CFEReceived, "", 58},
		{f.sign(t, 101, 59, nil, nil), dgi.CFEReceived, "", 59},
		// A CFC is judged by the rules of the type it replaces (C05), and
		// one whose amount exceeds the habitual ones is observed (C06).
		{f.sign(t, 211, 60, nil, func(c *cfe.CFE) { c.Receptor = nil }), dgi.CFCObserved, "C05", 60},
		{f.sign(t, 211, 61, nil, aboveHabitualAmount(t)), dgi.CFCObserved, "C06", 61},
	}
	var docs [][]byte
	for _, k := range cases {
		docs = append(docs, k.doc)
	}
	env := rawEnvelope(company.RUCEmisor, cfe.RUCDGI, 30, len(docs), f.creds.Certificate.Raw, f.at, docs...)
	ack, err := c.SendEnvelope(ctx(t), env)
	if err != nil || ack.Estado != dgi.EnvelopeReceived {
		t.Fatalf("%+v %v", ack, err)
	}
	acks, err := c.EnvelopeStatus(ctx(t), ack.IDReceptor, ack.Token)
	if err != nil {
		t.Fatal(err)
	}
	if len(acks.CFEs) != len(cases) {
		t.Fatalf("%d verdicts for %d CFEs", len(acks.CFEs), len(cases))
	}
	for i, k := range cases {
		v := acks.CFEs[i]
		if v.Estado != k.estado || (k.code == "" && len(v.Motivos) != 0) || (k.code != "" && !strings.Contains(codes(v.Motivos), k.code)) {
			t.Errorf("CFE %d (Nro %d): %s %s %+v, want %s %s", i+1, v.Nro, v.Estado, codes(v.Motivos), v.Motivos, k.estado, k.code)
		}
	}
	if v := acks.CFEs[6]; len(v.Motivos) == 0 || v.Motivos[0].Detalle != "referencia inexistente (prueba)" || v.Motivos[0].Glosa != dgi.CFERejections["E12"] {
		t.Errorf("chosen rejection: %+v", v.Motivos)
	}
	if v := acks.CFEs[10]; codes(v.Motivos) != "C06" {
		t.Errorf("a CFC above the habitual amounts, otherwise sound: %s %+v, want C06 alone", v.Estado, v.Motivos)
	}
	if acks.CantCFEAceptados != 1 || acks.CantCFERechazados != 6 || acks.CantCFCAceptados != 1 || acks.CantCFCObservados != 3 {
		t.Errorf("counters %+v", acks)
	}
}

// The knobs over real HTTP: a connection dropped after the envelope is
// recorded (the client cannot tell: outcome unknown; the emulator counts
// exactly one envelope, and EFACCONSULTARENVIOSSOBRE finds it); a delay
// longer than the client's timeout (outcome unknown, recorded too); an
// unreachable service (nothing sent), then reachable again.
func TestEmulator_knobs(t *testing.T) {
	t.Parallel()
	f := getFixture(t)
	e := startEmulator(t, "", Config{Processing: -1})
	c := client(t, e, nil, time.Minute)
	short := client(t, e, nil, 2*time.Second)

	// The emulator records the envelope before it cuts the connection: when
	// the client sees the cut, the record is there.
	e.DropAfterReceipt(1)
	_, err := c.SendEnvelope(ctx(t), f.envelope(t, 40, f.sign(t, 101, 60, nil, nil)))
	if !dgi.OutcomeUnknown(err) || cfe.ErrorCode(err) != cfe.EUNAVAILABLE {
		t.Fatalf("dropped: %v, want an unknown outcome", err)
	}
	list, err := c.Envelopes(ctx(t), dgi.EnvelopeQuery{IdEmisor: 40, Desde: f.at.Add(-time.Hour), Hasta: time.Now().Add(time.Hour)})
	if err != nil || len(list) != 1 || list[0].Estado != dgi.EnvelopeReceived {
		t.Fatalf("the dropped envelope: %+v %v, want it received", list, err)
	}
	st, err := c.CFEState(ctx(t), dgi.CFEQuery{Tipo: 101, Serie: "A", Nro: 60})
	if err != nil || st.Estado != dgi.CFEReceived || st.IdReceptor != list[0].IdReceptor {
		t.Errorf("CFEState after the drop: %+v %v", st, err)
	}

	e.SetDelay(5 * time.Second)
	_, err = short.SendEnvelope(ctx(t), f.envelope(t, 41, f.sign(t, 101, 61, nil, nil)))
	if !dgi.OutcomeUnknown(err) {
		t.Fatalf("delayed past the timeout: %v, want an unknown outcome", err)
	}
	// The emulator may still be processing it (as DGI may): wait on its
	// records, with a deadline.
	var n int
	if !testtool.WaitUntil(t, time.Minute, func() bool {
		if n, err = e.EnvelopeCount(); err != nil {
			t.Fatal(err)
		}
		return n == 2
	}) {
		t.Fatalf("the delayed envelope was not recorded within a minute (%d envelopes)", n)
	}
	e.SetDelay(0)
	if _, err := c.CFEState(ctx(t), dgi.CFEQuery{Tipo: 101, Serie: "A", Nro: 61}); err != nil {
		t.Errorf("the delayed envelope was not recorded: %v", err)
	}

	if err := e.SetUnreachable(true); err != nil {
		t.Fatal(err)
	}
	_, err = c.SendEnvelope(ctx(t), f.envelope(t, 42, f.sign(t, 101, 62, nil, nil)))
	if !errors.Is(err, dgi.ErrNotSent) || dgi.OutcomeUnknown(err) {
		t.Fatalf("unreachable: %v, want nothing sent", err)
	}
	if err := e.SetUnreachable(false); err != nil {
		t.Fatal(err)
	}
	if ack, err := c.SendEnvelope(ctx(t), f.envelope(t, 42, f.sign(t, 101, 62, nil, nil))); err != nil || ack.Estado != dgi.EnvelopeReceived {
		t.Fatalf("reachable again: %+v %v", ack, err)
	}
	counts, _ := e.Counts()
	for _, k := range counts {
		if k.Sobres != 1 {
			t.Errorf("CFE %d: %d envelopes, want exactly one", k.Nro, k.Sobres)
		}
	}
	if len(counts) != 3 {
		t.Errorf("%d CFEs counted, want 3", len(counts))
	}
}

// The emulator's state survives a restart: the same certificate, the
// verdicts asked with the old Token, S08 for an envelope received before,
// the clock's offset.
func TestEmulator_restart(t *testing.T) {
	t.Parallel()
	f := getFixture(t)
	dir := t.TempDir()
	e, err := New(Config{DataDir: dir, Listen: "127.0.0.1:0", AdminListen: "127.0.0.1:0", Processing: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Open(); err != nil {
		t.Fatal(err)
	}
	c := client(t, e, nil, 0)
	env := f.envelope(t, 50, f.sign(t, 101, 70, nil, nil))
	ack, err := c.SendEnvelope(ctx(t), env)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Advance(2 * time.Hour); err != nil {
		t.Fatal(err)
	}
	cert := e.Certificate()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e2 := startEmulator(t, dir, Config{Processing: time.Hour})
	if !e2.Certificate().Equal(cert) {
		t.Fatal("the certificate changed across the restart")
	}
	c2 := client(t, e2, nil, 0)
	acks, err := c2.EnvelopeStatus(ctx(t), ack.IDReceptor, ack.Token)
	if err != nil || acks.CFEs[0].Estado != dgi.CFEReceived {
		t.Fatalf("after the restart: %+v %v", acks, err)
	}
	again, err := c2.SendEnvelope(ctx(t), env)
	if err != nil || !again.Duplicate() {
		t.Errorf("the envelope again after the restart: %+v %v, want S08", again, err)
	}
}

// The daily report: AR, then the same SecEnvio again BR R05, SecEnvio 2 AR;
// EFACCONSULTARENVIOSREPORTE lists the three, the first superseded (FR) by
// the second.
func TestEmulator_reports(t *testing.T) {
	t.Parallel()
	f := getFixture(t)
	e := startEmulator(t, "", Config{Processing: time.Hour}) // not processed while the test runs
	c := client(t, e, nil, 0)
	day := cfe.DateOf(f.at.In(cfe.Montevideo)).AddDays(-1)
	for i, k := range []struct {
		sec    int
		estado string
		code   string
	}{{1, dgi.ReportOK, ""}, {1, dgi.ReportFailed, "R05"}, {2, dgi.ReportOK, ""}} {
		ack, err := c.SendReport(ctx(t), report(t, f, day, k.sec))
		if err != nil || ack.Estado != k.estado || codes(ack.Motivos) != k.code || ack.RUCEmisor != company.RUCEmisor {
			t.Errorf("report %d: %+v %v, want %s %s", i+1, ack, err, k.estado, k.code)
		}
	}
	ack, err := c.SendReport(ctx(t), report(t, f, day.AddDays(5), 1))
	if err != nil || ack.Estado != dgi.ReportFailed || codes(ack.Motivos) != "R06" {
		t.Errorf("a report of a future day: %+v %v, want BR R06", ack, err)
	}
	list, err := c.Reports(ctx(t), dgi.ReportQuery{FechaResumen: day})
	if err != nil || len(list) != 3 || list[0].Estado != cfe.ReportSuperseded || list[1].Estado != dgi.ReportFailed || list[2].Estado != dgi.ReportOK {
		t.Errorf("Reports: %+v %v", list, err)
	}
}

// aboveHabitualAmount makes a CFC's first line cost two million pesos,
// its totals computed again: a sound receipt whose amount is a typing
// error (C06).
func aboveHabitualAmount(t testing.TB) func(*cfe.CFE) {
	return func(c *cfe.CFE) {
		it := &c.Items[0]
		it.PrecioUnitario = decimal.NewFromInt(2_000_000)
		it.DescuentoPct, it.DescuentoMonto = nil, nil
		it.MontoItem = it.Cantidad.Mul(it.PrecioUnitario)
		tot, err := cfe.ComputeTotals(c, cfe.DefaultTaxConfig())
		if err != nil {
			t.Fatal(err)
		}
		c.Totales = tot
	}
}
