package sandbox

import (
	"github.com/shopspring/decimal"

	"github.com/cfe-agent/cfe-agent/cfe"
	sdgi "github.com/cfe-agent/cfe-agent/sandbox/dgi"
)

// buildReport writes the unsigned daily report of c (docs/
// reporte-diario-proveedor.md): cfe.BuildReport with the UI value of the
// sandbox's tax configuration and, for CFEs in a foreign currency, the
// CFEs' own TpoCambio (ownRates).
func buildReport(c sdgi.ReportContent) ([]byte, error) {
	rates, err := newOwnRates(c.CFEs)
	if err != nil {
		return nil, err
	}
	return cfe.BuildReport(cfe.ReportInput{RUC: c.RUC, Date: c.Date, Seq: c.Seq, CFEs: c.CFEs, Annulled: c.Annulled,
		Rates: rates, UIValue: cfe.DefaultTaxConfig().ValorUI, Now: c.Now})
}

// ownRates is the sandbox's rate source: it keeps no table of the BCU's
// fiscal rates (REP §1), so a CFE in a foreign currency is converted at the
// TpoCambio the day's CFEs of that currency and issue date declare (the
// first one), and the source says so.
type ownRates map[rateKey]decimal.Decimal

type rateKey struct {
	cur string
	day cfe.Date
}

// ownRatesSource is the source ownRates gives.
const ownRatesSource = "sandbox: el TpoCambio de los CFE del día (el sandbox no tiene la tabla de cotizaciones fiscales del BCU)"

func newOwnRates(cfes [][]byte) (ownRates, error) {
	rates := ownRates{}
	for _, raw := range cfes {
		doc, err := cfe.ParseXML(raw)
		if err != nil {
			return nil, err
		}
		t := doc.Totales
		if t.TpoMoneda == "" || t.TpoMoneda == cfe.CurrencyUYU || t.TpoCambio == nil || !t.TpoCambio.IsPositive() {
			continue
		}
		k := rateKey{t.TpoMoneda, doc.IdDoc.FchEmis}
		if _, ok := rates[k]; !ok {
			rates[k] = *t.TpoCambio
		}
	}
	return rates, nil
}

// Rate implements cfe.RateSource.
func (r ownRates) Rate(cur string, d cfe.Date) (decimal.Decimal, string, bool) {
	v, ok := r[rateKey{cur, d}]
	return v, ownRatesSource, ok
}
