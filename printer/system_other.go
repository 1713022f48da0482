//go:build !windows

package printer

import "context"

// windowsPrinters returns EUNAVAILABLE: there is no Windows spooler here.
func windowsPrinters(context.Context) ([]SystemPrinter, error) {
	return nil, unavailable("printer.SystemPrinters", nil, "este equipo no es Windows: no hay spooler de Windows que consultar")
}
