package printing

import (
	"context"
	"strings"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/escpos"
	"github.com/cfe-agent/cfe-agent/pdf"
	"github.com/cfe-agent/cfe-agent/printer"
)

// PrintReport prints the plain report r (the day's close) on the printer
// called name ("" the default): ESC/POS text on a thermal printer, an A4
// PDF on any other, one copy. jobName names the job.
func (s *Service) PrintReport(ctx context.Context, r pdf.Report, name, jobName string) (PrintResult, error) {
	const op = "printing.PrintReport"
	if s.cfg.Printers.Protocol(name) == printer.ProtocolESCPOS {
		data, err := escpos.RenderReport(r, s.cfg.ESCPOS[strings.ToLower(strings.TrimSpace(name))])
		if err != nil {
			return PrintResult{}, &cfe.Error{Code: cfe.EINTERNAL, Op: op, Err: err,
				Message: "no se pudo generar el informe ESC/POS"}
		}
		res, err := s.cfg.Printers.PrintRaw(ctx, name, printer.RawJob{Name: jobName, Data: data, Copies: 1})
		if err != nil {
			return PrintResult{}, err
		}
		return PrintResult{Printer: res.Printer, Copies: res.Copies, JobID: res.JobID, State: res.State,
			Format: FormatESCPOS}, nil
	}
	b, err := pdf.RenderReport(r, pdf.PaperA4)
	if err != nil {
		return PrintResult{}, &cfe.Error{Code: cfe.EINTERNAL, Op: op, Err: err, Message: "no se pudo generar el PDF del informe"}
	}
	res, err := s.cfg.Printers.Print(ctx, name, printer.Job{Name: jobName, PDF: b, Copies: 1})
	if err != nil {
		return PrintResult{}, err
	}
	return PrintResult{Printer: res.Printer, Copies: res.Copies, JobID: res.JobID, State: res.State,
		Format: FormatPDF}, nil
}
