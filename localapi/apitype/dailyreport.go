package apitype

import (
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// DailyReportReport is one day of /state's dgi.reportes: the day's last
// report to DGI and DGI's state of it (cfe.DailyReportState). Estado is ""
// while no report of the day reached DGI, else DGI's code: AR received, BR
// rejected, DR processed, ER inconsistent (correct and resend), FR replaced
// by a later SecEnvio.
type DailyReportReport struct {
	Fecha      cfe.Date          `json:"fecha"`
	SecEnvio   int               `json:"sec_envio"`
	Estado     string            `json:"estado"`
	Motivos    []DGIReasonReport `json:"motivos"`
	Enviado    *time.Time        `json:"enviado"`
	Consultado *time.Time        `json:"consultado"`
}

// DailyReportOf is the report of a day's state, as /state's dgi.reportes
// and /cierre's reporte show it.
func DailyReportOf(s cfe.DailyReportState) DailyReportReport {
	r := DailyReportReport{Fecha: s.Date, SecEnvio: s.Seq, Estado: s.State, Motivos: []DGIReasonReport{}}
	for _, m := range s.Reasons {
		r.Motivos = append(r.Motivos, DGIReasonReport(m))
	}
	if !s.SentAt.IsZero() {
		t := s.SentAt
		r.Enviado = &t
	}
	if !s.CheckedAt.IsZero() {
		t := s.CheckedAt
		r.Consultado = &t
	}
	return r
}

// DGIReasonReport is one of DGI's reasons (code, its name, the detail).
type DGIReasonReport struct {
	Codigo  string `json:"codigo"`
	Glosa   string `json:"glosa,omitempty"`
	Detalle string `json:"detalle,omitempty"`
}

// ReportResendRequest is the body of POST /reporte/reenviar: the day whose
// report is sent again, corrected, with SecEnvio + 1.
type ReportResendRequest struct {
	Fecha string `json:"fecha"` // AAAA-MM-DD
}

// ReportResendResult is the answer of POST /reporte/reenviar: the report
// recorded, which the agent sends now.
type ReportResendResult struct {
	OK       bool     `json:"ok"`
	Fecha    cfe.Date `json:"fecha"`
	SecEnvio int      `json:"sec_envio"`
}

// DailyReportRequest is the body of POST /reporte-diario: the technician's
// daily-report commands (cfe-agent reporte, numeros anular, cotizaciones)
// run by the agent that holds the store.
type DailyReportRequest struct {
	// Accion is one of: "reporte" (the signed report of Fecha, SecEnvio),
	// "anular" (void Tipo:Serie:Desde-Hasta with Motivo), "fijar_cotizaciones"
	// (record Cotizaciones), "cotizaciones" (list the rate table).
	Accion       string      `json:"accion"`
	Fecha        string      `json:"fecha,omitempty"`
	SecEnvio     int         `json:"sec_envio,omitempty"`
	Tipo         int         `json:"tipo,omitempty"`
	Serie        string      `json:"serie,omitempty"`
	Desde        int64       `json:"desde,omitempty"`
	Hasta        int64       `json:"hasta,omitempty"`
	Motivo       string      `json:"motivo,omitempty"`
	Cotizaciones []RateQuote `json:"cotizaciones,omitempty"`
}

// RateQuote is one quote of the rate table: the BCU's close of Moneda on
// Fecha, in pesos, and where it came from.
type RateQuote struct {
	Fecha  string `json:"fecha"`
	Moneda string `json:"moneda"`
	Valor  string `json:"valor"`
	Origen string `json:"origen"`
}

// DailyReportResult is the answer of POST /reporte-diario.
type DailyReportResult struct {
	OK bool `json:"ok"`
	// XML is the signed report ("reporte").
	XML string `json:"xml,omitempty"`
	// Resumen is the technician's summary, in Spanish.
	Resumen string `json:"resumen,omitempty"`
	// Cotizaciones is the rate table ("cotizaciones").
	Cotizaciones []RateQuote `json:"cotizaciones,omitempty"`
}
