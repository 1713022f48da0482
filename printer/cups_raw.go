package printer

import (
	"context"
	"strconv"

	ipp "github.com/phin1x/go-ipp"
)

// documentFormatRaw is CUPS's format for data it must pass to the printer
// untouched.
const documentFormatRaw = "application/vnd.cups-raw"

// PrintRaw sends a raw job (ESC/POS) to the queue, which passes it to the
// printer untouched (a raw queue, or any queue: CUPS skips its filters for
// this format). It answers once CUPS has accepted the job and the queue is
// not stopped: a stopped queue's job is cancelled, so that it does not print
// later, and the error carries the printer's reason. Its errors are those of
// Print.
func (p *CUPS) PrintRaw(ctx context.Context, job RawJob) (Result, error) {
	const op = "printer.CUPS.PrintRaw"
	job, err := job.normalize(op)
	if err != nil {
		return Result{}, err
	}
	c := p.server.client
	data := job.payload()
	req := c.request(ipp.OperationPrintJob)
	req.OperationAttributes[ipp.AttributePrinterURI] = c.printerURI(p.Queue)
	req.OperationAttributes[ipp.AttributeJobName] = job.Name
	req.OperationAttributes[ipp.AttributeDocumentFormat] = documentFormatRaw
	id, err := c.submit(ctx, op, p, req, data)
	if err != nil {
		return Result{}, err
	}
	if stopped, reason := p.state(ctx); stopped {
		p.cancel(id)
		return Result{}, unavailable(op, nil, "la impresora «%s» está detenida: %s; se canceló el trabajo %d",
			p.Queue, firstNonEmpty(reason, "sin motivo informado"), id)
	}
	return Result{Backend: BackendCUPS, Printer: p.Queue, JobID: strconv.Itoa(id), State: StatePending,
		Copies: job.Copies}, nil
}
