package emulator

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/dgi"
)

// ticketReport signs a report of fecha whose only block declares e-Tickets
// of serie A: emitted numbers nros (one range from the first to the last)
// and annulled ones; amounts zero (the emulator does not compare them).
func ticketReport(t testing.TB, f *fixture, fecha cfe.Date, sec int, serie string, nros []int64) []byte {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+`<Reporte xmlns="http://cfe.dgi.gub.uy"><Caratula version="1.0"><RUCEmisor>%s</RUCEmisor>`+
		`<FechaResumen>%s</FechaResumen><SecEnvio>%d</SecEnvio><TmstFirmaEnv>%s</TmstFirmaEnv><CantComprobantes>%d</CantComprobantes></Caratula>`,
		company.RUCEmisor, fecha, sec, dgi.FormatFechaHora(f.at), len(nros))
	if len(nros) > 0 {
		fmt.Fprintf(&b, `<Rsmn_Tck><TipoComp>101</TipoComp><RsmnData><Montos><Mnts_FyT_Item><Fecha>%s</Fecha><CodSuc>1</CodSuc>`+
			`<TotMntNoGrv>0</TotMntNoGrv><TotMntExpyAsim>0</TotMntExpyAsim><TotMntImpPerc>0</TotMntImpPerc><TotMntIVAenSusp>0</TotMntIVAenSusp>`+
			`<TotMntIVATasaMin>0</TotMntIVATasaMin><TotMntIVATasaBas>0</TotMntIVATasaBas><TotMntIVAOtra>0</TotMntIVAOtra>`+
			`<MntIVATasaMin>0</MntIVATasaMin><MntIVATasaBas>0</MntIVATasaBas><MntIVAOtra>0</MntIVAOtra><IVATasaMin>10</IVATasaMin>`+
			`<IVATasaBas>22</IVATasaBas><TotMntTotal>0</TotMntTotal><TotMntRetenido>0</TotMntRetenido></Mnts_FyT_Item></Montos>`+
			`<CantDocsUtil>%d</CantDocsUtil><CantDocsMay_topeUI>0</CantDocsMay_topeUI><CantDocsAnulados>0</CantDocsAnulados><CantDocsEmi>%d</CantDocsEmi>`+
			`<RngDocsUtil><RDU_Item><Serie>%s</Serie><NroDesde>%d</NroDesde><NroHasta>%d</NroHasta></RDU_Item></RngDocsUtil></RsmnData></Rsmn_Tck>`,
			fecha, len(nros), len(nros), serie, nros[0], nros[len(nros)-1])
	}
	b.WriteString(`</Reporte>`)
	s, err := f.sg.Sign([]byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return s.XML
}

func reportStates(t testing.TB, c *dgi.Client, day cfe.Date) string {
	t.Helper()
	list, err := c.Reports(ctx(t), dgi.ReportQuery{FechaResumen: day})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range list {
		out = append(out, r.Estado)
	}
	return strings.Join(out, " ")
}

