//go:build windows

package printer

import (
	"context"
	"errors"
	"strconv"
	"unsafe"

	"golang.org/x/sys/windows"
)

// The Windows spooler's functions (winspool.drv), loaded on first use.
var (
	winspool             = windows.NewLazySystemDLL("winspool.drv")
	procOpenPrinterW     = winspool.NewProc("OpenPrinterW")
	procClosePrinter     = winspool.NewProc("ClosePrinter")
	procStartDocPrinterW = winspool.NewProc("StartDocPrinterW")
	procEndDocPrinter    = winspool.NewProc("EndDocPrinter")
	procStartPagePrinter = winspool.NewProc("StartPagePrinter")
	procEndPagePrinter   = winspool.NewProc("EndPagePrinter")
	procWritePrinter     = winspool.NewProc("WritePrinter")
)

// docInfo1 is DOC_INFO_1: the document's name, output file and datatype.
type docInfo1 struct {
	docName    *uint16
	outputFile *uint16
	datatype   *uint16
}

// PrintRaw hands the job to the spooler with the RAW datatype, which sends
// the bytes to the printer untouched (OpenPrinter, StartDocPrinter,
// WritePrinter, EndDocPrinter). It answers once the spooler has the job, with
// the spooler's job id. It returns ENOTFOUND for a printer Windows does not
// have and EUNAVAILABLE when the spooler refuses the job.
func (p *Spooler) PrintRaw(ctx context.Context, job RawJob) (Result, error) {
	const op = "printer.Spooler.PrintRaw"
	job, err := job.normalize(op)
	if err != nil {
		return Result{}, err
	}
	if err := ctx.Err(); err != nil {
		return Result{}, unavailable(op, err, "se canceló la impresión en «%s» antes de enviarla", p.Printer)
	}
	name, err := windows.UTF16PtrFromString(p.Printer)
	if err != nil {
		return Result{}, notFound(op, err, "el nombre de impresora «%s» no es válido", p.Printer)
	}
	var h windows.Handle
	if r, _, e := procOpenPrinterW.Call(uintptr(unsafe.Pointer(name)), uintptr(unsafe.Pointer(&h)), 0); r == 0 {
		if errors.Is(e, windows.ERROR_INVALID_PRINTER_NAME) {
			return Result{}, notFound(op, e, "la impresora «%s» no existe en Windows", p.Printer)
		}
		return Result{}, unavailable(op, e, "no se pudo abrir la impresora «%s»", p.Printer)
	}
	defer func() { _, _, _ = procClosePrinter.Call(uintptr(h)) }()
	docName, _ := windows.UTF16PtrFromString(job.Name)
	raw, _ := windows.UTF16PtrFromString("RAW")
	info := docInfo1{docName: docName, datatype: raw}
	id, _, e := procStartDocPrinterW.Call(uintptr(h), 1, uintptr(unsafe.Pointer(&info)))
	if id == 0 {
		return Result{}, unavailable(op, e, "el spooler de Windows rechazó el trabajo para «%s»", p.Printer)
	}
	data := job.payload()
	var written uint32
	ok := false
	if r, _, _ := procStartPagePrinter.Call(uintptr(h)); r != 0 {
		r, _, e = procWritePrinter.Call(uintptr(h), uintptr(unsafe.Pointer(&data[0])), uintptr(len(data)),
			uintptr(unsafe.Pointer(&written)))
		ok = r != 0 && int(written) == len(data)
		_, _, _ = procEndPagePrinter.Call(uintptr(h))
	}
	if r, _, _ := procEndDocPrinter.Call(uintptr(h)); r == 0 || !ok {
		return Result{}, unavailable(op, e, "el spooler de Windows no aceptó el trabajo completo para «%s»", p.Printer)
	}
	return Result{Backend: BackendWindows, Printer: p.Printer, JobID: strconv.FormatUint(uint64(id), 10),
		State: StatePending, Copies: job.Copies}, nil
}
