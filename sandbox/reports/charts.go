package reports

import (
	"log/slog"
	"net/http"
	"sort"
	"time"

	"github.com/shopspring/decimal"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/sandbox/auth"
	"github.com/cfe-agent/cfe-agent/sandbox/data"
	"github.com/cfe-agent/cfe-agent/sandbox/issuing"
	"github.com/cfe-agent/cfe-agent/sandbox/web"
)

// Charts serves the dashboard's chart data, which the account pages draw.
type Charts struct {
	cfes CFEs
	now  func() time.Time
	log  *slog.Logger
}

// The dashboard's chart data (interface §4.3: graficaDiaria and
// graficaFacturacionMensual). Both answer the same shape over a window that
// ends today in Montevideo: 30 days, or 12 calendar months.
//
// Rules (documented in docs/sandbox.md):
//   - a CFE falls in the day (month) it was signed in Montevideo, as buscar's
//     fechaFirma filter, so that a bar and buscar over its dates agree;
//   - every CFE counts in "cantidad", notes and counter-receipts included;
//   - the amount is the CFE's MntTotal (C124: the billed total, IVA
//     included, without retentions nor non-billable amounts), in the CFE's
//     currency, never converted;
//   - the sign is cfe.SaleSign's: credit notes subtract, debit notes add
//     (they increase what is owed); an annulment is a note (or a
//     correction), so it cancels the original's amount by these same rules;
//   - remitos and resguardos bill nothing and an e-Boleta de entrada (with
//     its notes) is a purchase: they count with amount 0; an own collection
//     (IndCobPropia) has MntTotal 0 and so does its annulment.

// Chart windows.
const (
	chartDays   = 30
	chartMonths = 12
	// chartBaseCurrency is always among a chart's currencies, so that a
	// company without CFEs still gets its zeros.
	chartBaseCurrency = cfe.CurrencyUYU
)

// Chart granularities, as the answer names them.
const (
	granularityDay   = "dia"
	granularityMonth = "mes"
)

// ChartResponse answers graficaDiaria and graficaFacturacionMensual.
type ChartResponse struct {
	IdEmpresa   int64  `json:"idEmpresa"`
	Agrupacion  string `json:"agrupacion"` // "dia" or "mes"
	ZonaHoraria string `json:"zonaHoraria"`
	Desde       string `json:"desde"` // first day of the window, YYYY-MM-DD
	Hasta       string `json:"hasta"` // last day of the window (today), YYYY-MM-DD
	// Monedas are the currencies of the window's CFEs and UYU, UYU first and
	// the others in alphabetical order; every period lists each of them.
	Monedas []string `json:"monedas"`
	// Tipos are the CFE types issued in the window, ascending; every period
	// lists each of them with each currency they were issued in.
	Tipos    []ChartType   `json:"tipos"`
	Periodos []ChartPeriod `json:"periodos"` // oldest first, empty periods included
	Totales  ChartTotals   `json:"totales"`  // the whole window
}

// ChartType names a CFE type of the window.
type ChartType struct {
	TipoCfe int    `json:"tipoCfe"`
	Nombre  string `json:"nombre"`
	Signo   int    `json:"signo"` // cfe.SaleSign: -1 credit notes, 1 sales and debit notes, 0 no sale
}

// ChartPeriod is one day ("2026-03-02") or month ("2026-03").
type ChartPeriod struct {
	Periodo string `json:"periodo"`
	ChartTotals
}

// ChartTotals are counts and net amounts by currency and by type and currency.
type ChartTotals struct {
	Cantidad int           `json:"cantidad"`
	Montos   []ChartAmount `json:"montos"`  // one per currency of Monedas
	PorTipo  []ChartByType `json:"porTipo"` // one per (type, currency) issued in the window
}

// ChartAmount is the count and net amount of one currency.
type ChartAmount struct {
	Moneda   string          `json:"moneda"`
	Cantidad int             `json:"cantidad"`
	Monto    decimal.Decimal `json:"monto"`
}

// ChartByType is the count and signed amount of one type in one currency.
type ChartByType struct {
	TipoCfe  int             `json:"tipoCfe"`
	Moneda   string          `json:"moneda"`
	Cantidad int             `json:"cantidad"`
	Monto    decimal.Decimal `json:"monto"`
}

// HandleDaily is GET /api/v1/cfeemitido/graficaDiaria: the last 30 days.
func (ch *Charts) HandleDaily(w http.ResponseWriter, r *http.Request) {
	ch.answer(w, r, granularityDay)
}

// HandleMonthly is GET /api/v1/cfeemitido/graficaFacturacionMensual: the last
// 12 months.
func (ch *Charts) HandleMonthly(w http.ResponseWriter, r *http.Request) {
	ch.answer(w, r, granularityMonth)
}

// chartWindow returns the first and last day of the window ending on today.
func chartWindow(today cfe.Date, granularity string) (first cfe.Date) {
	t := today.Time(time.UTC)
	if granularity == granularityDay {
		return cfe.DateOf(t.AddDate(0, 0, -(chartDays - 1)))
	}
	firstOfMonth := time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	return cfe.DateOf(firstOfMonth.AddDate(0, -(chartMonths - 1), 0))
}

// periodOf names the period of a day.
func periodOf(d cfe.Date, granularity string) string {
	if granularity == granularityDay {
		return d.String()
	}
	return d.String()[:7]
}

