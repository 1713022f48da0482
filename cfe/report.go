package cfe

import (
	"bytes"
	"fmt"
	"regexp"
	"runtime"
	"sort"
	"sync"
	"time"

	"github.com/shopspring/decimal"
)

// The daily report (Reporte Diario de CFE, DGI's Formato_Reporte_CFE v13.2,
// ReporteDiarioCFE.xsd): for every calendar day, also a day without CFEs,
// the issuer reports per type and serie the numbers it used (issued or
// annulled), the numbers annulled, and the amounts in pesos grouped by
// issue date, branch (CodSuc) and third-party payment indicator. BuildReport
// writes it, unsigned, from the day's signed CFEs and annulled numbers; the
// caller signs it like a CFE.
//
// The rules it follows (REP is the report format, V24 the CFE format):
//
//   - FechaResumen is the day the CFEs were signed (REP A-C3): every CFE of
//     the input must carry a TmstFirma of that day, in Montevideo.
//   - A number is used (RngDocsUtil, CantDocsUtil) when it was issued or
//     annulled that day; annulled (RngDocsAnulados, CantDocsAnulados) when
//     the issuer voided it before use or DGI rejected the CFE (REP B-C26,
//     B-C28); issued (CantDocsEmi) = used − annulled. A CFE whose number is
//     annulled by DGI's rejection counts as annulled and its amounts are not
//     reported: it was not issued. A CFE cancelled by a credit note is not
//     annulled.
//   - Contingency receipts (CFC, types 2xx) are reported in their _Cont
//     blocks: amounts and CantCFCEmi, no ranges, no annulled numbers (REP
//     B-C30, "No se incluyen los CFC"). Annulled ranges of 2xx types are
//     ignored.
//   - Amounts are in pesos (REP §1). A CFE in pesos needs no rate. One in a
//     foreign currency is converted at the BCU fiscal rate the RateSource
//     gives for its issue date (FchEmis), except — REP §1's particular cases
//     — an e-Resguardo, a credit or debit note, a CFE in UI (UYI) or UR
//     (UYR), and a CFE whose FchEmis is after the report's signature date:
//     those are converted at the CFE's own TpoCambio (V24 A-C111). A missing
//     rate refuses the report, naming the currency and the day.
//   - IVATasaMin and IVATasaBas are the rates (positive) the group's first
//     CFE carrying them states.
//   - Each converted amount is the exact product amount × rate; a group's
//     field is the exact sum of its CFEs' products rounded to 2 decimals
//     (half away from zero), and TotMntTotal is the sum of the group's
//     rounded fields (REP B-C24: ∑ C12 to C21).
//   - CantDocsMay_topeUI (e-Ticket family only, REP B-C27) counts the CFEs
//     and CFCs issued whose net amount excluding IVA (V24 A-C112..C118) in
//     pesos, at the CFE's own TpoCambio as when it was signed and sent,
//     exceeds the cap in UI × the UI value of the year (annex 2: 10 000 UI
//     until 2022-10-31, 5 000 UI since 2022-11-01).

// Reasons an AnnulledRange records (AnnulledRange.Reason).
const (
	// AnnulSkippedBlock: a block of the numbering journal skipped after a
	// lost or older store (store.Open's recovery).
	AnnulSkippedBlock = "skipped-block"
	// AnnulRestoreBound: the numbers between a restored copy's last number
	// and the bound the restore started numbering from.
	AnnulRestoreBound = "restore-bound"
	// AnnulUsedElsewhere: numbers the technician confirmed were used by
	// another installation or lost (cae used-elsewhere) and never stored here.
	AnnulUsedElsewhere = "used-elsewhere"
	// AnnulTechnician: numbers the technician voided (numeros anular).
	AnnulTechnician = "technician"
	// AnnulDGIRejected: a CFE DGI rejected (BE): its number is annulled on the
	// day it was signed.
	AnnulDGIRejected = "dgi-rejected"
)

// ReportInput is everything one day's report is built from.
type ReportInput struct {
	RUC      string
	IDEmisor int64           // optional (0: omitted)
	Date     Date            // FechaResumen: the day the CFEs were signed, Montevideo
	Seq      int             // SecEnvio (1 for the day's first report)
	CFEs     [][]byte        // every CFE signed that day, the signed XML as stored
	Annulled []AnnulledRange // the numbers annulled that day
	Rates    RateSource      // foreign-currency rates (BCU fiscal rate, REP §1)
	UIValue  decimal.Decimal // the UI value of the year, for CantDocsMay_topeUI
	Now      time.Time       // TmstFirmaEnv
	// TopeUI is the cap in UI above which an e-Ticket counts in
	// CantDocsMay_topeUI; zero: REP annex 2's for Date (10 000 UI until
	// 2022-10-31, 5 000 UI since).
	TopeUI decimal.Decimal
}

