package reports

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/shopspring/decimal"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/sandbox/auth"
	"github.com/cfe-agent/cfe-agent/sandbox/issuing"
	"github.com/cfe-agent/cfe-agent/sandbox/web"
)

// accountingHeader is the header row of the accounting export. Each row is
// one CFE and one tax treatment (tasaIva):
//
//   - minima, basica, otra: the net taxed at that IVA rate (netoGravado), its
//     IVA (iva) and the rate in percent (porcentajeIva; empty for otra);
//   - sin_iva: the amounts outside IVA: noGravado (MntNoGrv, DGI's "monto no
//     gravado", where lines exempt of IVA, IndFact 1, add up), exportacion
//     (MntExpoyAsim, exports and similar operations) and otros
//     (MntImpuestoPerc + MntIVaenSusp, or an e-Resguardo's MntTotRetenido).
//
// A row is written for each treatment with an amount other than zero; a CFE
// with none (an e-Remito) still gets one sin_iva row of zeros. total is the
// row's sum (netoGravado + iva + exportacion + noGravado + otros), so the totals of
// a CFE's rows add up to its MntTotal (MntTotRetenido for an e-Resguardo).
// Credit notes' amounts are negative, so that adding a period's rows gives
// its net sales; documents and debit notes are positive. anulado is S when
// another CFE annuls this one (the annulling credit note is a row of its
// own), else N.
var accountingHeader = []string{"idCfe", "fecha", "tipoCfe", "serie", "numero", "tipoDocReceptor", "documentoReceptor",
	"moneda", "tipoCambio", "tasaIva", "porcentajeIva", "netoGravado", "iva", "exportacion", "noGravado", "otros", "total", "anulado"}

// Tax treatments of the accounting rows.
const (
	rateMin   = "minima"
	rateBasic = "basica"
	rateOther = "otra"
	rateNone  = "sin_iva"
)

// HandleAccounting is POST
// /api/v1/ExportacionContable/exportarSistemaContable: buscar's filter (JSON
// body) → CSV (UTF-8, comma-separated, header row) of the selected CFEs.
func (x *Exports) HandleAccounting(w http.ResponseWriter, r *http.Request) {
	var req issuing.CFEFilter
	if err := web.DecodeJSON(r, &req); err != nil {
		web.WriteError(x.log, w, r, err)
		return
	}
	f, err := req.Resolve(auth.PrincipalOf(r))
	if err != nil {
		web.WriteError(x.log, w, r, err)
		return
	}
	rows, err := x.selectRows(f)
	if err != nil {
		web.WriteError(x.log, w, r, err)
		return
	}
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	if err := cw.Write(accountingHeader); err != nil {
		web.WriteError(x.log, w, r, err)
		return
	}
	for _, row := range rows {
		for _, line := range accountingLines(row) {
			if err := cw.Write(line); err != nil {
				web.WriteError(x.log, w, r, err)
				return
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		web.WriteError(x.log, w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="contable-%d.csv"`, f.Company))
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes()) // a failure means the client went away
}

// accountingLines are the CSV rows of one CFE (see accountingHeader).
func accountingLines(x exportRow) [][]string {
	t := x.doc.Totales
	info, _ := x.rec.Type.Info()
	sign := decimal.NewFromInt(1)
	if info.Kind == cfe.KindCreditNote {
		sign = decimal.NewFromInt(-1)
	}
	val := func(ds ...*decimal.Decimal) decimal.Decimal {
		sum := decimal.Zero
		for _, d := range ds {
			if d != nil {
				sum = sum.Add(*d)
			}
		}
		return sum
	}
	type part struct {
		rate                          string
		pct                           *decimal.Decimal
		net, iva, expo, nontax, other decimal.Decimal
	}
	others := val(t.MntImpuestoPerc, t.MntIVaenSusp)
	if info.Element == cfe.ElemResguardo {
		others = val(t.MntTotRetenido)
	}
	parts := []part{
		{rate: rateMin, pct: t.IVATasaMin, net: val(t.MntNetoIvaTasaMin), iva: val(t.MntIVATasaMin)},
		{rate: rateBasic, pct: t.IVATasaBasica, net: val(t.MntNetoIVATasaBasica), iva: val(t.MntIVATasaBasica)},
		{rate: rateOther, net: val(t.MntNetoIVAOtra), iva: val(t.MntIVAOtra)},
		{rate: rateNone, expo: val(t.MntExpoyAsim), nontax: val(t.MntNoGrv), other: others},
	}
	rec := x.rec
	rcp := x.receptor()
	tipoDoc := ""
	if rcp.TipoDocRecep != 0 {
		tipoDoc = strconv.Itoa(rcp.TipoDocRecep)
	}
	cambio := ""
	if t.TpoCambio != nil {
		cambio = t.TpoCambio.String()
	}
	annulled := "N"
	if rec.CancelledBy != 0 {
		annulled = "S"
	}
	var out [][]string
	for i, p := range parts {
		total := p.net.Add(p.iva).Add(p.expo).Add(p.nontax).Add(p.other)
		empty := p.net.IsZero() && p.iva.IsZero() && p.expo.IsZero() && p.nontax.IsZero() && p.other.IsZero()
		if empty && !(i == len(parts)-1 && len(out) == 0) {
			continue
		}
		pct := ""
		if p.pct != nil {
			pct = p.pct.String()
		}
		out = append(out, []string{
			strconv.FormatInt(rec.ID, 10), rec.FchEmis.String(), strconv.Itoa(int(rec.Type)), rec.Serie, strconv.FormatInt(rec.Nro, 10),
			tipoDoc, spreadsheetText(rcp.DocRecep + rcp.DocRecepExt), t.Currency(), cambio, p.rate, pct,
			money(p.net.Mul(sign)), money(p.iva.Mul(sign)), money(p.expo.Mul(sign)), money(p.nontax.Mul(sign)),
			money(p.other.Mul(sign)), money(total.Mul(sign)), annulled,
		})
	}
	return out
}

// spreadsheetText keeps a free-text value (a foreign receiver's document is
// whatever the POS typed) from being read as a formula when the CSV is
// opened in a spreadsheet: a value starting with = + - @ or a tab or carriage
// return gets a leading apostrophe, the spreadsheets' own mark for text.
// Amount columns are never passed through it.
func spreadsheetText(v string) string {
	if v != "" && strings.ContainsRune("=+-@\t\r", rune(v[0])) {
		return "'" + v
	}
	return v
}

// money writes an amount with at least two decimals and every digit it has.
func money(d decimal.Decimal) string {
	if d.Exponent() < -2 {
		return d.String()
	}
	return d.StringFixed(2)
}
