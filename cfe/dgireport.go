package cfe

import "time"

// A daily report sent to DGI in direct mode, as the store keeps it
// (store/dgireport.go; package dgisend moves it). DGI's own states are
// DailyReportState.State's: AR, BR, and later DR, ER, FR.

// Where the sending of one report stands, before DGI's answer is known.
const (
	ReportRecorded = "registrado"  // recorded, not sent yet (or nothing reached DGI)
	ReportUnknown  = "desconocido" // sent without a trustworthy answer: DGI is asked before it is sent again
	ReportAnswered = "respondido"  // DGI's answer (or a query) gave its state
)

// DGI's states of a daily report (RESP 3.1 and EFACCONSULTARENVIOSREPORTE).
const (
	ReportReceived   = "AR" // received
	ReportRejected   = "BR" // rejected at reception (R01–R06)
	ReportProcessed  = "DR" // processed
	ReportMismatch   = "ER" // processed with inconsistencies: correct it and resend it with SecEnvio + 1
	ReportSuperseded = "FR" // replaced by a later SecEnvio of the same day
)

// ReportFinal reports whether DGI's state s of a report will not change
// any more: DR, ER, FR and BR; AR is waiting to be processed.
func ReportFinal(s string) bool {
	return s == ReportProcessed || s == ReportMismatch || s == ReportSuperseded || s == ReportRejected
}

// DGIDailyReport is one report of a day (one SecEnvio) as sent.
type DGIDailyReport struct {
	DailyReportState        // Seq is this report's SecEnvio
	Phase            string // ReportRecorded, ReportUnknown or ReportAnswered
	XML              []byte // the signed report, byte for byte as sent
	Attempts         int    // times it was sent
	LastError        string // the last failure to send it or to read its state (Spanish)
	RecordedAt       time.Time
}
