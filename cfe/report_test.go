package cfe_test

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/internal/testtool"
	"github.com/cfe-agent/cfe-agent/internal/testtool/reportcheck"
	"github.com/cfe-agent/cfe-agent/signer"
)

// rateTable is a RateSource of fixed rates by currency and day.
type rateTable map[string]decimal.Decimal

func (r rateTable) Rate(cur string, d cfe.Date) (decimal.Decimal, string, bool) {
	v, ok := r[cur+" "+d.String()]
	return v, "prueba", ok
}

func (r rateTable) lookup(cur string, d cfe.Date) (decimal.Decimal, bool) {
	v, _, ok := r.Rate(cur, d)
	return v, ok
}

// reportDoc writes a stored-like CFE of type ty: minimalCFE's document
// (for a 2xx type, the document of the type it replaces) with the number,
// dates, branch and totals given, and a structurally complete signature.
func reportDoc(t testing.TB, ruc string, ty cfe.Type, serie string, nro int64, fch cfe.Date, suc int, signed time.Time, tot *cfe.Totales) []byte {
	t.Helper()
	c := minimalCFE(ty)
	c.Emisor.RUCEmisor = ruc
	c.IdDoc.Serie, c.IdDoc.Nro, c.IdDoc.FchEmis, c.Emisor.CdgDGISucur, c.TmstFirma = serie, nro, fch, suc, signed
	if tot != nil {
		tot.CantLinDet = c.Totales.CantLinDet
		tot.RetencPercep = c.Totales.RetencPercep
		c.Totales = *tot
	}
	b, err := cfe.MarshalXML(c)
	if err != nil {
		t.Fatalf("%d %s-%d: %v", ty, serie, nro, err)
	}
	end := bytes.LastIndex(b, []byte("</CFE>"))
	return append(append(append([]byte{}, b[:end]...), testSignature...), b[end:]...)
}

