package health

import (
	"fmt"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// Thresholds of the DGI assessment.
const (
	// dgiRejectionWindow is how long a CFE DGI rejected keeps the agent
	// degraded: long enough for the cashier or the technician to issue the
	// new CFE. The rejection itself is kept for good (the daily report).
	dgiRejectionWindow = 7 * 24 * time.Hour
	// dgiBacklogWarnAfter is the age of the oldest CFE DGI has not received
	// from which the backlog is a warning.
	dgiBacklogWarnAfter = time.Hour
	// dgiListed is how many rejected or overdue CFEs are named one by one.
	dgiListed = 5
)

// DGIStatus is what the agent knows of its CFEs at DGI: in direct mode
// (the profile's dgi.modo: directo) from its own sending, in provider mode
// from what the hosted service reports (nil while it reported nothing).
type DGIStatus struct {
	Counts cfe.DGICounts // store.DB.DGICounts
	// Rejections are the CFEs DGI rejected (BE), newest first, a handful
	// (store.DB.DGIRejections).
	Rejections []cfe.DGIRejection
	// Observations are the contingency receipts DGI observed (CE) and that
	// were not sent again corrected, newest first, a handful
	// (store.DB.DGIObservations).
	Observations []cfe.DGIRejection
	// Overdue are CFEs DGI must hold before the goods leave that it has
	// not received UrgentAfter after they were signed, oldest first, a
	// handful; OverdueTotal counts them all.
	Overdue      []cfe.DGICFE
	OverdueTotal int
	UrgentAfter  time.Duration
	// LastError is the sender's last failure (Spanish), "" after a success;
	// in provider mode the last failure to read the states from the hosted
	// service.
	LastError string
	// Stopped is why direct sending could not start (Spanish: no usable
	// certificate, DGI's certificate expired…); "" when it runs.
	Stopped string
	// Reports are the days whose daily report the agent answers for,
	// newest first, each with its last report's state ("" when none
	// reached DGI yet): app.DailyReports. ReportNote is the reporter's own
	// word on why a day is not reported yet (Spanish; "" when none).
	Reports    []cfe.DailyReportState
	ReportNote string
	// Provider says the hosted service, the provider, builds and sends the
	// reports (provider mode): it, not a command of the agent, corrects
	// one DGI rejected.
	Provider bool
	// AnnulledRefused are the annulled numbers of the last days that the
	// hosted service refused for good (provider mode): its daily report
	// of their day lacks them (store.DB.AnnulledRefusals).
	AnnulledRefused []AnnulledRefusal
}

// AnnulledRefusal is an annulled range the hosted service refused, and why.
type AnnulledRefusal struct {
	Range  cfe.AnnulledRange
	Reason string
}

// dgiName is a CFE as a cashier reads it: "e-Factura A-12".
func dgiName(t cfe.Type, serie string, nro int64) string {
	return fmt.Sprintf("%s %s-%d", t.Name(), serie, nro)
}

// addDGI reports the CFEs sent directly to DGI: the /state block's counts,
// and as warnings that turn the tray amber (degraded): every CFE DGI
// rejected in the last days (which one, why, and what to do), the CFEs DGI
// must hold before the goods leave and has not received in time, the ones
// whose sending has an unknown outcome, and a backlog older than an hour.
func addDGI(rep *apitype.StateReport, d *DGIStatus, now time.Time) {
	if d == nil {
		return
	}
	c := d.Counts
	rep.DGI = &apitype.DGIReport{Enviados: c.Enviados, Aceptados: c.Aceptados, Rechazados: c.Rechazados,
		Observados: c.Observados, Pendientes: c.Pendientes, Desconocidos: c.Desconocidos}
	addDailyReports(rep, d, now)
	for _, r := range d.AnnulledRefused {
		Flag(rep, apitype.HealthDegraded, fmt.Sprintf("el servicio en la nube rechazó los números anulados %s %s (del %s): %s; "+
			"el reporte diario de ese día no los incluye: avise al proveedor", r.Range.Type.Name(), annulledNumbers(r.Range),
			r.Range.ReportDay(), r.Reason))
	}
	if d.Stopped != "" {
		Flag(rep, apitype.HealthDegraded, "no se envían comprobantes a DGI: "+d.Stopped+"; se siguen firmando y quedan pendientes")
	}
	recent := 0
	for _, r := range d.Rejections {
		if now.Sub(r.At) > dgiRejectionWindow {
			continue
		}
		if recent++; recent > dgiListed {
			continue
		}
		Flag(rep, apitype.HealthDegraded, fmt.Sprintf("DGI rechazó el comprobante %s firmado el %s (%s): su número queda anulado; "+
			"emita un comprobante nuevo que lo reemplace y, si el cliente ya lo recibió, avísele",
			dgiName(r.Type, r.Serie, r.Nro), r.TmstFirma.In(cfe.Montevideo).Format("02/01 15:04"), reasons(r.Reasons)))
	}
	if recent > dgiListed {
		Flag(rep, apitype.HealthDegraded, "y "+cfe.Count(int64(recent-dgiListed), "comprobante rechazado por DGI más en los últimos días: necesita un comprobante nuevo que lo reemplace",
			"comprobantes rechazados por DGI más en los últimos días: cada uno necesita un comprobante nuevo que lo reemplace"))
	}
	for i, o := range d.Observations {
		if i == dgiListed {
			Flag(rep, apitype.HealthDegraded, fmt.Sprintf("y %d comprobantes de contingencia más observados por DGI esperan su corrección", len(d.Observations)-dgiListed))
			break
		}
		// An observation stays until it is corrected: the paper form is the
		// fiscal document, and DGI must end up holding it right.
		Flag(rep, apitype.HealthDegraded, fmt.Sprintf("DGI observó el comprobante de contingencia %s (uuid %s; %s): corrija el dato y vuelva a "+
			"ingresarlo con la misma serie y número y «corrige»: %q (docs/contingencia.md)",
			dgiName(o.Type, o.Serie, o.Nro), o.UUID, reasons(o.Reasons), o.UUID))
	}
	if d.OverdueTotal > 0 && len(d.Overdue) > 0 {
		o := d.Overdue[0]
		what := cfe.Count(int64(d.OverdueTotal), "comprobante que DGI debe recibir antes de que salga la mercadería no le llegó",
			"comprobantes que DGI debe recibir antes de que salga la mercadería no le llegaron")
		Flag(rep, apitype.HealthDegraded, fmt.Sprintf("%s en %s; el más antiguo es %s, firmado el %s: verifique la conexión con DGI",
			what, d.UrgentAfter, dgiName(o.Type, o.Serie, o.Nro), o.TmstFirma.In(cfe.Montevideo).Format("02/01 15:04")))
	}
	if c.Desconocidos > 0 {
		Flag(rep, apitype.HealthDegraded, cfe.Count(int64(c.Desconocidos), "comprobante enviado a DGI sin respuesta: se le pregunta a DGI antes de volver a enviarlo",
			"comprobantes enviados a DGI sin respuesta: se le pregunta a DGI antes de volver a enviarlos"))
	}
	if c.Pendientes > 0 && !c.OldestPending.IsZero() {
		if age := now.Sub(c.OldestPending); age > dgiBacklogWarnAfter {
			msg := fmt.Sprintf("comprobantes sin recibir por DGI: %d; el más antiguo espera desde %s",
				c.Pendientes, cfe.Hace(age))
			if d.LastError != "" {
				msg += " (" + d.LastError + ")"
			}
			Flag(rep, apitype.HealthDegraded, msg)
		}
	}
}

// reasons writes DGI's codes for a person: "E05 Formato (falta el RUC)".
func reasons(rs []cfe.DGIReason) string {
	out := ""
	for i, r := range rs {
		if i > 0 {
			out += "; "
		}
		out += r.Codigo
		if r.Glosa != "" {
			out += " " + r.Glosa
		}
		if r.Detalle != "" {
			out += ": " + r.Detalle
		}
	}
	if out == "" {
		return "sin motivo informado"
	}
	return out
}

// annulledNumbers is an annulled range as a cashier reads it: "A-5" or
// "A-5 a A-7".
func annulledNumbers(r cfe.AnnulledRange) string {
	if r.From == r.To {
		return fmt.Sprintf("%s-%d", r.Serie, r.From)
	}
	return fmt.Sprintf("%s-%d a %s-%d", r.Serie, r.From, r.Serie, r.To)
}