// AnnulledRange is a run of numbers that will never be signed.
type AnnulledRange struct {
	Type     Type
	Serie    string
	From, To int64
	Reason   string    // a stable code: AnnulSkippedBlock, AnnulRestoreBound, AnnulUsedElsewhere, AnnulTechnician, AnnulDGIRejected
	Note     string    // free text (the technician's --motivo, DGI's code and glosa, ...)
	At       time.Time // when it was annulled
	// Day is the day whose report counts the numbers: the day (Montevideo)
	// they were annulled, or for a DGI rejection the day the CFE was signed
	// (REP A-C3). Zero: the day of At in Montevideo.
	Day Date
}

// ReportDay returns the day whose report counts r.
func (r AnnulledRange) ReportDay() Date {
	if !r.Day.IsZero() {
		return r.Day
	}
	return DateOf(r.At.In(Montevideo))
}

// Count returns the number of numbers in r.
func (r AnnulledRange) Count() int64 { return r.To - r.From + 1 }

// String names the range as the technician writes it: TIPO:SERIE:DESDE-HASTA.
func (r AnnulledRange) String() string {
	if r.From == r.To {
		return fmt.Sprintf("%d:%s:%d", r.Type, r.Serie, r.From)
	}
	return fmt.Sprintf("%d:%s:%d-%d", r.Type, r.Serie, r.From, r.To)
}

// Overlaps reports whether r and o share a number of the same type and serie.
func (r AnnulledRange) Overlaps(o AnnulledRange) bool {
	return r.Type == o.Type && r.Serie == o.Serie && r.From <= o.To && o.From <= r.To
}

// RateSource gives the rate used to convert an amount in currency cur on day d into pesos, and where it came from.
type RateSource interface {
	Rate(cur string, d Date) (rate decimal.Decimal, source string, ok bool)
}

// ReportRate is one rate a report used: for what currency and issue date,
// its value and where it came from.
type ReportRate struct {
	Currency string
	Day      Date
	Rate     decimal.Decimal
	Source   string
}

// ReportBuilt is a built report and what went into it, for the technician.
type ReportBuilt struct {
	XML []byte
	// Rates lists the table rates the report used, by currency and day.
	Rates []ReportRate
	// CFERates counts the CFEs converted at their own TpoCambio (REP §1's
	// particular cases).
	CFERates int
}

// BuildReport builds the unsigned Reporte document (ReporteDiarioCFE.xsd) of in.
func BuildReport(in ReportInput) ([]byte, error) {
	b, err := BuildReportDetail(in)
	if err != nil {
		return nil, err
	}
	return b.XML, nil
}

