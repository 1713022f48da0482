package cfe

import "time"

// DailyReportState is where one day's report to DGI stands (REP; RESP 4.1):
// the last report sent for the day and DGI's answer to it.
type DailyReportState struct {
	Date       Date        // FechaResumen: the day whose signed CFEs it reports
	Seq        int         // SecEnvio of the last report sent for the day (0: none sent yet)
	State      string      // "" not sent yet, or DGI's code: AR, BR, DR, ER, FR
	Reasons    []DGIReason // DGI's reasons for BR or ER
	ReceiverID int64       // DGI's IDReceptor of the last report
	SentAt     time.Time   // when the last report was sent
	CheckedAt  time.Time   // when its state was last read from DGI
}