// TestEmulator_reportLaterStates: a report received (AR) stays AR until the
// emulator's clock passes its processing time, then it is DR when it agrees
// with the CFEs the emulator received for the day and ER when it does not
// (a day of two e-Tickets reported as a day without receipts); a wrong
// SecEnvio is BR R05; the corrected report, SecEnvio + 1, is AR and then
// DR, and the earlier one FR. The states survive a restart.
func TestEmulator_reportLaterStates(t *testing.T) {
	t.Parallel()
	f := getFixture(t)
	dir := t.TempDir()
	e := startEmulator(t, dir, Config{Processing: time.Hour})
	c := client(t, e, nil, 0)
	day := cfe.DateOf(f.at.In(cfe.Montevideo))

	t1, t2 := f.sign(t, cfe.ETicket, 501, nil, nil), f.sign(t, cfe.ETicket, 502, nil, nil)
	head, err := cfe.ReadCFEHead(t1)
	if err != nil {
		t.Fatal(err)
	}
	if ack, err := c.SendEnvelope(ctx(t), f.envelope(t, 7001, t1, t2)); err != nil || !ack.Received() {
		t.Fatalf("envelope: %+v %v", ack, err)
	}
	// The day before has no CFE: its zero report is DR once processed.
	if ack, err := c.SendReport(ctx(t), ticketReport(t, f, day.AddDays(-1), 1, head.Serie, nil)); err != nil || ack.Estado != dgi.ReportOK {
		t.Fatalf("zero report: %+v %v", ack, err)
	}
	if ack, err := c.SendReport(ctx(t), ticketReport(t, f, day, 1, head.Serie, nil)); err != nil || ack.Estado != dgi.ReportOK {
		t.Fatalf("report 1: %+v %v", ack, err)
	}
	if got := reportStates(t, c, day); got != "AR" {
		t.Fatalf("before processing: %q, want AR", got)
	}
	if err := e.Advance(2 * time.Hour); err != nil {
		t.Fatal(err)
	}
	if got := reportStates(t, c, day); got != "ER" {
		t.Fatalf("processed, two e-Tickets reported as none: %q, want ER", got)
	}
	if got := reportStates(t, c, day.AddDays(-1)); got != "DR" {
		t.Fatalf("the zero day: %q, want DR", got)
	}
	all, err := e.Reports()
	if err != nil {
		t.Fatal(err)
	}
	if r := all[1]; r.Estado != "ER" || len(r.Findings) == 0 || !strings.Contains(r.Findings[len(r.Findings)-1].Detalle, "declara 0 emitidos y DGI recibió y aceptó 2") {
		t.Fatalf("the ER's findings: %+v", r)
	}

	// A wrong sequence is BR R05 and changes nothing.
	if ack, err := c.SendReport(ctx(t), ticketReport(t, f, day, 3, head.Serie, []int64{501, 502})); err != nil ||
		ack.Estado != dgi.ReportFailed || codes(ack.Motivos) != "R05" {
		t.Fatalf("SecEnvio 3 after 1: %+v %v, want BR R05", ack, err)
	}
	// The correction: SecEnvio 2 with both e-Tickets.
	if ack, err := c.SendReport(ctx(t), ticketReport(t, f, day, 2, head.Serie, []int64{501, 502})); err != nil || ack.Estado != dgi.ReportOK {
		t.Fatalf("report 2: %+v %v", ack, err)
	}
	if got := reportStates(t, c, day); got != "FR BR AR" {
		t.Fatalf("after the correction: %q, want FR BR AR", got)
	}
	if err := e.Advance(2 * time.Hour); err != nil {
		t.Fatal(err)
	}
	if got := reportStates(t, c, day); got != "FR BR DR" {
		t.Fatalf("the correction processed: %q, want FR BR DR", got)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e2 := startEmulator(t, dir, Config{Processing: time.Hour})
	if got := reportStates(t, client(t, e2, nil, 0), day); got != "FR BR DR" {
		t.Fatalf("after a restart: %q, want FR BR DR", got)
	}
}

// TestEmulator_reportMismatchKinds: a report that declares a number DGI
// never received, or leaves a received one out of its ranges, is ER.
func TestEmulator_reportMismatchKinds(t *testing.T) {
	t.Parallel()
	f := getFixture(t)
	e := startEmulator(t, "", Config{Processing: -1})
	c := client(t, e, nil, 0)
	day := cfe.DateOf(f.at.In(cfe.Montevideo))
	t1 := f.sign(t, cfe.ETicket, 601, nil, nil)
	head, _ := cfe.ReadCFEHead(t1)
	if ack, err := c.SendEnvelope(ctx(t), f.envelope(t, 7101, t1)); err != nil || !ack.Received() {
		t.Fatalf("envelope: %+v %v", ack, err)
	}
	// One emitted, but the range names 602: 601 is outside it.
	if ack, err := c.SendReport(ctx(t), ticketReport(t, f, day, 1, head.Serie, []int64{602})); err != nil || ack.Estado != dgi.ReportOK {
		t.Fatalf("report 1: %+v %v", ack, err)
	}
	all, err := e.Reports()
	if err != nil || len(all) != 1 || all[0].Estado != "ER" || len(all[0].Findings) != 1 ||
		!strings.Contains(all[0].Findings[0].Detalle, "601, recibido por DGI, no está en los rangos utilizados") {
		t.Fatalf("a received number outside the ranges: %+v %v", all, err)
	}
	// Two declared, one received.
	if ack, err := c.SendReport(ctx(t), ticketReport(t, f, day, 2, head.Serie, []int64{601, 602})); err != nil || ack.Estado != dgi.ReportOK {
		t.Fatalf("report 2: %+v %v", ack, err)
	}
	all, err = e.Reports()
	if err != nil || len(all) != 2 || all[0].Estado != "FR" || all[1].Estado != "ER" ||
		!strings.Contains(all[1].Findings[0].Detalle, "declara 2 emitidos y DGI recibió y aceptó 1") {
		t.Fatalf("more declared than received: %+v %v", all, err)
	}
	if ack, err := c.SendReport(ctx(t), ticketReport(t, f, day, 3, head.Serie, []int64{601})); err != nil || ack.Estado != dgi.ReportOK {
		t.Fatalf("report 3: %+v %v", ack, err)
	}
	if got := reportStates(t, c, day); got != "FR FR DR" {
		t.Fatalf("the third: %q, want FR FR DR", got)
	}
}