// periods lists the window's periods, oldest first.
func periods(first, last cfe.Date, granularity string) []string {
	var out []string
	t, end := first.Time(time.UTC), last.Time(time.UTC)
	for !t.After(end) {
		out = append(out, periodOf(cfe.DateOf(t), granularity))
		if granularity == granularityDay {
			t = t.AddDate(0, 0, 1)
		} else {
			t = t.AddDate(0, 1, 0)
		}
	}
	return out
}

// chartEntry is what one CFE adds to its period.
type chartEntry struct {
	period   string
	tipo     cfe.Type
	currency string
	amount   decimal.Decimal // signed
}

// entryOf reads the currency and amount of a stored CFE (cfe.ReadIssuedTotal:
// Totales' TpoMoneda and MntTotal in one streaming pass that stops at the end
// of Totales; UYU when the CFE names no currency).
func entryOf(c *data.CFERecord, period string) (chartEntry, error) {
	t, err := cfe.ReadIssuedTotal(c.XML)
	if err != nil {
		return chartEntry{}, &cfe.Error{Code: cfe.EINTERNAL, Op: "sandbox.chart", Message: "no se pudo leer un CFE guardado", Err: err}
	}
	return chartEntry{period: period, tipo: c.Type, currency: t.Currency,
		amount: t.MntTotal.Mul(decimal.NewFromInt(int64(cfe.SaleSign(c.Type))))}, nil
}

func (ch *Charts) answer(w http.ResponseWriter, r *http.Request, granularity string) {
	p := auth.PrincipalOf(r)
	company, err := p.Company(r.URL.Query().Get("idEmpresa"))
	if err != nil {
		web.WriteError(ch.log, w, r, err)
		return
	}
	today := cfe.DateOf(ch.now().In(cfe.Montevideo))
	first := chartWindow(today, granularity)
	f := issuing.Filter{Company: company, From: first, To: today}
	var entries []chartEntry
	err = ch.cfes.Select(f, func(c *data.CFERecord) error {
		e, err := entryOf(c, periodOf(cfe.DateOf(c.TmstFirma.In(cfe.Montevideo)), granularity))
		entries = append(entries, e)
		return err
	})
	if err != nil {
		web.WriteError(ch.log, w, r, err)
		return
	}
	web.WriteJSON(w, http.StatusOK, buildChart(company, granularity, first, today, entries))
}

// typeCurrency is a (type, currency) series.
type typeCurrency struct {
	tipo     cfe.Type
	currency string
}

func buildChart(company int64, granularity string, first, last cfe.Date, entries []chartEntry) ChartResponse {
	currencies := []string{chartBaseCurrency}
	seenCurrency := map[string]bool{chartBaseCurrency: true}
	seenSeries := map[typeCurrency]bool{}
	seenType := map[cfe.Type]bool{}
	var series []typeCurrency
	var types []cfe.Type
	for _, e := range entries {
		if !seenCurrency[e.currency] {
			seenCurrency[e.currency] = true
			currencies = append(currencies, e.currency)
		}
		if tc := (typeCurrency{e.tipo, e.currency}); !seenSeries[tc] {
			seenSeries[tc] = true
			series = append(series, tc)
		}
		if !seenType[e.tipo] {
			seenType[e.tipo] = true
			types = append(types, e.tipo)
		}
	}
	sort.Strings(currencies[1:])
	sort.Slice(types, func(i, j int) bool { return types[i] < types[j] })
	rank := map[string]int{}
	for i, c := range currencies {
		rank[c] = i
	}
	sort.Slice(series, func(i, j int) bool {
		if series[i].tipo != series[j].tipo {
			return series[i].tipo < series[j].tipo
		}
		return rank[series[i].currency] < rank[series[j].currency]
	})

	empty := func() ChartTotals {
		t := ChartTotals{Montos: make([]ChartAmount, len(currencies)), PorTipo: make([]ChartByType, len(series))}
		for i, c := range currencies {
			t.Montos[i] = ChartAmount{Moneda: c, Monto: decimal.Zero}
		}
		for i, sc := range series {
			t.PorTipo[i] = ChartByType{TipoCfe: int(sc.tipo), Moneda: sc.currency, Monto: decimal.Zero}
		}
		return t
	}
	seriesIndex := map[typeCurrency]int{}
	for i, sc := range series {
		seriesIndex[sc] = i
	}
	add := func(t *ChartTotals, e chartEntry) {
		t.Cantidad++
		m := &t.Montos[rank[e.currency]]
		m.Cantidad++
		m.Monto = m.Monto.Add(e.amount)
		b := &t.PorTipo[seriesIndex[typeCurrency{e.tipo, e.currency}]]
		b.Cantidad++
		b.Monto = b.Monto.Add(e.amount)
	}

	out := ChartResponse{IdEmpresa: company, Agrupacion: granularity, ZonaHoraria: cfe.Montevideo.String(),
		Desde: first.String(), Hasta: last.String(), Monedas: currencies, Tipos: make([]ChartType, 0, len(types)),
		Totales: empty()}
	for _, t := range types {
		out.Tipos = append(out.Tipos, ChartType{TipoCfe: int(t), Nombre: t.Name(), Signo: cfe.SaleSign(t)})
	}
	index := map[string]int{}
	for i, name := range periods(first, last, granularity) {
		index[name] = i
		out.Periodos = append(out.Periodos, ChartPeriod{Periodo: name, ChartTotals: empty()})
	}
	for _, e := range entries {
		add(&out.Periodos[index[e.period]].ChartTotals, e)
		add(&out.Totales, e)
	}
	return out
}
