package app

import (
	"context"
	"errors"
	"maps"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
	"github.com/cfe-agent/cfe-agent/printer"
	"github.com/cfe-agent/cfe-agent/profiles"
)

// spoolers are what the doctor learnt of the machine's spoolers, each asked
// once and only when a printer of the profile goes through it.
type spoolers struct {
	queues     map[string]printer.Queue // CUPS, by name
	cupsErr    error
	windows    map[string]printer.SystemPrinter // the Windows spooler, by lower-case name; nil off Windows
	windowsErr error
}

// printers checks each printer of the profile the way printing will use
// it: a directory printer's folder must be writable; a CUPS or lp queue must
// exist on the CUPS server and accept jobs; a thermal printer must answer.
func (d *doctor) printers(ctx context.Context, p profiles.Profile) {
	if _, err := TemplateCatalog(p); err != nil {
		d.line(CheckFail, "plantillas", "%s", cfe.Describe(err))
	}
	if len(p.Printers) == 0 {
		d.line(CheckWarn, "impresoras", "no hay impresoras configuradas")
		return
	}
	m, err := PrinterManager(p)
	if err != nil {
		d.line(CheckFail, "impresoras", "%s", cfe.Describe(err))
		return
	}
	uses := func(backends ...profiles.Backend) bool {
		return slices.ContainsFunc(slices.Collect(maps.Values(p.Printers)), func(pr profiles.Printer) bool {
			return slices.Contains(backends, pr.Backend)
		})
	}
	var sp spoolers
	if uses(profiles.BackendCUPS, profiles.BackendLP) {
		sp.queues, sp.cupsErr = cupsQueues(ctx, m)
	}
	if runtime.GOOS == "windows" && uses(profiles.BackendWindows) {
		sp.windows, sp.windowsErr = windowsPrinters(ctx, m)
	}
	for _, alias := range slices.Sorted(maps.Keys(p.Printers)) {
		d.printer(ctx, "impresora "+alias, p.Printers[alias], sp)
	}
}

// printer checks one printer of the profile.
func (d *doctor) printer(ctx context.Context, check string, pr profiles.Printer, sp spoolers) {
	switch pr.Backend {
	case profiles.BackendDir:
		if err := writableDir(pr.Dir); err != nil {
			d.line(CheckFail, check, "no se puede escribir en la carpeta %s: %v", pr.Dir, err)
			return
		}
		d.line(CheckOK, check, "guarda los PDF en %s", pr.Dir)
	case profiles.BackendCUPS, profiles.BackendLP:
		d.cupsPrinter(check, pr, sp.queues, sp.cupsErr)
	case profiles.BackendTCP:
		status := pr.ESCPOS.StatusQuery(pr.Backend)
		if err := (&printer.TCP{Address: pr.Address, Status: status}).Check(ctx); err != nil {
			d.line(CheckFail, check, "%s", cfe.Describe(err))
			return
		}
		what := "acepta conexiones"
		if status {
			what = "lista (papel y tapa bien)"
		}
		d.line(CheckOK, check, "ESC/POS en %s: %s", pr.Address, what)
	case profiles.BackendDevice:
		if _, err := os.Stat(pr.Device); err != nil {
			d.line(CheckFail, check, "el dispositivo %s no existe: ¿está conectada y encendida la impresora?", pr.Device)
			return
		}
		d.line(CheckOK, check, "ESC/POS en %s", pr.Device)
	case profiles.BackendWindows:
		d.windowsPrinter(check, pr, sp.windows, sp.windowsErr)
	default:
		d.line(CheckOK, check, "%s, impresora %q", pr.Backend, pr.Queue)
	}
}

// cupsPrinter checks a CUPS or lp printer of the profile against the CUPS
// server's queues.
func (d *doctor) cupsPrinter(check string, pr profiles.Printer, queues map[string]printer.Queue, cupsErr error) {
	q, found := queues[pr.Queue]
	switch {
	case cupsErr != nil:
		d.line(CheckFail, check, "cola %q: %s", pr.Queue, cfe.Describe(cupsErr))
	case !found:
		d.line(CheckFail, check, "CUPS no tiene la cola %q (vea cfe-agent printers)", pr.Queue)
	case !q.Accepting:
		d.line(CheckFail, check, "la cola %q no acepta trabajos%s", pr.Queue, reasonSuffix(q.Reason))
	case q.State == "stopped":
		d.line(CheckWarn, check, "la cola %q está detenida%s", pr.Queue, reasonSuffix(q.Reason))
	default:
		d.line(CheckOK, check, "%s, cola %q acepta trabajos", pr.Backend, pr.Queue)
	}
}

