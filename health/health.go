package health

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// Warning thresholds.
const (
	certWarnDays    = 30        // certificate expiring within this many days
	outboxWarnAfter = time.Hour // oldest undelivered CFE older than this
)

// Assess adds to rep what st says, as seen at now: the certificate, the CAE
// ranges by type, the outbox, the recent receipts, the hosted service, a
// numbering hold, the disk and the backups, each with the warnings it
// raises and the status they set (Flag). rep's own part (base URL, version,
// profile, environment, zone) is the caller's.
func Assess(rep *apitype.StateReport, st State, now time.Time) {
	addCertificate(rep, st.Certificate, st.CertificateError, now)
	addCAE(rep, st.CAE)
	addOutbox(rep, st.Outbox, now)
	addReceipts(rep, st.Receipts)
	addHosted(rep, st.Hosted, st.Outbox, now)
	addNumberingHold(rep, st.NumberingHold)
	addStorage(rep, st.Storage)
	addBackup(rep, st.Backup, now)
	addDGI(rep, st.DGI, now)
	addPrinter(rep, st.Printer)
}

// Flag raises rep's status to at least status (ok < degraded < error) and
// records warning, in Spanish, as one of the reasons.
func Flag(rep *apitype.StateReport, status, warning string) {
	if severity(status) > severity(rep.Status) {
		rep.Status = status
	}
	rep.Warnings = append(rep.Warnings, warning)
}

func severity(status string) int {
	return slices.Index([]string{apitype.HealthOK, apitype.HealthDegraded, apitype.HealthError}, status)
}

func addCertificate(rep *apitype.StateReport, c *cfe.CertSummary, problem string, now time.Time) {
	if c == nil {
		rep.CertificateError = problem
		if problem != "" {
			Flag(rep, apitype.HealthError, "el certificado de firma no se puede usar: "+problem+": no se puede firmar")
			return
		}
		Flag(rep, apitype.HealthError, "no hay certificado de firma configurado: no se puede firmar")
		return
	}
	days := int(math.Floor(c.NotAfter.Sub(now).Hours() / 24))
	rep.Certificate = &apitype.CertificateReport{CertSummary: *c, DaysLeft: days}
	expiry := c.NotAfter.In(cfe.Montevideo).Format(time.DateOnly)
	switch {
	case now.After(c.NotAfter):
		Flag(rep, apitype.HealthError, fmt.Sprintf("el certificado de firma venció el %s: no se puede firmar", expiry))
	case now.Before(c.NotBefore):
		Flag(rep, apitype.HealthError, fmt.Sprintf("el certificado de firma recién es válido desde el %s: no se puede firmar",
			c.NotBefore.In(cfe.Montevideo).Format(time.DateOnly)))
	case days < certWarnDays:
		Flag(rep, apitype.HealthDegraded, fmt.Sprintf("el certificado de firma vence el %s (quedan %d días): renuévelo", expiry, days))
	}
}

// addCAE groups the ranges by CFE type and warns about types that run out of
// numbers or of time: a type is short of numbers when every range of it with
// numbers left is nearly used up, and short of time when every such range is
// near its expiry (the store flags each range). The agent cannot sign at all
// when no type has numbers.
func addCAE(rep *apitype.StateReport, ranges []cfe.RangeUse) {
	byType := make(map[cfe.Type]*apitype.CAETypeReport)
	short := make(map[cfe.Type][2]bool) // [numbers, time] for every usable range so far
	for _, u := range ranges {
		t := u.Range.Type
		tr := byType[t]
		if tr == nil {
			tr = &apitype.CAETypeReport{TipoCFE: t, Nombre: t.Name(), Ranges: []apitype.CAERangeReport{}, Warnings: []string{}}
			byType[t] = tr
			short[t] = [2]bool{true, true}
		}
		sh := short[t]
		addRange(tr, u, &sh)
		short[t] = sh
	}

	rep.CAE = make([]apitype.CAETypeReport, 0, len(byType))
	usable := false
	for _, t := range slices.Sorted(maps.Keys(byType)) {
		tr := byType[t]
		slices.SortFunc(tr.Ranges, func(a, b apitype.CAERangeReport) int {
			return cmp.Or(cmp.Compare(a.Serie, b.Serie), cmp.Compare(a.Desde, b.Desde))
		})
		tr.Warnings = append(tr.Warnings, typeWarnings(tr, short[t])...)
		for _, w := range tr.Warnings {
			Flag(rep, apitype.HealthDegraded, w)
		}
		usable = usable || tr.Remaining > 0
		rep.CAE = append(rep.CAE, *tr)
	}
	if !usable {
		Flag(rep, apitype.HealthError, "no hay números CAE vigentes para ningún tipo de comprobante: no se puede firmar")
	}
}

// addRange adds the range use u to its type's report tr: the range's line
// (the range, and its use as the store reports it), and, when it can still
// be used, its numbers, its expiry and whether it keeps the type short of
// numbers and of time (short: [numbers, time] for the type's usable ranges
// so far).
func addRange(tr *apitype.CAETypeReport, u cfe.RangeUse, short *[2]bool) {
	tr.Ranges = append(tr.Ranges, apitype.CAERangeReport{Serie: u.Range.Serie, Desde: u.Range.DNro, Hasta: u.Range.HNro,
		Vence: u.Range.Vencimiento, Origen: u.Range.Source, RangeUse: u})
	if u.Expired || u.Remaining <= 0 {
		return
	}
	tr.Remaining += u.Remaining
	if tr.UsableUntil == nil || u.Range.Vencimiento.After(*tr.UsableUntil) {
		v := u.Range.Vencimiento
		tr.UsableUntil = &v
	}
	*short = [2]bool{short[0] && u.NearlyUsedUp, short[1] && u.NearExpiry}
}

