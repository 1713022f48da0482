package main

import (
	"context"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/cfe-agent/cfe-agent/printer"
	"github.com/cfe-agent/cfe-agent/profiles"
)

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
			d.line("FAIL", check, "%s (%s)", describe(err), who)
		} else {
			d.line("OK", check, "usa %s, %s (%s)", f.Path, f.Place, who)
		}
	}
	if len(usesDefault) == 0 && (goos != "windows" || len(explicit) > 0) {
		return
	}
	f, err := printer.FindSumatra("", env)
	switch {
	case err == nil && len(usesDefault) > 0:
		d.line("OK", check, "usa %s, %s (impresoras %s)", f.Path, f.Place, strings.Join(usesDefault, ", "))
	case err == nil:
		d.line("OK", check, "usa %s, %s (ninguna impresora del perfil lo necesita por ahora)", f.Path, f.Place)
	case len(usesDefault) > 0:
		d.line("FAIL", check, "%s (impresoras %s)", describe(err), strings.Join(usesDefault, ", "))
	default:
		d.line("WARN", check, "%s (ninguna impresora del perfil lo necesita por ahora)", describe(err))
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
		d.line("FAIL", check, "impresora de Windows %q: %s", pr.Queue, describe(spoolerErr))
		return
	}
	if spooler == nil {
		d.line("OK", check, "%s, impresora %q", pr.Backend, pr.Queue)
		return
	}
	sp, found := spooler[strings.ToLower(pr.Queue)]
	switch {
	case !found:
		d.line("FAIL", check, "Windows no tiene la impresora %q (vea cfe-agent printers)", pr.Queue)
	case !sp.Accepting:
		d.line("FAIL", check, "la impresora %q no acepta trabajos%s", pr.Queue, reasonSuffix(sp.Reason))
	case sp.State == printer.PrinterStopped:
		d.line("WARN", check, "la impresora %q está detenida%s", pr.Queue, reasonSuffix(sp.Reason))
	default:
		d.line("OK", check, "impresora de Windows %q lista", pr.Queue)
	}
}
