package printer

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"
)

// ErrBusy is CheckIdle's answer while the printer has a job: it is not
// asked, so that a status query never comes between a job's bytes.
var ErrBusy = errors.New("the printer has a job: not asked now")

// CheckTimeout bounds one idle check.
const CheckTimeout = 8 * time.Second

// CheckIdle asks the printer called name (an alias) whether it can print,
// between jobs only: a printer whose slot is taken (a job is being sent)
// is not asked and ErrBusy is returned; a job that comes while it is asked
// waits for the answer (StatusTimeout at most for a printer that answers).
// It returns nil when the printer can take a job, and otherwise the error a
// job would meet, with the printer's reason in its Spanish message:
//   - tcp: the connection, and with status the real-time status (DLE EOT:
//     paper, cover, error);
//   - device: the device file, and with status its real-time status;
//   - cups and lp: the CUPS queue's state (IPP printer-state,
//     printer-is-accepting-jobs, printer-state-reasons), asked of the CUPS
//     server (CUPSConfig);
//   - windows: the spooler's state of the printer;
//   - dir: the folder exists.
//
// Nothing is printed.
func (m *Manager) CheckIdle(ctx context.Context, name string) error {
	const op = "printer.Manager.CheckIdle"
	t, err := m.resolve(name)
	if err != nil {
		return err
	}
	slot := m.slot(t.key)
	select {
	case slot <- struct{}{}:
		defer func() { <-slot }()
	default:
		return ErrBusy
	}
	ctx, cancel := context.WithTimeout(ctx, CheckTimeout)
	defer cancel()
	pc := t.conf
	switch pc.Backend {
	case BackendTCP:
		return (&TCP{Address: pc.Address, Status: pc.Status}).Check(ctx)
	case BackendDevice:
		return (&Device{Path: pc.Device, Status: pc.Status}).Check(ctx)
	case BackendCUPS:
		return m.checkQueue(ctx, op, pc.Queue)
	case BackendLP:
		if pc.LPServer != "" {
			return nil // another CUPS server than the one asked: lp tells at the next job
		}
		return m.checkQueue(ctx, op, pc.Queue)
	case BackendWindows:
		return checkWindowsPrinter(ctx, op, pc.Queue)
	case BackendDir:
		if fi, err := os.Stat(pc.Dir); err != nil || !fi.IsDir() {
			return notFound(op, err, "la carpeta %s de la impresora no existe", pc.Dir)
		}
	}
	return nil
}

// checkQueue asks the CUPS server for the queue's state.
func (m *Manager) checkQueue(ctx context.Context, op, queue string) error {
	queues, err := m.cups.Queues(ctx)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(queues, func(q Queue) bool { return q.Name == queue })
	if i < 0 {
		return notFound(op, nil, "CUPS no tiene la cola «%s»", queue)
	}
	return queueProblem(op, queues[i])
}

// queueProblem is the error of a queue that cannot print now: stopped, not
// accepting jobs, or with a reason of severity error (media-empty-error,
// cover-open-error…) or offline; nil otherwise.
func queueProblem(op string, q Queue) error {
	bad := slices.ContainsFunc(q.Reasons, func(r string) bool {
		return strings.HasSuffix(r, "-error") || strings.HasPrefix(r, "offline")
	})
	reason := firstNonEmpty(q.Reason, strings.Join(q.Reasons, ", "))
	if reason != "" {
		reason = " (" + reason + ")"
	}
	switch {
	case q.State == "stopped":
		return unavailable(op, nil, "la cola «%s» de CUPS está detenida%s", q.Name, reason)
	case !q.Accepting:
		return unavailable(op, nil, "la cola «%s» de CUPS no acepta trabajos%s", q.Name, reason)
	case bad:
		return unavailable(op, nil, "la cola «%s» de CUPS informa un problema%s", q.Name, reason)
	}
	return nil
}

// checkWindowsPrinter asks the Windows spooler for the printer's state.
func checkWindowsPrinter(ctx context.Context, op, name string) error {
	list, err := windowsPrinters(ctx)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(list, func(p SystemPrinter) bool { return strings.EqualFold(p.Name, name) })
	if i < 0 {
		return notFound(op, nil, "Windows no tiene la impresora «%s»", name)
	}
	if p := list[i]; p.State == PrinterStopped || !p.Accepting {
		reason := ""
		if p.Reason != "" {
			reason = " (" + p.Reason + ")"
		}
		return unavailable(op, nil, "la impresora «%s» de Windows está detenida%s", p.Name, reason)
	}
	return nil
}

// Check opens the device and, with Status, asks its real-time status; it
// prints nothing. It returns nil when the printer can take a job, and
// PrintRaw's errors otherwise.
func (p *Device) Check(ctx context.Context) error {
	const op = "printer.Device.Check"
	flag := os.O_WRONLY
	if p.Status {
		flag = os.O_RDWR
	}
	f, err := os.OpenFile(p.Path, flag, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return notFound(op, err, "el dispositivo %s no existe: ¿está conectada y encendida la impresora?", p.Path)
	case err != nil:
		return unavailable(op, err, "no se pudo abrir el dispositivo %s", p.Path)
	}
	defer f.Close()
	if !p.Status {
		return nil
	}
	if err := rawMode(f); err != nil {
		return unavailable(op, err, "no se pudo configurar el puerto %s", p.Path)
	}
	if ctx.Err() != nil {
		return unavailable(op, ctx.Err(), "se canceló la consulta a %s", p.Path)
	}
	_, err = checkStatus(op, f, "en "+p.Path, "")
	return err
}