// BuildReportDetail is BuildReport, also saying which rates it used. The
// document is written in its canonical form (inclusive C14N 1.0, no XML
// declaration), so that it can be signed as it is (signer.SignCanonical).
//
// Errors: EINVALID, with a Spanish message, when a CFE is not a signed CFE of
// in.RUC signed on in.Date, a number is issued twice or issued and annulled
// by the issuer, an annulled range is malformed, a rate is missing, or the
// input exceeds what the schema admits.
func BuildReportDetail(in ReportInput) (*ReportBuilt, error) {
	const op = "cfe.BuildReport"
	fail := func(format string, args ...any) (*ReportBuilt, error) {
		return nil, &Error{Code: EINVALID, Op: op, Message: fmt.Sprintf(format, args...)}
	}
	if !rucPattern.MatchString(in.RUC) {
		return fail("el RUC del emisor %q no tiene 12 dígitos", in.RUC)
	}
	if in.Date.Before(Date{2011, time.October, 1}) || in.Date.After(Date{2050, time.December, 31}) {
		return fail("la fecha del reporte %s está fuera del rango de DGI (2011-10-01 a 2050-12-31)", in.Date)
	}
	if in.Seq < 1 || in.Seq > 99 {
		return fail("la secuencia de envío %d debe estar entre 1 y 99", in.Seq)
	}
	if in.IDEmisor < 0 || in.IDEmisor > 9999999999 {
		return fail("el IDEmisor %d no tiene hasta 10 dígitos", in.IDEmisor)
	}
	if in.Now.IsZero() {
		return fail("falta la hora de firma del reporte")
	}
	r := &reportBuilder{in: in, types: map[Type]*reportType{}, rates: map[rateKey]ReportRate{}}
	r.tope = in.TopeUI
	if !r.tope.IsPositive() {
		r.tope = decimal.NewFromInt(5000)
		if in.Date.Before(Date{2022, time.November, 1}) {
			r.tope = decimal.NewFromInt(10000)
		}
	}
	r.signDay = DateOf(in.Now.In(Montevideo))
	// The annulled numbers first: a CFE DGI rejected is counted by them.
	for _, a := range in.Annulled {
		if err := r.addAnnulled(a); err != nil {
			return fail("%s", err)
		}
	}
	heads := make([]reportHead, len(in.CFEs))
	if i, err := readReportHeads(in.CFEs, heads); err != nil {
		return fail("CFE %d de %d: %s", i+1, len(in.CFEs), err)
	}
	for i := range heads {
		h := &heads[i]
		if err := r.addCFE(h); err != nil {
			return fail("%s %s-%d: %s", h.Type.Name(), h.Serie, h.Nro, err)
		}
	}
	out, err := r.write()
	if err != nil {
		return fail("%s", err)
	}
	built := &ReportBuilt{XML: out, CFERates: r.cfeRates}
	for _, v := range r.rates {
		built.Rates = append(built.Rates, v)
	}
	sort.Slice(built.Rates, func(a, b int) bool {
		x, y := built.Rates[a], built.Rates[b]
		if x.Currency != y.Currency {
			return x.Currency < y.Currency
		}
		return x.Day.Before(y.Day)
	})
	return built, nil
}

var (
	rucPattern   = regexp.MustCompile(`^[0-9]{12}$`)
	seriePattern = regexp.MustCompile(`^[A-Z]{1,2}$`)
)

// maxReportNumber is the largest CFE number (REP B-C42: NUM 7).
const maxReportNumber = 9999999

type rateKey struct {
	cur string
	day Date
}

type reportBuilder struct {
	in       ReportInput
	tope     decimal.Decimal
	signDay  Date
	types    map[Type]*reportType
	rates    map[rateKey]ReportRate
	cfeRates int
}

// reportType is what one type's Rsmn block gathers.
type reportType struct {
	typ    Type
	series map[string]*reportSerie
	groups map[groupKey]*reportGroup
	cfc    int // CFCs issued (contingency types)
	above  int // CantDocsMay_topeUI
}

// reportSerie is one serie's numbers: issued (signed and not rejected) and
// annulled.
type reportSerie struct {
	issued   []int64
	annulled []numRun // by the issuer, and DGI's rejections
	rejected []numRun // DGI's rejections alone, to tell a rejected CFE
	seen     map[int64]struct{}
}

type numRun struct{ from, to int64 }

type groupKey struct {
	fecha  Date
	codSuc int
	ind3   int
}

// reportGroup sums one Mnts_*_Item: exact products, rounded when written.
type reportGroup struct {
	key                                                 groupKey
	noGrv, expo, impPerc, susp, netMin, netBas, netOtra decimal.Decimal
	ivaMin, ivaBas, ivaOtra, retenido, credFisc         decimal.Decimal
	tasaMin, tasaBas                                    *decimal.Decimal
	hasCredFisc                                         bool
}

func (r *reportBuilder) typeOf(t Type) *reportType {
	rt := r.types[t]
	if rt == nil {
		rt = &reportType{typ: t, series: map[string]*reportSerie{}, groups: map[groupKey]*reportGroup{}}
		r.types[t] = rt
	}
	return rt
}

func (rt *reportType) serie(s string) *reportSerie {
	rs := rt.series[s]
	if rs == nil {
		rs = &reportSerie{seen: map[int64]struct{}{}}
		rt.series[s] = rs
	}
	return rs
}

