package app

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/shopspring/decimal"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
	"github.com/cfe-agent/cfe-agent/store"
)

// The status page (GET / for browsers) shows the state report, today's sales
// and the last receipts, with every date, number and amount written the
// Uruguayan way by this code (not by the browser's locale). The application
// writes it out (Facade.StatusPage: statusView); the local module renders
// the embedded page from it (localapi.NewStatusPage), and the page's script
// fetches it again every few seconds and swaps its content in.

// statusPage is what the status page of one Facade remembers between
// requests: today's sales and the currencies of older receipts.
type statusPage struct {
	sales salesCache

	mu         sync.Mutex
	currencies map[string]string // uuid → currency of receipts signed before today
}

// maxCurrencies bounds the page's memory of older receipts' currencies.
const maxCurrencies = 1000

// StatusPage writes out what the status page shows (localapi.StatusView):
// the default printer of its reprint buttons and the view (statusView) of
// the state report, today's sales and the recent receipts, as of now.
func (f *Facade) StatusPage(ctx context.Context) (printer string, view any) {
	rep := f.report(ctx)
	now := f.now()
	sales, err := f.page.sales.today(ctx, f.a.DB, cfe.DateOf(now.In(cfe.Montevideo)))
	if err != nil {
		// The chart is the least of the page: show the rest without it.
		sales = nil
	}
	currency := func(uuid string) string {
		if sales != nil {
			if c, ok := sales.currency[uuid]; ok {
				return c
			}
		}
		return f.page.currencyOf(ctx, f.a.DB, uuid)
	}
	return f.a.Profile.DefaultPrinter, newStatusView(rep, sales, currency, now)
}

// currencyOf reads the currency of an older receipt from the store once; ""
// when it cannot be read (the amount is then shown without one).
func (h *statusPage) currencyOf(ctx context.Context, db *store.DB, uuid string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	if c, ok := h.currencies[uuid]; ok {
		return c
	}
	is, err := db.FindByUUID(ctx, uuid)
	if err != nil {
		return ""
	}
	if h.currencies == nil || len(h.currencies) >= maxCurrencies {
		h.currencies = map[string]string{}
	}
	c := currencyOf(is.XML)
	h.currencies[uuid] = c
	return c
}

// Uruguayan formats: dd/mm/aaaa dates, a 24-hour clock, "." between
// thousands and "," before the decimals, the currency's ISO code first.

// formatInt writes n with thousands separators: 1.000.000.
func formatInt(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte('.')
		}
		b.WriteRune(c)
	}
	return b.String()
}

// formatMoney writes an amount with its currency: UYU 1.470,00.
func formatMoney(currency string, d decimal.Decimal) string {
	fixed := d.Abs().StringFixed(2)
	whole, frac, _ := strings.Cut(fixed, ".")
	n, err := strconv.ParseInt(whole, 10, 64)
	if err != nil { // beyond int64: no grouping, still the right digits
		return strings.TrimSpace(currency + " " + d.StringFixed(2))
	}
	sign := ""
	if d.IsNegative() && !d.Round(2).IsZero() {
		sign = "-"
	}
	return strings.TrimSpace(currency + " " + sign + formatInt(n) + "," + frac)
}

// formatDate writes a day as dd/mm/aaaa.
func formatDate(d cfe.Date) string {
	return fmt.Sprintf("%02d/%02d/%04d", d.Day, d.Month, d.Year)
}

// formatDateTime writes an instant in Montevideo as dd/mm/aaaa hh:mm:ss.
func formatDateTime(t time.Time) string {
	return t.In(cfe.Montevideo).Format("02/01/2006 15:04:05")
}

// statusView is what the page shows, every value already written out.
type statusView struct {
	Status, StatusLabel       string
	TestMode                  bool // a sandbox profile: MODO PRUEBA in the header
	Warnings                  []viewWarning
	Profile                   string
	Environment               string
	BaseURL                   string
	Version                   string
	Zone, Offset, ZoneMessage string

	CertSubject, CertRUC, CertExpires string

	SignedToday, LastSigned, Pending string
	Recent                           []viewReceipt

	CAESummary string
	CAEOpen    bool // a type has warnings: the table is unfolded
	CAE        []viewCAE

	Chart *salesChart // nil when the store could not be read

	// Reports are the last days' daily reports to DGI (absent where the
	// agent knows none).
	Reports []viewReport

	Updated string
}

// viewReport is one day's daily report to DGI.
type viewReport struct {
	Fecha, Code                    string // the day (AAAA-MM-DD) and DGI's code, for scripts and tests
	Day, State, Seq, Sent, Reasons string
	Warn                           bool // not (yet) received by DGI
}

type viewWarning struct {
	Text  string
	Error bool
}

type viewReceipt struct {
	UUID, Name, SerieNumero, Total, Signed, Delivery string
	// Find is the receipt on the /caja page (found by its number).
	Find string
}

