//go:build !windows

package printer

import "context"

// PrintRaw returns ENOTFOUND: there is no Windows spooler here.
func (p *Spooler) PrintRaw(context.Context, RawJob) (Result, error) {
	return Result{}, notFound("printer.Spooler.PrintRaw", nil,
		"la impresora «%s» es de Windows y este equipo no lo es", p.Printer)
}
