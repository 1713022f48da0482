//go:build windows

package printer

import (
	"context"
	"errors"
	"strings"
	"unsafe"

	"golang.org/x/sys/windows"
)

// The Windows spooler's listing functions (winspool.drv), loaded on first
// use.
var (
	winspoolList           = windows.NewLazySystemDLL("winspool.drv")
	procEnumPrintersW      = winspoolList.NewProc("EnumPrintersW")
	procGetDefaultPrinterW = winspoolList.NewProc("GetDefaultPrinterW")
)

// EnumPrinters flags and level.
const (
	printerEnumLocal       = 0x2
	printerEnumConnections = 0x4
	printerInfoLevel2      = 2
)

// printerInfo2 is PRINTER_INFO_2W.
type printerInfo2 struct {
	serverName         *uint16
	printerName        *uint16
	shareName          *uint16
	portName           *uint16
	driverName         *uint16
	comment            *uint16
	location           *uint16
	devMode            uintptr
	sepFile            *uint16
	printProcessor     *uint16
	datatype           *uint16
	parameters         *uint16
	securityDescriptor uintptr
	attributes         uint32
	priority           uint32
	defaultPriority    uint32
	startTime          uint32
	untilTime          uint32
	status             uint32
	jobs               uint32
	averagePPM         uint32
}

// PRINTER_STATUS_* flags that stop a printer, with their reason in Spanish.
var stoppingStatus = []struct {
	flag   uint32
	reason string
}{
	{0x00000001, "en pausa"},
	{0x00000002, "con error"},
	{0x00000008, "papel atascado"},
	{0x00000010, "sin papel"},
	{0x00000040, "problema con el papel"},
	{0x00000080, "desconectada"},
	{0x00000800, "bandeja de salida llena"},
	{0x00001000, "no disponible"},
	{0x00040000, "sin tóner"},
	{0x00100000, "requiere intervención del usuario"},
	{0x00400000, "tapa abierta"},
}

// PRINTER_STATUS_* flags of a printer at work.
const busyStatus = 0x00000100 | 0x00000200 | 0x00000400 | 0x00004000 // io active, busy, printing, processing

// printerStatusPendingDeletion: the printer takes no new jobs.
const printerStatusPendingDeletion = 0x00000004

// windowsPrinters lists the spooler's printers (local and connections) with
// EnumPrintersW at level 2, and marks GetDefaultPrinterW's.
func windowsPrinters(ctx context.Context) ([]SystemPrinter, error) {
	const op = "printer.SystemPrinters"
	if err := ctx.Err(); err != nil {
		return nil, unavailable(op, err, "se canceló la consulta de impresoras")
	}
	flags := uintptr(printerEnumLocal | printerEnumConnections)
	var needed, returned uint32
	r, _, e := procEnumPrintersW.Call(flags, 0, printerInfoLevel2, 0, 0,
		uintptr(unsafe.Pointer(&needed)), uintptr(unsafe.Pointer(&returned)))
	if r == 0 && !errors.Is(e, windows.ERROR_INSUFFICIENT_BUFFER) {
		return nil, unavailable(op, e, "no se pudo consultar el spooler de Windows")
	}
	if needed == 0 {
		return nil, nil
	}
	// A buffer of uint64 keeps the structures aligned.
	buf := make([]uint64, (needed+7)/8)
	r, _, e = procEnumPrintersW.Call(flags, 0, printerInfoLevel2, uintptr(unsafe.Pointer(&buf[0])), uintptr(needed),
		uintptr(unsafe.Pointer(&needed)), uintptr(unsafe.Pointer(&returned)))
	if r == 0 {
		return nil, unavailable(op, e, "no se pudo consultar el spooler de Windows")
	}
	def := defaultWindowsPrinter()
	infos := unsafe.Slice((*printerInfo2)(unsafe.Pointer(&buf[0])), returned)
	out := make([]SystemPrinter, 0, len(infos))
	for _, in := range infos {
		p := SystemPrinter{Name: windows.UTF16PtrToString(in.printerName), Description: windows.UTF16PtrToString(in.comment),
			Location: windows.UTF16PtrToString(in.location), Model: windows.UTF16PtrToString(in.driverName),
			State: PrinterIdle, Accepting: in.status&printerStatusPendingDeletion == 0}
		var reasons []string
		for _, s := range stoppingStatus {
			if in.status&s.flag != 0 {
				reasons = append(reasons, s.reason)
			}
		}
		switch {
		case len(reasons) > 0:
			p.State, p.Reason = PrinterStopped, strings.Join(reasons, ", ")
		case in.status&busyStatus != 0 || in.jobs > 0:
			p.State = PrinterPrinting
		}
		p.Default = p.Name != "" && strings.EqualFold(p.Name, def)
		out = append(out, p)
	}
	return out, nil
}

// defaultWindowsPrinter is the user's default printer, or "".
func defaultWindowsPrinter() string {
	var n uint32
	_, _, _ = procGetDefaultPrinterW.Call(0, uintptr(unsafe.Pointer(&n)))
	if n == 0 {
		return ""
	}
	b := make([]uint16, n)
	if r, _, _ := procGetDefaultPrinterW.Call(uintptr(unsafe.Pointer(&b[0])), uintptr(unsafe.Pointer(&n))); r == 0 {
		return ""
	}
	return windows.UTF16ToString(b)
}
