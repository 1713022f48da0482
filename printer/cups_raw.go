package printer

import (
	"bytes"
	"context"
	"net/url"
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
	req.File, req.FileSize = bytes.NewReader(data), len(data)
	resp, err := c.do(ctx, "/printers/"+url.PathEscape(p.Queue), req)
	if err != nil {
		return Result{}, p.refused(op, err)
	}
	var id int
	if len(resp.JobAttributes) > 0 {
		id, _ = firstInt(resp.JobAttributes[0], ipp.AttributeJobID)
	}
	if id == 0 {
		return Result{}, unavailable(op, nil, "CUPS aceptó el trabajo para «%s» sin darle un número", p.Queue)
	}
	if stopped, reason := p.state(ctx); stopped {
		p.cancel(id)
		return Result{}, unavailable(op, nil, "la impresora «%s» está detenida: %s; se canceló el trabajo %d",
			p.Queue, firstNonEmpty(reason, "sin motivo informado"), id)
	}
	return Result{Backend: BackendCUPS, Printer: p.Queue, JobID: strconv.Itoa(id), State: StatePending,
		Copies: job.Copies}, nil
}