type viewCAE struct {
	Type, Name, Remaining, Until, Warnings string
	Warn                                   bool
}

var (
	statusLabels  = map[string]string{apitype.HealthOK: "Funcionando", apitype.HealthDegraded: "Requiere atención", apitype.HealthError: "No puede firmar"}
	envLabels     = map[string]string{"produccion": "producción", "sandbox": "sandbox"}
	deliveryNames = map[string]string{cfe.DeliveryPending: "pendiente", cfe.DeliveryAccepted: "enviado", cfe.DeliveryRejected: "rechazado",
		cfe.DeliveryQuarantined: "dañado (en cuarentena)"}
)

// label returns m[k], or k itself when m has no entry.
func label(m map[string]string, k string) string {
	if v, ok := m[k]; ok {
		return v
	}
	return k
}

// newStatusView writes out the report, today's sales and the time now;
// currency names a receipt's currency.
func newStatusView(rep *apitype.StateReport, sales *salesToday, currency func(uuid string) string, now time.Time) statusView {
	v := statusView{
		Status:      rep.Status,
		StatusLabel: label(statusLabels, rep.Status),
		TestMode:    rep.Environment != "" && rep.Environment != "produccion",
		Profile:     rep.Profile,
		Environment: label(envLabels, rep.Environment),
		BaseURL:     rep.BaseURL,
		Version:     rep.Version,
		Zone:        rep.ZonaHoraria.Nombre,
		Offset:      rep.ZonaHoraria.Desfase,
		ZoneMessage: rep.ZonaHoraria.Mensaje,
		SignedToday: formatInt(int64(rep.Receipts.SignedToday)),
		LastSigned:  "ninguno",
		Pending:     formatInt(int64(rep.Outbox.Pending)) + pendingAge(rep.Outbox.OldestPendingAgeS),
		Updated:     formatDateTime(now),
	}
	for _, w := range rep.Warnings {
		v.Warnings = append(v.Warnings, viewWarning{Text: w, Error: rep.Status == apitype.HealthError && isBlocking(w)})
	}
	if c := rep.Certificate; c != nil {
		v.CertSubject, v.CertRUC = c.CommonName, c.RUC
		days := "días"
		if c.DaysLeft == 1 || c.DaysLeft == -1 {
			days = "día"
		}
		v.CertExpires = fmt.Sprintf("%s (%s %s)", formatDate(cfe.DateOf(c.NotAfter.In(cfe.Montevideo))), formatInt(int64(c.DaysLeft)), days)
	}
	if rep.Receipts.LastSignedAt != nil {
		v.LastSigned = formatDateTime(*rep.Receipts.LastSignedAt)
	}
	for _, r := range rep.Receipts.Recent {
		cur := currency(r.UUID)
		v.Recent = append(v.Recent, viewReceipt{
			UUID: r.UUID, Name: r.Nombre, SerieNumero: r.Serie + "-" + strconv.FormatInt(r.Numero, 10),
			Total: formatMoney(cur, r.Total), Signed: formatDateTime(r.FirmadoA), Delivery: label(deliveryNames, r.Entrega),
			Find: "/caja?" + url.Values{"tipo": {strconv.Itoa(int(r.TipoCFE))}, "serie": {r.Serie}, "numero": {strconv.FormatInt(r.Numero, 10)}}.Encode(),
		})
	}
	v.addCAE(rep.CAE)
	v.addReports(rep.DGI)
	if sales != nil {
		v.Chart = newSalesChart(sales, now)
	}
	return v
}

// isBlocking tells a warning that stops signing from one that does not.
func isBlocking(w string) bool {
	w = strings.ToLower(w)
	for _, s := range []string{"no se puede firmar", "no puede firmar", "no hay", "no quedan", "zona horaria", "venció", "disco está lleno", "no se pudo guardar"} {
		if strings.Contains(w, s) {
			return true
		}
	}
	return false
}

// pendingAge says how long the oldest pending delivery waits.
func pendingAge(seconds int64) string {
	if seconds <= 0 {
		return ""
	}
	return " (el más antiguo " + cfe.Hace(time.Duration(seconds)*time.Second) + ")"
}