func (r *reportBuilder) addAnnulled(a AnnulledRange) error {
	info, ok := a.Type.Info()
	if !ok {
		return fmt.Errorf("números anulados %s: %d no es un tipo de CFE", a, a.Type)
	}
	if info.Contingency {
		return nil // CFC numbers are not reported as annulled (REP B-C28)
	}
	if !seriePattern.MatchString(a.Serie) {
		return fmt.Errorf("números anulados %s: la serie %q no es de una o dos letras mayúsculas", a, a.Serie)
	}
	if a.From < 1 || a.To < a.From || a.To > maxReportNumber {
		return fmt.Errorf("números anulados %s: el rango debe ir de 1 a %d y DESDE no puede superar HASTA", a, maxReportNumber)
	}
	rs := r.typeOf(a.Type).serie(a.Serie)
	run := numRun{a.From, a.To}
	rs.annulled = append(rs.annulled, run)
	if a.Reason == AnnulDGIRejected {
		rs.rejected = append(rs.rejected, run)
	}
	return nil
}

func inRuns(runs []numRun, n int64) bool {
	for _, x := range runs {
		if n >= x.from && n <= x.to {
			return true
		}
	}
	return false
}

func (r *reportBuilder) addCFE(h *reportHead) error {
	info, ok := h.Type.Info()
	if !ok {
		return fmt.Errorf("el tipo %d no es un tipo de CFE", h.Type)
	}
	if h.RUCEmisor != r.in.RUC {
		return fmt.Errorf("el RUC emisor %s no es el del reporte (%s)", h.RUCEmisor, r.in.RUC)
	}
	if h.TmstFirma.IsZero() {
		return fmt.Errorf("no tiene TmstFirma: no es un CFE firmado")
	}
	if d := DateOf(h.TmstFirma.In(Montevideo)); d != r.in.Date {
		return fmt.Errorf("fue firmado el %s y el reporte es del %s (REP A-C3: la fecha del resumen es la de la firma)", d, r.in.Date)
	}
	if !seriePattern.MatchString(h.Serie) || h.Nro < 1 || h.Nro > maxReportNumber {
		return fmt.Errorf("serie o número fuera del formato de DGI")
	}
	if h.FchEmis.IsZero() {
		return fmt.Errorf("no tiene FchEmis")
	}
	rt := r.typeOf(h.Type)
	rs := rt.serie(h.Serie)
	if _, dup := rs.seen[h.Nro]; dup {
		return fmt.Errorf("el número figura dos veces entre los CFE del día")
	}
	rs.seen[h.Nro] = struct{}{}
	if !info.Contingency {
		if inRuns(rs.rejected, h.Nro) {
			return nil // rejected by DGI: counted among the annulled, no amounts
		}
		if inRuns(rs.annulled, h.Nro) {
			return fmt.Errorf("el número está firmado y también anulado por el emisor")
		}
		rs.issued = append(rs.issued, h.Nro)
	} else {
		rt.cfc++
	}
	// The rate.
	rate, err := r.rateOf(h, info)
	if err != nil {
		return err
	}
	if info.Element == ElemTicket {
		net := sumOf(h.MntNoGrv, h.MntExpoyAsim, h.MntImpuestoPerc, h.MntIVaenSusp,
			h.MntNetoIvaTasaMin, h.MntNetoIVATasaBasica, h.MntNetoIVAOtra)
		if h.TpoMoneda != "" && h.TpoMoneda != CurrencyUYU {
			if h.TpoCambio == nil {
				return fmt.Errorf("está en %s y no tiene TpoCambio", h.TpoMoneda)
			}
			net = net.Mul(*h.TpoCambio)
		}
		if !r.in.UIValue.IsPositive() {
			return fmt.Errorf("falta el valor de la UI del año para contar los e-Tickets sobre el tope (CantDocsMay_topeUI)")
		}
		if net.GreaterThan(r.tope.Mul(r.in.UIValue)) {
			rt.above++
		}
	}
	k := groupKey{fecha: h.FchEmis, codSuc: h.CdgDGISucur}
	if h.IndPagCta3ros == 1 {
		k.ind3 = 1
	}
	g := rt.groups[k]
	if g == nil {
		g = &reportGroup{key: k}
		rt.groups[k] = g
	}
	one := rate.Equal(decimal.NewFromInt(1))
	add := func(dst *decimal.Decimal, v *decimal.Decimal) {
		switch {
		case v == nil || v.IsZero():
		case one:
			*dst = dst.Add(*v)
		default:
			*dst = dst.Add(v.Mul(rate))
		}
	}
	add(&g.noGrv, h.MntNoGrv)
	add(&g.expo, h.MntExpoyAsim)
	add(&g.impPerc, h.MntImpuestoPerc)
	add(&g.susp, h.MntIVaenSusp)
	add(&g.netMin, h.MntNetoIvaTasaMin)
	add(&g.netBas, h.MntNetoIVATasaBasica)
	add(&g.netOtra, h.MntNetoIVAOtra)
	add(&g.ivaMin, h.MntIVATasaMin)
	add(&g.ivaBas, h.MntIVATasaBasica)
	add(&g.ivaOtra, h.MntIVAOtra)
	add(&g.retenido, h.MntTotRetenido)
	if h.MntTotCredFisc != nil {
		g.hasCredFisc = true
		add(&g.credFisc, h.MntTotCredFisc)
	}
	if g.tasaMin == nil && h.IVATasaMin != nil && h.IVATasaMin.IsPositive() {
		v := *h.IVATasaMin
		g.tasaMin = &v
	}
	if g.tasaBas == nil && h.IVATasaBasica != nil && h.IVATasaBasica.IsPositive() {
		v := *h.IVATasaBasica
		g.tasaBas = &v
	}
	return nil
}