// cupsQueues lists the CUPS server's queues by name.
func cupsQueues(ctx context.Context, m *printer.Manager) (map[string]printer.Queue, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	list, err := m.Discover(ctx)
	byName := make(map[string]printer.Queue, len(list))
	for _, q := range list {
		byName[q.Name] = q
	}
	return byName, err
}

// writableDir makes dir when missing and checks that a file can be created
// in it.
func writableDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return errors.Unwrap(err)
	}
	f, err := os.CreateTemp(dir, ".cfe-agent-doctor-*")
	if err != nil {
		return errors.Unwrap(err)
	}
	f.Close()
	return os.Remove(f.Name())
}

func reasonSuffix(reason string) string {
	if reason == "" {
		return ""
	}
	return ": " + reason
}

// sumatra says which SumatraPDF Windows printing will use and from where,
// or that there is none and what to do. It speaks on Windows, and wherever
// the profile has a Windows PDF printer; a missing SumatraPDF fails only
// when such a printer needs it.
func (d *doctor) sumatra(p profiles.Profile, goos string, env printer.SumatraEnv) {
	const check = "SumatraPDF"
	var (
		usesDefault []string            // Windows PDF printers that use the lookup
		explicit    map[string][]string // sumatra_path → its printers
	)
	for _, alias := range slices.Sorted(maps.Keys(p.Printers)) {
		pr := p.Printers[alias]
		if pr.Backend != profiles.BackendWindows || pr.Protocol == profiles.ProtocolESCPOS {
			continue
		}
		if pr.SumatraPath == "" {
			usesDefault = append(usesDefault, alias)
			continue
		}
		if explicit == nil {
			explicit = make(map[string][]string)
		}
		explicit[pr.SumatraPath] = append(explicit[pr.SumatraPath], alias)
	}
	for _, path := range slices.Sorted(maps.Keys(explicit)) {
		who := "impresoras " + strings.Join(explicit[path], ", ")
		if f, err := printer.FindSumatra(path, env); err != nil {
			d.line(CheckFail, check, "%s (%s)", cfe.Describe(err), who)
		} else {
			d.line(CheckOK, check, "usa %s, %s (%s)", f.Path, f.Place, who)
		}
	}
	if len(usesDefault) == 0 && (goos != "windows" || len(explicit) > 0) {
		return
	}
	f, err := printer.FindSumatra("", env)
	switch {
	case err == nil && len(usesDefault) > 0:
		d.line(CheckOK, check, "usa %s, %s (impresoras %s)", f.Path, f.Place, strings.Join(usesDefault, ", "))
	case err == nil:
		d.line(CheckOK, check, "usa %s, %s (ninguna impresora del perfil lo necesita por ahora)", f.Path, f.Place)
	case len(usesDefault) > 0:
		d.line(CheckFail, check, "%s (impresoras %s)", cfe.Describe(err), strings.Join(usesDefault, ", "))
	default:
		d.line(CheckWarn, check, "%s (ninguna impresora del perfil lo necesita por ahora)", cfe.Describe(err))
	}
}

// windowsPrinters lists the Windows spooler's printers by name (EnumPrinters),
// for the check of the profile's Windows printers; nil off Windows.
func windowsPrinters(ctx context.Context, m *printer.Manager) (map[string]printer.SystemPrinter, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	source, list, err := m.SystemPrinters(ctx)
	if err != nil || source != printer.BackendWindows {
		return nil, err
	}
	byName := make(map[string]printer.SystemPrinter, len(list))
	for _, sp := range list {
		byName[strings.ToLower(sp.Name)] = sp
	}
	return byName, nil
}

// windowsPrinter checks a Windows printer of the profile against the
// spooler's list (nil: not on Windows, nothing to check against).
func (d *doctor) windowsPrinter(check string, pr profiles.Printer, spooler map[string]printer.SystemPrinter, spoolerErr error) {
	if spoolerErr != nil {
		d.line(CheckFail, check, "impresora de Windows %q: %s", pr.Queue, cfe.Describe(spoolerErr))
		return
	}
	if spooler == nil {
		d.line(CheckOK, check, "%s, impresora %q", pr.Backend, pr.Queue)
		return
	}
	sp, found := spooler[strings.ToLower(pr.Queue)]
	switch {
	case !found:
		d.line(CheckFail, check, "Windows no tiene la impresora %q (vea cfe-agent printers)", pr.Queue)
	case !sp.Accepting:
		d.line(CheckFail, check, "la impresora %q no acepta trabajos%s", pr.Queue, reasonSuffix(sp.Reason))
	case sp.State == printer.PrinterStopped:
		d.line(CheckWarn, check, "la impresora %q está detenida%s", pr.Queue, reasonSuffix(sp.Reason))
	default:
		d.line(CheckOK, check, "impresora de Windows %q lista", pr.Queue)
	}
}
