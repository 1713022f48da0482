package printer

import (
	"context"
	"errors"
	"io/fs"
	"os"
)

// Device prints raw jobs on a device file: a USB printer (/dev/usb/lp0) or a
// serial port (/dev/ttyS0, /dev/ttyUSB0; COM3 on Windows). A serial port is
// put in raw mode (no newline translation) with the speed it has; set the
// speed beforehand (stty) when the printer's is not the port's. Status
// (DLE EOT before and after the job) needs a device that answers, such as a
// serial printer.
type Device struct {
	Path   string
	Status bool
}

// PrintRaw writes every copy to the device. It returns ENOTFOUND when the
// device does not exist, EUNAVAILABLE when it cannot be opened or written
// (the printer is off or unplugged) or, with Status, reports a problem.
func (p *Device) PrintRaw(ctx context.Context, job RawJob) (Result, error) {
	const op = "printer.Device.PrintRaw"
	job, err := job.normalize(op)
	if err != nil {
		return Result{}, err
	}
	flag := os.O_WRONLY
	if p.Status {
		flag = os.O_RDWR
	}
	f, err := os.OpenFile(p.Path, flag, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Result{}, notFound(op, err, "el dispositivo %s no existe: ¿está conectada y encendida la impresora?", p.Path)
	case err != nil:
		return Result{}, unavailable(op, err, "no se pudo abrir el dispositivo %s", p.Path)
	}
	defer f.Close()
	if err := rawMode(f); err != nil {
		return Result{}, unavailable(op, err, "no se pudo configurar el puerto %s", p.Path)
	}
	who := "en " + p.Path
	if p.Status {
		if _, err := checkStatus(op, f, who, ""); err != nil {
			return Result{}, err
		}
	}
	if ctx.Err() != nil {
		return Result{}, unavailable(op, ctx.Err(), "se canceló la impresión en %s antes de enviarla", p.Path)
	}
	if _, err := f.Write(job.payload()); err != nil {
		return Result{}, unavailable(op, err, "no se pudo escribir en %s", p.Path)
	}
	if p.Status {
		if _, err := checkStatus(op, f, who, " durante la impresión"); err != nil {
			return Result{}, err
		}
	}
	return Result{Backend: BackendDevice, Printer: p.Path, State: StateProcessing, Copies: job.Copies}, nil
}