// rateOf is the rate that converts h's amounts into pesos (REP §1).
func (r *reportBuilder) rateOf(h *reportHead, info TypeInfo) (decimal.Decimal, error) {
	cur := h.TpoMoneda
	if cur == "" || cur == CurrencyUYU {
		return decimal.NewFromInt(1), nil
	}
	own := info.Element == ElemResguardo || info.IsNote() || cur == "UYI" || cur == "UYR" || h.FchEmis.After(r.signDay)
	if own {
		if h.TpoCambio == nil || !h.TpoCambio.IsPositive() {
			return decimal.Decimal{}, fmt.Errorf("está en %s y no tiene TpoCambio, con el que REP §1 manda convertirlo", cur)
		}
		r.cfeRates++
		return *h.TpoCambio, nil
	}
	k := rateKey{cur, h.FchEmis}
	if v, ok := r.rates[k]; ok {
		return v.Rate, nil
	}
	if r.in.Rates != nil {
		if rate, src, ok := r.in.Rates.Rate(cur, h.FchEmis); ok && rate.IsPositive() {
			r.rates[k] = ReportRate{Currency: cur, Day: h.FchEmis, Rate: rate, Source: src}
			return rate, nil
		}
	}
	return decimal.Decimal{}, fmt.Errorf("falta la cotización fiscal (BCU) de %s para el %s: cárguela con "+
		"«cfe-agent cotizaciones fijar --fecha %s --moneda %s --valor V» o «cotizaciones importar»",
		cur, h.FchEmis, h.FchEmis.AddDays(-1), cur)
}