// typeWarnings are the warnings of one CFE type: no numbers left, few
// numbers left, or its usable ranges near their expiry (short: [numbers,
// time]).
func typeWarnings(tr *apitype.CAETypeReport, short [2]bool) []string {
	var out []string
	switch {
	case tr.Remaining == 0:
		out = append(out, fmt.Sprintf("no quedan números CAE vigentes para %s", tr.Nombre))
	case short[0]:
		out = append(out, fmt.Sprintf("quedan %d números CAE para %s: solicite un nuevo rango", tr.Remaining, tr.Nombre))
	}
	if tr.Remaining > 0 && short[1] {
		out = append(out, fmt.Sprintf("los rangos CAE de %s vencen el %s: solicite un nuevo rango", tr.Nombre, tr.UsableUntil))
	}
	return out
}

// addNumberingHold reports a store that refuses to number until it knows
// where numbering stands: the agent cannot sign (the series a technician
// already settled excepted).
func addNumberingHold(rep *apitype.StateReport, h *NumberingHold) {
	if h == nil {
		return
	}
	rep.Numeracion = &apitype.NumberingReport{EnEspera: true, Desde: h.Since.In(cfe.Montevideo), Motivo: h.Reason,
		SeriesConfirmadas: append([]string{}, h.Settled...)}
	msg := "no se puede firmar: " + h.Reason + ". Se consulta al servicio en línea el último número usado; " +
		"si no responde, un técnico debe ejecutar «cfe-agent cae used-elsewhere»"
	if len(h.Settled) > 0 {
		msg += " (ya confirmadas: " + strings.Join(h.Settled, ", ") + ")"
	}
	Flag(rep, apitype.HealthError, msg)
}

func addOutbox(rep *apitype.StateReport, o cfe.Outbox, now time.Time) {
	rep.Outbox = apitype.OutboxReport{Outbox: o, Quarantine: make([]apitype.QuarantinedCFE, 0, len(o.Quarantine))}
	rep.Outbox.Outbox.Quarantine = nil // the report's own list names them
	addQuarantine(rep, o)
	if o.Pending == 0 || o.OldestPending.IsZero() {
		return
	}
	age := now.Sub(o.OldestPending)
	rep.Outbox.OldestPendingAgeS = int64(age / time.Second)
	if age > outboxWarnAfter {
		Flag(rep, apitype.HealthDegraded, fmt.Sprintf("comprobantes sin enviar al servicio: %d; el más antiguo espera desde %s",
			o.Pending, cfe.Hace(age)))
	}
}

// addQuarantine lists the CFEs held out of delivery because their stored
// record cannot be read back, each a degraded warning naming it and the
// command that recovers it: the agent signs, but a signed receipt does not
// reach the hosted service until a technician acts.
func addQuarantine(rep *apitype.StateReport, o cfe.Outbox) {
	for _, q := range o.Quarantine {
		r := apitype.QuarantinedCFE{Quarantined: q}
		r.Since = q.Since.In(cfe.Montevideo)
		if q.Type != 0 {
			r.Nombre = q.Type.Name()
		}
		if !q.CommittedAt.IsZero() {
			r.CommittedAt = q.CommittedAt.In(cfe.Montevideo)
		}
		rep.Outbox.Quarantine = append(rep.Outbox.Quarantine, r)
		Flag(rep, apitype.HealthDegraded, fmt.Sprintf("el comprobante %s está dañado en el archivo de datos y no se envía "+
			"al servicio en la nube (en cuarentena desde el %s: %s): recupérelo con «cfe-agent recuperar %s»",
			quarantinedName(q), q.Since.In(cfe.Montevideo).Format("02/01 15:04"), q.Reason, q.UUID))
	}
	if more := o.Quarantined - len(o.Quarantine); more > 0 {
		Flag(rep, apitype.HealthDegraded, "y "+cfe.Count(int64(more), "comprobante dañado más", "comprobantes dañados más")+" en cuarentena: vea «cfe-agent doctor»")
	}
}

// quarantinedName is a quarantined CFE in the sentence "el comprobante …
// está dañado": "e-Ticket A-8", else "con uuid …".
func quarantinedName(q cfe.Quarantined) string {
	if q.Type != 0 {
		return fmt.Sprintf("%s %s-%d", q.Type.Name(), q.Serie, q.Nro)
	}
	return "con uuid " + q.UUID
}

func addReceipts(rep *apitype.StateReport, r Receipts) {
	rep.Receipts = apitype.ReceiptsReport{SignedToday: r.SignedToday, Recent: make([]apitype.RecentReceipt, 0, len(r.Recent))}
	for _, is := range r.Recent {
		rep.Receipts.Recent = append(rep.Receipts.Recent, apitype.RecentReceipt{UUID: is.UUID, TipoCFE: is.Type,
			Nombre: is.Type.Name(), Serie: is.Serie, Numero: is.Nro, Total: is.Total,
			FirmadoA: is.TmstFirma.In(cfe.Montevideo), Entrega: is.Delivery.State})
	}
	if !r.LastSignedAt.IsZero() {
		t := r.LastSignedAt.In(cfe.Montevideo)
		rep.Receipts.LastSignedAt = &t
	}
}
