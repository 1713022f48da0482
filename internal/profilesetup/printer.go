package profilesetup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"

	"github.com/cfe-agent/cfe-agent/printer"
	"github.com/cfe-agent/cfe-agent/profiles"
)

// SystemPrinters lists the machine's printers (CUPS queues, Windows
// printers) with their state, for the technician to choose from.
func SystemPrinters(ctx context.Context) ([]printer.SystemPrinter, error) {
	raw := printer.BackendCUPS
	if runtime.GOOS == "windows" {
		raw = printer.BackendWindows
	}
	m, err := printer.NewManager(printer.Config{RawQueues: raw})
	if err != nil {
		return nil, err
	}
	_, system, err := m.SystemPrinters(ctx)
	return system, err
}

// SetPrinter sets the profile's printer: one of system (the machine's
// printers, as SystemPrinters listed them) by its name, a folder where the
// PDFs are saved (a full path that names no listed printer; it must be
// writable, and is made when missing), or «-» for none.
func (d *Draft) SetPrinter(answer string, system []printer.SystemPrinter) error {
	listed := slices.ContainsFunc(system, func(sp printer.SystemPrinter) bool { return sp.Name == answer })
	switch {
	case answer == "-":
		d.printer = nil
	case filepath.IsAbs(answer) && !listed:
		if err := writableDir(answer); err != nil {
			return fmt.Errorf("no se puede escribir en la carpeta %s: %w", answer, err)
		}
		d.printer = &profiles.Printer{Backend: profiles.BackendDir, Dir: answer}
	case listed:
		backend := profiles.BackendCUPS
		if runtime.GOOS == "windows" {
			backend = profiles.BackendWindows
		}
		d.printer = &profiles.Printer{Backend: backend, Queue: answer}
	default:
		return fmt.Errorf("el equipo no tiene una impresora «%s»: elija una de la lista o una carpeta (ruta completa)", answer)
	}
	return nil
}

// writableDir makes dir when missing and checks that a file can be created
// in it (and removes it); the error is the system's reason alone.
func writableDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return unwrap(err)
	}
	f, err := os.CreateTemp(dir, ".cfe-agent-profile-*")
	if err != nil {
		return unwrap(err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// unwrap is the system's reason of a path error.
func unwrap(err error) error {
	if inner := errors.Unwrap(err); inner != nil {
		return inner
	}
	return err
}