// readReportHeads reads every CFE's head into heads, side by side on the
// machine's processors (a day's CFEs are many and independent). It returns
// the index and error of the first CFE that fails.
func readReportHeads(docs [][]byte, heads []reportHead) (int, error) {
	workers := runtime.GOMAXPROCS(0)
	if workers > len(docs)/256 {
		workers = len(docs)/256 + 1
	}
	errs := make([]error, len(docs))
	var wg sync.WaitGroup
	chunk := (len(docs) + workers - 1) / workers
	for w := 0; w < workers; w++ {
		from, to := w*chunk, min((w+1)*chunk, len(docs))
		if from >= to {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := from; i < to; i++ {
				if errs[i] = readReportHead(docs[i], &heads[i]); errs[i] != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return i, err
		}
	}
	return 0, nil
}

// mergeRuns sorts runs and joins those that overlap or touch.
func mergeRuns(runs []numRun) []numRun {
	if len(runs) == 0 {
		return nil
	}
	sort.Slice(runs, func(a, b int) bool { return runs[a].from < runs[b].from })
	out := []numRun{runs[0]}
	for _, x := range runs[1:] {
		last := &out[len(out)-1]
		if x.from <= last.to+1 {
			if x.to > last.to {
				last.to = x.to
			}
			continue
		}
		out = append(out, x)
	}
	return out
}

func runsOf(nums []int64) []numRun {
	runs := make([]numRun, 0, 4)
	sort.Slice(nums, func(a, b int) bool { return nums[a] < nums[b] })
	for _, n := range nums {
		if k := len(runs); k > 0 && runs[k-1].to+1 >= n {
			if n > runs[k-1].to {
				runs[k-1].to = n
			}
			continue
		}
		runs = append(runs, numRun{n, n})
	}
	return runs
}

func countRuns(runs []numRun) int64 {
	var n int64
	for _, x := range runs {
		n += x.to - x.from + 1
	}
	return n
}

// reportBlock is one Rsmn_* element of ReporteDiarioCFE.xsd, in the
// schema's order.
type reportBlock struct {
	typ     Type
	element string
	montos  string // Montos_FyT, Montos_FExp, Montos_Rem, Montos_Rem_Exp, Montos_Res, Montos_Bol
}

var reportBlocks = []reportBlock{
	{101, "Rsmn_Tck", "FyT"}, {102, "Rsmn_Tck_Nota_Credito", "FyT"}, {103, "Rsmn_Tck_Nota_Debito", "FyT"},
	{201, "Rsmn_Tck_Cont", "FyT"}, {202, "Rsmn_Tck_Cont_Nota_Credito", "FyT"}, {203, "Rsmn_Tck_Cont_Nota_Debito", "FyT"},
	{131, "Rsmn_Tck_CtaAj", "FyT"}, {132, "Rsmn_Tck_Nota_Credito_CtaAj", "FyT"}, {133, "Rsmn_Tck_Nota_Debito_CtaAj", "FyT"},
	{231, "Rsmn_Tck_CtaAj_Cont", "FyT"}, {232, "Rsmn_Tck_CtaAj_Cont_Nota_Credito", "FyT"}, {233, "Rsmn_Tck_CtaAj_Cont_Nota_Debito", "FyT"},
	{111, "Rsmn_Fac", "FyT"}, {112, "Rsmn_Fac_Nota_Credito", "FyT"}, {113, "Rsmn_Fac_Nota_Debito", "FyT"},
	{211, "Rsmn_Fac_Cont", "FyT"}, {212, "Rsmn_Fac_Cont_Nota_Credito", "FyT"}, {213, "Rsmn_Fac_Cont_Nota_Debito", "FyT"},
	{141, "Rsmn_Fac_CtaAj", "FyT"}, {142, "Rsmn_Fac_Nota_Credito_CtaAj", "FyT"}, {143, "Rsmn_Fac_Nota_Debito_CtaAj", "FyT"},
	{241, "Rsmn_Fac_CtaAj_Cont", "FyT"}, {242, "Rsmn_Fac_CtaAj_Cont_Nota_Credito", "FyT"}, {243, "Rsmn_Fac_CtaAj_Cont_Nota_Debito", "FyT"},
	{121, "Rsmn_Fac_Exp", "FExp"}, {122, "Rsmn_Fac_Exp_Nota_Credito", "FExp"}, {123, "Rsmn_Fac_Exp_Nota_Debito", "FExp"},
	{221, "Rsmn_Fac_Exp_Cont", "FExp"}, {222, "Rsmn_Fac_Exp_Cont_Nota_Credito", "FExp"}, {223, "Rsmn_Fac_Exp_Cont_Nota_Debito", "FExp"},
	{181, "Rsmn_Rem", "Rem"}, {281, "Rsmn_Rem_Cont", "Rem"},
	{124, "Rsmn_Rem_Exp", "Rem_Exp"}, {224, "Rsmn_Rem_Exp_Cont", "Rem_Exp"},
	{182, "Rsmn_Resg", "Res"}, {282, "Rsmn_Resg_Cont", "Res"},
	{151, "Rsmn_Bol", "Bol"}, {152, "Rsmn_Bol_Nota_Credito", "Bol"}, {153, "Rsmn_Bol_Nota_Debito", "Bol"},
	{251, "Rsmn_Bol_Cont", "Bol"}, {252, "Rsmn_Bol_Cont_Nota_Credito", "Bol"}, {253, "Rsmn_Bol_Cont_Nota_Debito", "Bol"},
}

// ReportBlockElement returns the Rsmn_* element of type t, and false for a
// type the report has no block for.
func ReportBlockElement(t Type) (string, bool) {
	for _, b := range reportBlocks {
		if b.typ == t {
			return b.element, true
		}
	}
	return "", false
}

// Schema limits (ReporteDiarioCFE.xsd).
const (
	maxReportGroups    = 1000 // Mnts_*_Item (2000 for Mnts_FyT_Item; the lower bound for all)
	maxReportRunItems  = 10000
	maxReportAmountAbs = "999999999999999.99"
)

func (r *reportBuilder) write() ([]byte, error) {
	var b bytes.Buffer
	b.Grow(1024 + 512*len(r.types))
	b.WriteString(`<Reporte xmlns="` + NamespaceCFE + `">`)
	b.WriteString(`<Caratula version="1.0">`)
	b.WriteString("<RUCEmisor>" + r.in.RUC + "</RUCEmisor>")
	b.WriteString("<FechaResumen>" + r.in.Date.String() + "</FechaResumen>")
	if r.in.IDEmisor > 0 {
		b.WriteString("<IDEmisor>" + itoa(r.in.IDEmisor) + "</IDEmisor>")
	}
	b.WriteString("<SecEnvio>" + itoa(int64(r.in.Seq)) + "</SecEnvio>")
	b.WriteString("<TmstFirmaEnv>" + r.in.Now.In(Montevideo).Format("2006-01-02T15:04:05-07:00") + "</TmstFirmaEnv>")
	b.WriteString("<CantComprobantes>")
	var total int64
	var body bytes.Buffer
	for _, blk := range reportBlocks {
		rt := r.types[blk.typ]
		if rt == nil {
			continue
		}
		n, err := r.writeBlock(&body, blk, rt)
		if err != nil {
			return nil, err
		}
		total += n
	}
	b.WriteString(itoa(total) + "</CantComprobantes></Caratula>")
	b.Write(body.Bytes())
	b.WriteString("</Reporte>")
	return b.Bytes(), nil
}

// writeBlock writes one Rsmn_* block and returns what it adds to
// CantComprobantes (REP A-C7: ∑ C26 + ∑ C30).
func (r *reportBuilder) writeBlock(b *bytes.Buffer, blk reportBlock, rt *reportType) (int64, error) {
	info, _ := blk.typ.Info()
	// The numbers.
	var used, annulled []reportRun
	var nUsed, nAnnulled int64
	if !info.Contingency {
		series := make([]string, 0, len(rt.series))
		for s := range rt.series {
			series = append(series, s)
		}
		sort.Strings(series)
		for _, s := range series {
			rs := rt.series[s]
			ann := mergeRuns(rs.annulled)
			all := mergeRuns(append(runsOf(rs.issued), ann...))
			for _, x := range all {
				used = append(used, reportRun{s, x})
			}
			for _, x := range ann {
				annulled = append(annulled, reportRun{s, x})
			}
			nUsed += countRuns(all)
			nAnnulled += countRuns(ann)
		}
		if len(used) > maxReportRunItems || len(annulled) > maxReportRunItems {
			return 0, fmt.Errorf("%s: más de %d rangos de números en un día, más de lo que admite el reporte de DGI", blk.typ.Name(), maxReportRunItems)
		}
	} else if rt.cfc == 0 {
		return 0, nil // only ignored annulled numbers
	}
	if !info.Contingency && nUsed == 0 {
		return 0, nil
	}
	b.WriteString("<" + blk.element + "><TipoComp>" + blk.typ.String() + "</TipoComp><RsmnData>")
	if len(rt.groups) > 0 {
		if len(rt.groups) > maxReportGroups {
			return 0, fmt.Errorf("%s: más de %d combinaciones de fecha de comprobante y sucursal en un día", blk.typ.Name(), maxReportGroups)
		}
		groups := make([]*reportGroup, 0, len(rt.groups))
		for _, g := range rt.groups {
			groups = append(groups, g)
		}
		sort.Slice(groups, func(a, c int) bool {
			x, y := groups[a].key, groups[c].key
			if x.fecha != y.fecha {
				return x.fecha.Before(y.fecha)
			}
			if x.codSuc != y.codSuc {
				return x.codSuc < y.codSuc
			}
			return x.ind3 < y.ind3
		})
		b.WriteString("<Montos>")
		for _, g := range groups {
			if err := writeGroup(b, blk, g); err != nil {
				return 0, fmt.Errorf("%s: %w", blk.typ.Name(), err)
			}
		}
		b.WriteString("</Montos>")
	}
	ticket := info.Element == ElemTicket
	if info.Contingency {
		if ticket {
			b.WriteString("<CantDocsMay_topeUI>" + itoa(int64(rt.above)) + "</CantDocsMay_topeUI>")
		}
		b.WriteString("<CantCFCEmi>" + itoa(int64(rt.cfc)) + "</CantCFCEmi>")
		b.WriteString("</RsmnData></" + blk.element + ">")
		return int64(rt.cfc), nil
	}
	b.WriteString("<CantDocsUtil>" + itoa(nUsed) + "</CantDocsUtil>")
	if ticket {
		b.WriteString("<CantDocsMay_topeUI>" + itoa(int64(rt.above)) + "</CantDocsMay_topeUI>")
	}
	b.WriteString("<CantDocsAnulados>" + itoa(nAnnulled) + "</CantDocsAnulados>")
	b.WriteString("<CantDocsEmi>" + itoa(nUsed-nAnnulled) + "</CantDocsEmi>")
	writeRuns(b, "RngDocsUtil", "RDU_Item", used)
	writeRuns(b, "RngDocsAnulados", "RDA_Item", annulled)
	b.WriteString("</RsmnData></" + blk.element + ">")
	return nUsed, nil
}

type reportRun struct {
	serie string
	run   numRun
}

func writeRuns(b *bytes.Buffer, list, item string, runs []reportRun) {
	if len(runs) == 0 {
		return
	}
	b.WriteString("<" + list + ">")
	for _, x := range runs {
		b.WriteString("<" + item + "><Serie>" + x.serie + "</Serie><NroDesde>" + itoa(x.run.from) +
			"</NroDesde><NroHasta>" + itoa(x.run.to) + "</NroHasta></" + item + ">")
	}
	b.WriteString("</" + list + ">")
}

var maxReportAmount = decimal.RequireFromString(maxReportAmountAbs)

// writeGroup writes one Mnts_*_Item.
func writeGroup(b *bytes.Buffer, blk reportBlock, g *reportGroup) error {
	var bad error
	amount := func(name string, v decimal.Decimal, negOK bool) {
		if bad != nil {
			return
		}
		if v.Abs().GreaterThan(maxReportAmount) || (!negOK && v.IsNegative()) {
			bad = fmt.Errorf("el total %s del %s en la sucursal %d (%s) está fuera de lo que admite el reporte",
				name, g.key.fecha, g.key.codSuc, v.StringFixed(2))
			return
		}
		b.WriteString("<" + name + ">" + v.String() + "</" + name + ">")
	}
	round := func(v decimal.Decimal) decimal.Decimal { return v.Round(2) }
	item := "Mnts_" + blk.montos + "_Item"
	b.WriteString("<" + item + "><Fecha>" + g.key.fecha.String() + "</Fecha><CodSuc>" + itoa(int64(g.key.codSuc)) + "</CodSuc>")
	ind3 := func() {
		if g.key.ind3 == 1 {
			b.WriteString("<IndPagCta3ros>1</IndPagCta3ros>")
		}
	}
	switch blk.montos {
	case "FyT":
		ind3()
		f := []decimal.Decimal{round(g.noGrv), round(g.expo), round(g.impPerc), round(g.susp), round(g.netMin),
			round(g.netBas), round(g.netOtra), round(g.ivaMin), round(g.ivaBas), round(g.ivaOtra)}
		names := []string{"TotMntNoGrv", "TotMntExpyAsim", "TotMntImpPerc", "TotMntIVAenSusp", "TotMntIVATasaMin",
			"TotMntIVATasaBas", "TotMntIVAOtra", "MntIVATasaMin", "MntIVATasaBas", "MntIVAOtra"}
		sum := decimal.Zero
		for i, v := range f {
			amount(names[i], v, false)
			sum = sum.Add(v)
		}
		if g.tasaMin != nil {
			b.WriteString("<IVATasaMin>" + g.tasaMin.String() + "</IVATasaMin>")
		}
		if g.tasaBas != nil {
			b.WriteString("<IVATasaBas>" + g.tasaBas.String() + "</IVATasaBas>")
		}
		amount("TotMntTotal", sum, false)
		amount("TotMntRetenido", round(g.retenido), true)
		if g.hasCredFisc {
			amount("TotMntCredFisc", round(g.credFisc), true)
		}
	case "FExp":
		ind3()
		e := round(g.expo)
		amount("TotMntExpyAsim", e, false)
		amount("TotMntTotal", e, false)
	case "Rem":
	case "Rem_Exp":
		e := round(g.expo)
		amount("TotMntExpyAsim", e, true)
		amount("TotMntTotal", e, true)
	case "Res":
		amount("TotMntRetenido", round(g.retenido), true)
		if g.hasCredFisc {
			amount("TotMntCredFisc", round(g.credFisc), true)
		}
	case "Bol":
		n, s := round(g.noGrv), round(g.susp)
		amount("TotMntNoGrv", n, false)
		amount("TotMntIVAenSusp", s, false)
		amount("TotMntTotal", n.Add(s), false)
		amount("TotMntRetenido", round(g.retenido), true)
	}
	b.WriteString("</" + item + ">")
	return bad
}