func signReport(t testing.TB, unsigned []byte, now time.Time) []byte {
	t.Helper()
	creds, err := signer.GenerateTestCertificate("219999830019", "Almacén La Esquina S.A.", now.AddDate(0, -1, 0))
	if err != nil {
		t.Fatal(err)
	}
	sg, err := signer.New(signer.Config{Credentials: creds, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	s, err := sg.SignCanonical(unsigned)
	if err != nil {
		t.Fatal(err)
	}
	// Signing the canonical bytes gives what signing the parsed document gives.
	s2, err := sg.Sign(unsigned)
	if err != nil {
		t.Fatal(err)
	}
	if s.DigestValue != s2.DigestValue {
		t.Fatalf("the report is not canonical: digest %s signed as written, %s parsed", s.DigestValue, s2.DigestValue)
	}
	return s.XML
}

// sampleLeaves flattens a report into "path=value" lines, without the
// signature, namespace prefixes or the amounts' trailing zeros.
func sampleLeaves(t *testing.T, doc []byte) []string {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(doc))
	var path []string
	var out []string
	var text string
	for {
		tok, err := d.Token()
		if err != nil {
			break
		}
		switch e := tok.(type) {
		case xml.StartElement:
			path = append(path, e.Name.Local)
			text = ""
		case xml.CharData:
			text += string(e)
		case xml.EndElement:
			if len(path) > 1 && path[1] != "Signature" && strings.TrimSpace(text) != "" {
				v := strings.TrimSpace(text)
				if dv, err := decimal.NewFromString(v); err == nil && strings.Contains(v, ".") {
					v = dv.String()
				}
				out = append(out, strings.Join(path, "/")+"="+v)
			}
			text = ""
			path = path[:len(path)-1]
		}
	}
	return out
}

// TestBuildReport_DGISample rebuilds DGI's sample report
// (Rep_219000090011_20120511_01_Ej_Mod_27032014.xml) from CFEs made to
// match what it describes: per block, CantDocsEmi CFEs of serie A numbered
// from 1 (CantCFCEmi for contingency blocks), of the block's issue date and
// branch, whose amounts add up to the sample's. What the sample does not
// allow to reproduce is set from it: TmstFirmaEnv, and the UI value (2.2,
// so that the 10 000 UI cap of 2012 puts every sample e-Ticket above it as
// the sample says). Everything else — the blocks, their order, counts,
// ranges, amounts and CantComprobantes — is what the builder makes of the
// CFEs. The sample has no annulled numbers, foreign currency or second
// branch; the other tests cover those.
func TestBuildReport_DGISample(t *testing.T) {
	t.Parallel()
	sample, err := os.ReadFile(filepath.Join(testtool.SharedDir(t), "dgi", "samples", "Rep_219000090011_20120511_01_Ej_Mod_27032014.xml"))
	if err != nil {
		t.Fatal(err)
	}
	signedAt := time.Date(2012, time.July, 26, 11, 0, 0, 0, cfe.Montevideo)
	now := time.Date(2014, time.March, 27, 15, 8, 6, 0, cfe.Montevideo)
	// The sample's blocks: type, count, issue date, amounts by field.
	type blk struct {
		ty     cfe.Type
		n      int
		fch    string
		fields map[string]string
	}
	fyt := func(noGrv, netMin, netBas, ivaMin, ivaBas string) map[string]string {
		return map[string]string{"MntNoGrv": noGrv, "MntNetoIvaTasaMin": netMin, "MntNetoIVATasaBasica": netBas,
			"MntIVATasaMin": ivaMin, "MntIVATasaBasica": ivaBas}
	}
	blocks := []blk{
		{101, 4, "2012-05-11", fyt("420", "584450.91", "166393.44", "58445.09", "36606.56")},
		{102, 2, "2012-05-11", fyt("0", "75500", "49983.61", "7550", "10996.39")},
		{103, 2, "2012-05-11", fyt("0", "0", "49562.29", "0", "10903.71")},
		{201, 1, "2012-05-11", fyt("28125", "325738.64", "4224674.26", "32573.86", "929428.34")},
		{111, 4, "2012-05-11", fyt("400000", "2587000", "60000", "258700", "13200")},
		{112, 2, "2012-05-11", fyt("0", "150500", "9000", "15050", "1980")},
		{113, 2, "2012-05-11", fyt("0", "0", "300", "0", "66")},
		{211, 1, "2012-05-11", fyt("0", "41318.75", "1041933.88", "4131.88", "229225.45")},
		{181, 4, "2012-05-11", nil},
		{281, 1, "2012-05-11", nil},
		{182, 4, "2012-01-19", map[string]string{"MntTotRetenido": "140050"}},
		{282, 1, "2012-01-19", map[string]string{"MntTotRetenido": "0"}},
	}
	var docs [][]byte
	for _, b := range blocks {
		fch, _ := cfe.ParseDate(b.fch)
		info, _ := b.ty.Info()
		serie := "A"
		if info.Contingency {
			serie = "XA"
		}
		// Split each amount: every CFE but the last gets an equal share
		// rounded down to cents, the last what is left.
		share := func(v string, i int) *decimal.Decimal {
			total := decimal.RequireFromString(v)
			part := total.Div(decimal.NewFromInt(int64(b.n))).RoundDown(2)
			if i == b.n-1 {
				part = total.Sub(part.Mul(decimal.NewFromInt(int64(b.n - 1))))
			}
			return &part
		}
		for i := 0; i < b.n; i++ {
			var tot *cfe.Totales
			switch {
			case b.fields == nil:
			case info.Element == cfe.ElemResguardo:
				tot = &cfe.Totales{TpoMoneda: "UYU", MntTotRetenido: share(b.fields["MntTotRetenido"], i)}
			default:
				zero := decimal.Zero
				tot = &cfe.Totales{TpoMoneda: "UYU", MntNoGrv: share(b.fields["MntNoGrv"], i), MntExpoyAsim: &zero,
					MntImpuestoPerc: &zero, MntIVaenSusp: &zero, MntNetoIvaTasaMin: share(b.fields["MntNetoIvaTasaMin"], i),
					MntNetoIVATasaBasica: share(b.fields["MntNetoIVATasaBasica"], i), MntNetoIVAOtra: &zero,
					IVATasaMin: numP("10"), IVATasaBasica: numP("22"),
					MntIVATasaMin: share(b.fields["MntIVATasaMin"], i), MntIVATasaBasica: share(b.fields["MntIVATasaBasica"], i),
					MntIVAOtra: &zero, MntTotRetenido: &zero}
				total := decimal.Zero
				for _, p := range []*decimal.Decimal{tot.MntNoGrv, tot.MntNetoIvaTasaMin, tot.MntNetoIVATasaBasica, tot.MntIVATasaMin, tot.MntIVATasaBasica} {
					total = total.Add(*p)
				}
				tot.MntTotal, tot.MntPagar = &total, &total
			}
			docs = append(docs, reportDoc(t, "219000090011", b.ty, serie, int64(i+1), fch, 1, signedAt, tot))
		}
	}
	unsigned, err := cfe.BuildReport(cfe.ReportInput{RUC: "219000090011", Date: cfe.DateOf(signedAt), Seq: 1, CFEs: docs,
		UIValue: decimal.RequireFromString("2.2"), Now: now})
	if err != nil {
		t.Fatal(err)
	}
	got, want := sampleLeaves(t, unsigned), sampleLeaves(t, sample)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the rebuilt report differs from DGI's sample:\n%s", diffLines(want, got))
	}
	signed := signReport(t, unsigned, now)
	testtool.MustValidateXSD(t, testtool.XSD(t, "ReporteDiarioCFE.xsd"), signed)
}

