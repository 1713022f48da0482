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
