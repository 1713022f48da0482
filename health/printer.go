package health

import (
	"fmt"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

// Printer is what the agent last learned of its default printer: from
// asking it between jobs, or from a job sent to it.
type Printer struct {
	Alias  string
	OK     bool
	Reason string    // Spanish, when !OK
	At     time.Time // when it was learned
	ByJob  bool      // learned from a job, not from the check between jobs
}

// addPrinter reports the default printer: one that cannot print degrades
// the status (the agent still signs; the receipt cannot be printed), naming
// the printer, the reason and when it was seen.
func addPrinter(rep *apitype.StateReport, p *Printer) {
	if p == nil {
		return
	}
	at := p.At.In(cfe.Montevideo)
	src := apitype.PrinterCheckIdle
	if p.ByJob {
		src = apitype.PrinterCheckJob
	}
	rep.Printer = &apitype.PrinterCheck{Alias: p.Alias, OK: p.OK, Reason: p.Reason, At: at, Source: src}
	if p.OK {
		return
	}
	if p.ByJob {
		Flag(rep, apitype.HealthDegraded, fmt.Sprintf("la impresora predeterminada «%s» no imprimió el último comprobante (%s): %s",
			p.Alias, at.Format("15:04"), p.Reason))
		return
	}
	Flag(rep, apitype.HealthDegraded, fmt.Sprintf("la impresora predeterminada «%s» no está lista: %s (consultada a las %s)",
		p.Alias, p.Reason, at.Format("15:04")))
}