// addCAE folds the CAE types into one summary line; the types with warnings
// come first and unfold the table.
func (v *statusView) addCAE(types []apitype.CAETypeReport) {
	var total int64
	warned := 0
	for _, t := range types {
		total += t.Remaining
		c := viewCAE{Type: strconv.Itoa(int(t.TipoCFE)), Name: t.Nombre, Remaining: formatInt(t.Remaining), Until: "—",
			Warnings: strings.Join(t.Warnings, "; "), Warn: len(t.Warnings) > 0}
		if t.UsableUntil != nil {
			c.Until = formatDate(*t.UsableUntil)
		}
		if c.Warn {
			warned++
		} else {
			c.Warnings = "—"
		}
		v.CAE = append(v.CAE, c)
	}
	slices.SortStableFunc(v.CAE, func(a, b viewCAE) int {
		switch {
		case a.Warn == b.Warn:
			return 0
		case a.Warn:
			return -1
		}
		return 1
	})
	kinds := "tipos de comprobante"
	if len(types) == 1 {
		kinds = "tipo de comprobante"
	}
	v.CAESummary = fmt.Sprintf("%s %s, %s números restantes", formatInt(int64(len(types))), kinds, formatInt(total))
	switch warned {
	case 0:
		v.CAESummary += ", sin avisos"
	case 1:
		v.CAESummary += ", 1 con avisos"
	default:
		v.CAESummary += fmt.Sprintf(", %d con avisos", warned)
	}
	v.CAEOpen = warned > 0
}

// salesToday is what was sold today by hour (Montevideo), in pesos: the
// e-Tickets and e-Facturas (export and on behalf of others too, contingency
// included) and their debit notes add, credit notes subtract. Amounts in
// other currencies are added up apart.
type salesToday struct {
	day      cfe.Date
	count    int // CFEs of the day read (all types)
	hours    [24]decimal.Decimal
	receipts [24]int
	total    decimal.Decimal
	sold     int
	others   map[string]decimal.Decimal
	currency map[string]string // uuid → currency, also for the recent list
}

// salesCache keeps today's sales until the count of the day's CFEs changes.
type salesCache struct {
	mu  sync.Mutex
	cur *salesToday
}

// maxSalesRead bounds the CFEs one page reads for the chart.
const maxSalesRead = 50000

func (c *salesCache) today(ctx context.Context, db *store.DB, day cfe.Date) (*salesToday, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, err := db.CountByDate(ctx, day, day)
	if err != nil {
		return nil, err
	}
	if c.cur != nil && c.cur.day == day && c.cur.count == n {
		return c.cur, nil
	}
	known := map[string]string{}
	if c.cur != nil && c.cur.day == day {
		known = c.cur.currency
	}
	list, err := db.ListByDate(ctx, day, day, maxSalesRead)
	if err != nil {
		return nil, err
	}
	s := &salesToday{day: day, count: n, others: map[string]decimal.Decimal{}, currency: make(map[string]string, len(list))}
	for _, is := range list {
		cur, ok := known[is.UUID]
		if !ok {
			cur = currencyOf(is.XML)
		}
		s.currency[is.UUID] = cur
		sign := int64(cfe.SaleSign(is.Type))
		if sign == 0 {
			continue
		}
		amount := is.Total.Mul(decimal.NewFromInt(sign))
		if cur != "UYU" {
			s.others[cur] = s.others[cur].Add(amount)
			continue
		}
		h := is.TmstFirma.In(cfe.Montevideo).Hour()
		s.hours[h] = s.hours[h].Add(amount)
		s.receipts[h]++
		s.total = s.total.Add(amount)
		s.sold++
	}
	c.cur = s
	return s, nil
}

// currencyOf is the currency of a signed CFE (cfe.ReadIssuedTotal: TpoMoneda,
// UYU when absent); UYU too for XML this agent signed and cannot read back.
func currencyOf(signed []byte) string {
	if t, err := cfe.ReadIssuedTotal(signed); err == nil {
		return t.Currency
	}
	return cfe.CurrencyUYU
}

// reportStates names DGI's states of a daily report for a person.
var reportStates = map[string]string{
	"": "sin enviar", cfe.ReportReceived: "recibido (AR)", cfe.ReportRejected: "rechazado (BR)", "BA": "rechazado (BA)",
	cfe.ReportProcessed: "procesado (DR)", cfe.ReportMismatch: "con inconsistencias (ER)", cfe.ReportSuperseded: "reemplazado (FR)",
}

// addReports writes out the last days' daily reports.
func (v *statusView) addReports(d *apitype.DGIReport) {
	if d == nil {
		return
	}
	for _, r := range d.Reportes {
		vr := viewReport{Fecha: r.Fecha.String(), Code: r.Estado, Day: formatDate(r.Fecha), State: label(reportStates, r.Estado), Seq: "—", Sent: "—",
			Warn: r.Estado != cfe.ReportReceived && r.Estado != cfe.ReportProcessed}
		if r.SecEnvio > 0 {
			vr.Seq = strconv.Itoa(r.SecEnvio)
		}
		if r.Enviado != nil {
			vr.Sent = formatDateTime(*r.Enviado)
		}
		var reasons []string
		for _, m := range r.Motivos {
			s := strings.TrimSpace(m.Codigo + " " + m.Glosa)
			if m.Detalle != "" {
				s += ": " + m.Detalle
			}
			reasons = append(reasons, s)
		}
		vr.Reasons = strings.Join(reasons, "; ")
		v.Reports = append(v.Reports, vr)
	}
}