// diffLines lists the lines only one side has.
func diffLines(want, got []string) string {
	in := func(s []string) map[string]int {
		m := map[string]int{}
		for _, x := range s {
			m[x]++
		}
		return m
	}
	w, g := in(want), in(got)
	var out []string
	for x, n := range w {
		if g[x] < n {
			out = append(out, "- "+x)
		}
	}
	for x, n := range g {
		if w[x] < n {
			out = append(out, "+ "+x)
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// monthDay is a report day of the tests below.
var (
	reportDay    = cfe.Date{Year: 2026, Month: time.March, Day: 14}
	reportSigned = time.Date(2026, time.March, 14, 10, 30, 0, 0, cfe.Montevideo)
	reportNow    = time.Date(2026, time.March, 15, 0, 5, 0, 0, cfe.Montevideo)
)

// everyTypeDay makes a day with every type (fullCFE's documents, in
// dollars where the type bills), pesos too, two branches, a credit note in
// dollars, a CFE dated after the report is signed, contingency receipts of
// every type, and annulled numbers of every source, one of them a CFE DGI
// rejected.
func everyTypeDay(t testing.TB) ([][]byte, []cfe.AnnulledRange, rateTable) {
	t.Helper()
	rates := rateTable{"USD 2026-03-14": decimal.RequireFromString("39.8125"), "USD 2026-03-13": decimal.RequireFromString("39.7")}
	var docs [][]byte
	add := func(c *cfe.CFE) {
		b, err := cfe.MarshalXML(c)
		if err != nil {
			t.Fatalf("%d: %v", c.IdDoc.TipoCFE, err)
		}
		end := bytes.LastIndex(b, []byte("</CFE>"))
		docs = append(docs, append(append(append([]byte{}, b[:end]...), testSignature...), b[end:]...))
	}
	for _, ty := range cfe.Types() {
		info, _ := ty.Info()
		base := ty
		if info.Contingency {
			base = ty - 100
		}
		for i := int64(1); i <= 3; i++ {
			c := fullCFE(base)
			c.IdDoc.TipoCFE = ty
			c.TmstFirma = reportSigned.Add(time.Duration(i) * time.Minute)
			c.IdDoc.Serie, c.IdDoc.Nro = "A", i
			if info.Contingency {
				c.IdDoc.Serie, c.IdDoc.Nro = "B", 100+i
			}
			c.IdDoc.FchEmis = reportDay
			c.Emisor.CdgDGISucur = 1 + int(i%2) // two branches
			switch i {
			case 2:
				c.IdDoc.FchEmis = reportDay.AddDays(-1) // issued the day before, signed today
			case 3:
				// Pesos: the same amounts, no rate.
				if c.Totales.TpoMoneda != "" {
					c.Totales.TpoMoneda, c.Totales.TpoCambio = "UYU", nil
				}
			}
			add(c)
		}
		if ty == cfe.EFactura {
			// Dated after the report's signature: converted at its own rate.
			c := fullCFE(ty)
			c.TmstFirma, c.IdDoc.Serie, c.IdDoc.Nro, c.IdDoc.FchEmis = reportSigned, "A", 4, reportDay.AddDays(5)
			add(c)
		}
	}
	annulled := []cfe.AnnulledRange{
		{Type: cfe.ETicket, Serie: "A", From: 4, To: 10, Reason: cfe.AnnulSkippedBlock},
		{Type: cfe.ETicket, Serie: "B", From: 1, To: 1, Reason: cfe.AnnulTechnician, Note: "rollo dañado"},
		{Type: cfe.EFactura, Serie: "A", From: 3, To: 3, Reason: cfe.AnnulDGIRejected, Note: "E07"}, // a CFE signed today
		{Type: cfe.EFactura, Serie: "A", From: 20, To: 29, Reason: cfe.AnnulRestoreBound},
		{Type: cfe.ERemito, Serie: "A", From: 7, To: 8, Reason: cfe.AnnulUsedElsewhere},
		{Type: cfe.ERemito, Serie: "A", From: 8, To: 9, Reason: cfe.AnnulTechnician}, // overlaps the one above
		{Type: 201, Serie: "B", From: 1, To: 1, Reason: cfe.AnnulTechnician},         // CFC numbers are not reported
	}
	return docs, annulled, rates
}

// TestBuildReport_EveryType builds and signs a day with every type, and
// checks it with xmllint, xmlsec1 and an independent recomputation.
func TestBuildReport_EveryType(t *testing.T) {
	t.Parallel()
	docs, annulled, rates := everyTypeDay(t)
	in := cfe.ReportInput{RUC: "219999830019", IDEmisor: 77, Date: reportDay, Seq: 2, CFEs: docs, Annulled: annulled,
		Rates: rates, UIValue: decimal.RequireFromString("6.4208"), Now: reportNow}
	built, err := cfe.BuildReportDetail(in)
	if err != nil {
		t.Fatal(err)
	}
	signed := signReport(t, built.XML, reportNow)
	testtool.MustValidateXSD(t, testtool.XSD(t, "ReporteDiarioCFE.xsd"), signed)
	if out, ok := testtool.XMLSecVerify(t, signed, ""); !ok {
		t.Errorf("xmlsec1 --verify: %s", out)
	}
	exp := reportcheck.Check(t, signed, reportcheck.Input{RUC: in.RUC, Date: in.Date, SignDay: cfe.DateOf(reportNow),
		CFEs: docs, Annulled: annulled, Rate: rates.lookup, UIValue: in.UIValue, TopeUI: decimal.NewFromInt(5000)})
	// Facts of the day the recomputation must have found, so that it is no
	// empty agreement: 21 electronic types with 3 CFEs each plus one, the
	// rejected one out; 7 + 1 + 10 + 3 annulled; 21 CFC types with 3 each.
	if want := int64(21*3+1+7+1+10+3+21*3) - 0; exp.Total != want {
		t.Errorf("CantComprobantes recomputed %d, want %d", exp.Total, want)
	}
	if b := exp.Blocks[cfe.EFactura]; b.Annulled != 11 || b.Issued != 3 || strings.Join(b.UsedRuns, " ") != "A:1-4 A:20-29" {
		t.Errorf("e-Factura recomputed %+v", *b)
	}
	if _, ok := exp.Blocks[201]; !ok || exp.Blocks[201].CFC != 3 {
		t.Errorf("e-Ticket Contingencia recomputed %+v", exp.Blocks[201])
	}
	if len(built.Rates) != 2 || built.Rates[0].Source != "prueba" || built.Rates[0].Day != reportDay.AddDays(-1) {
		t.Errorf("rates used: %+v", built.Rates)
	}
	if built.CFERates == 0 {
		t.Error("no CFE was converted at its own rate (notes, resguardos, the future-dated e-Factura)")
	}
	if !bytes.Contains(signed, []byte("<IDEmisor>77</IDEmisor><SecEnvio>2</SecEnvio><TmstFirmaEnv>2026-03-15T00:05:00-03:00</TmstFirmaEnv>")) {
		t.Errorf("Caratula: %s", signed[:400])
	}
}

// TestBuildReport_ZeroDay: a day without CFEs gives a valid report of zero
// comprobantes and no Resumen.
func TestBuildReport_ZeroDay(t *testing.T) {
	t.Parallel()
	unsigned, err := cfe.BuildReport(cfe.ReportInput{RUC: "219999830019", Date: reportDay, Seq: 1, Now: reportNow})
	if err != nil {
		t.Fatal(err)
	}
	signed := signReport(t, unsigned, reportNow)
	testtool.MustValidateXSD(t, testtool.XSD(t, "ReporteDiarioCFE.xsd"), signed)
	car, got := reportcheck.Read(t, signed)
	if car["CantComprobantes"] != "0" || len(got.Blocks) != 0 || car["FechaResumen"] != "2026-03-14" || car["SecEnvio"] != "1" {
		t.Errorf("zero day: %v %v", car, got.Blocks)
	}
	if _, ok := car["IDEmisor"]; ok {
		t.Error("IDEmisor written though it is 0")
	}
}

// TestBuildReport_Refuses: what would make a wrong report is refused with
// a Spanish message naming the cause.
func TestBuildReport_Refuses(t *testing.T) {
	t.Parallel()
	usdFactura := func(nro int64, fch cfe.Date, signed time.Time) []byte {
		c := fullCFE(cfe.EFactura)
		c.IdDoc.Nro, c.IdDoc.FchEmis, c.TmstFirma = nro, fch, signed
		b, err := cfe.MarshalXML(c)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	ok := usdFactura(1, reportDay, reportSigned)
	rates := rateTable{"USD 2026-03-14": decimal.RequireFromString("40")}
	base := cfe.ReportInput{RUC: "219999830019", Date: reportDay, Seq: 1, Rates: rates, UIValue: decimal.NewFromInt(6), Now: reportNow}
	if _, err := cfe.BuildReport(withCFEs(base, ok)); err != nil {
		t.Fatalf("the good input fails: %v", err)
	}
	cases := []struct {
		name string
		in   cfe.ReportInput
		want string
	}{
		{"missing rate", withCFEs(base, usdFactura(2, reportDay.AddDays(-2), reportSigned)), "falta la cotización fiscal (BCU) de USD para el 2026-03-12"},
		{"other day", withCFEs(base, usdFactura(2, reportDay, reportSigned.AddDate(0, 0, 1))), "fue firmado el 2026-03-15 y el reporte es del 2026-03-14"},
		{"other RUC", func() cfe.ReportInput { in := withCFEs(base, ok); in.RUC = "211111110019"; return in }(), "no es el del reporte"},
		{"twice", withCFEs(base, ok, ok), "figura dos veces"},
		{"signed and voided", func() cfe.ReportInput {
			in := withCFEs(base, ok)
			in.Annulled = []cfe.AnnulledRange{{Type: cfe.EFactura, Serie: "A", From: 1, To: 5, Reason: cfe.AnnulTechnician}}
			return in
		}(), "firmado y también anulado"},
		{"bad range", func() cfe.ReportInput {
			in := base
			in.Annulled = []cfe.AnnulledRange{{Type: cfe.EFactura, Serie: "A", From: 5, To: 1}}
			return in
		}(), "DESDE no puede superar HASTA"},
		{"bad seq", func() cfe.ReportInput { in := base; in.Seq = 0; return in }(), "secuencia de envío"},
		{"not a CFE", withCFEs(base, []byte("<Reporte/>")), "no <CFE>"},
	}
	for _, c := range cases {
		_, err := cfe.BuildReport(c.in)
		if err == nil || !strings.Contains(cfe.ErrorMessage(err), c.want) || cfe.ErrorCode(err) != cfe.EINVALID {
			t.Errorf("%s: got %v, want EINVALID with %q", c.name, err, c.want)
		}
	}
}

func withCFEs(in cfe.ReportInput, docs ...[]byte) cfe.ReportInput {
	in.CFEs = docs
	return in
}

// TestBuildReport_Rates: REP §1's conversion, worked by hand.
func TestBuildReport_Rates(t *testing.T) {
	t.Parallel()
	zero := decimal.Zero
	usd := func(net string, cambio string) *cfe.Totales {
		n := decimal.RequireFromString(net)
		iva := n.Mul(decimal.RequireFromString("0.22"))
		total := n.Add(iva)
		return &cfe.Totales{TpoMoneda: "USD", TpoCambio: numP(cambio), MntNoGrv: &zero, MntExpoyAsim: &zero, MntImpuestoPerc: &zero,
			MntIVaenSusp: &zero, MntNetoIvaTasaMin: &zero, MntNetoIVATasaBasica: &n, MntNetoIVAOtra: &zero,
			IVATasaMin: numP("10"), IVATasaBasica: numP("22"), MntIVATasaMin: &zero, MntIVATasaBasica: &iva, MntIVAOtra: &zero,
			MntTotal: &total, MntPagar: &total}
	}
	docs := [][]byte{
		// An e-Factura of 100 USD net: the table's 40.123456 → 4012.3456 → 4012.35; IVA 22 → 882.716032 → 882.72.
		reportDoc(t, "219999830019", cfe.EFactura, "A", 1, reportDay, 1, reportSigned, usd("100", "39")),
		// Its credit note: its own 39.5 → 1975 and 434.5.
		reportDoc(t, "219999830019", cfe.EFacturaNC, "A", 1, reportDay, 1, reportSigned, usd("50", "39.5")),
	}
	rates := rateTable{"USD 2026-03-14": decimal.RequireFromString("40.123456")}
	unsigned, err := cfe.BuildReport(cfe.ReportInput{RUC: "219999830019", Date: reportDay, Seq: 1, CFEs: docs, Rates: rates,
		UIValue: decimal.NewFromInt(6), Now: reportNow})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"<TipoComp>111</TipoComp><RsmnData><Montos><Mnts_FyT_Item><Fecha>2026-03-14</Fecha><CodSuc>1</CodSuc>",
		"<TotMntIVATasaBas>4012.35</TotMntIVATasaBas><TotMntIVAOtra>0</TotMntIVAOtra><MntIVATasaMin>0</MntIVATasaMin><MntIVATasaBas>882.72</MntIVATasaBas>",
		"<TotMntTotal>4895.07</TotMntTotal>",
		"<TotMntIVATasaBas>1975</TotMntIVATasaBas><TotMntIVAOtra>0</TotMntIVAOtra><MntIVATasaMin>0</MntIVATasaMin><MntIVATasaBas>434.5</MntIVATasaBas>",
		"<TotMntTotal>2409.5</TotMntTotal>",
	} {
		if !bytes.Contains(unsigned, []byte(want)) {
			t.Errorf("report lacks %s:\n%s", want, unsigned)
		}
	}
}

// BenchmarkReport10000 builds and signs the report of a day of 10 000
// CFEs (e-Tickets and e-Facturas in pesos and dollars, two branches).
//
//	go test -run '^$' -bench BenchmarkReport10000 -benchmem ./cfe/
func BenchmarkReport10000(b *testing.B) {
	docs := make([][]byte, 0, 10000)
	for i := 0; i < 10000; i++ {
		ty := cfe.ETicket
		if i%4 == 0 {
			ty = cfe.EFactura
		}
		c := fullCFE(ty)
		c.IdDoc.Nro = int64(i + 1)
		if ty == cfe.EFactura {
			c.IdDoc.Serie = "B"
		}
		if i%3 == 0 {
			c.Totales.TpoMoneda, c.Totales.TpoCambio = "UYU", nil
		}
		c.Emisor.CdgDGISucur = 1 + i%2
		c.TmstFirma = reportSigned.Add(time.Duration(i) * time.Second)
		x, err := cfe.MarshalXML(c)
		if err != nil {
			b.Fatal(err)
		}
		end := bytes.LastIndex(x, []byte("</CFE>"))
		docs = append(docs, append(append(append([]byte{}, x[:end]...), testSignature...), x[end:]...))
	}
	creds, err := signer.GenerateTestCertificate("219999830019", "Almacén La Esquina S.A.", reportNow.AddDate(0, -1, 0))
	if err != nil {
		b.Fatal(err)
	}
	sg, err := signer.New(signer.Config{Credentials: creds, Now: func() time.Time { return reportNow }})
	if err != nil {
		b.Fatal(err)
	}
	in := cfe.ReportInput{RUC: "219999830019", Date: reportDay, Seq: 1, CFEs: docs,
		Rates: rateTable{"USD 2026-03-14": decimal.RequireFromString("39.8125")}, UIValue: decimal.NewFromInt(6), Now: reportNow}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		unsigned, err := cfe.BuildReport(in)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := sg.SignCanonical(unsigned); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(docs)), "cfes/op")
	_ = fmt.Sprint
}

// TestDescribeReport: the technician's summary of a report names its day,
// counts, ranges and totals.
func TestDescribeReport(t *testing.T) {
	t.Parallel()
	docs, annulled, rates := everyTypeDay(t)
	unsigned, err := cfe.BuildReport(cfe.ReportInput{RUC: "219999830019", Date: reportDay, Seq: 3, CFEs: docs, Annulled: annulled,
		Rates: rates, UIValue: decimal.RequireFromString("6.4208"), Now: reportNow})
	if err != nil {
		t.Fatal(err)
	}
	s, err := cfe.DescribeReport(unsigned)
	if err != nil {
		t.Fatal(err)
	}
	testtool.MustContain(t, "summary", s, "reporte diario del 2026-03-14 (RUC 219999830019, secuencia 3): 148 comprobantes",
		"; e-Ticket: 11 usados, 3 emitidos, 8 anulados (usados A 1-10, B 1; anulados A 4-10, B 1)",
		"; e-Factura: 14 usados, 3 emitidos, 11 anulados (usados A 1-4, A 20-29; anulados A 3, A 20-29)",
		"; e-Ticket Contingencia: 3 emitidos", "en 2 sucursal(es)")
	zero, _ := cfe.BuildReport(cfe.ReportInput{RUC: "219999830019", Date: reportDay, Seq: 1, Now: reportNow})
	if s, err := cfe.DescribeReport(zero); err != nil || !strings.Contains(s, "0 comprobantes, sin resumen") {
		t.Errorf("zero day: %q %v", s, err)
	}
	if _, err := cfe.DescribeReport([]byte("<CFE/>")); cfe.ErrorCode(err) != cfe.EINVALID {
		t.Errorf("not a report: %v", err)
	}
}
