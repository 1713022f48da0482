package printer

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// Sumatra prints through SumatraPDF's command line, the usual way to print
// a PDF to any Windows printer without a viewer on screen:
//
//	SumatraPDF.exe -print-to "<printer>" -print-settings "<n>x,noscale" -silent <file>
//
// "noscale" prints the page at its size: a roll's page is as wide as the
// roll.
type Sumatra struct {
	Exe     string // SumatraPDF.exe as the profile names it; "" means FindSumatra's lookup
	Printer string // the Windows printer's name
	// Env is where FindSumatra looks; nil means DefaultSumatraEnv.
	Env func() SumatraEnv
}

// sumatraArgs builds the command line for printing file on printer.
func sumatraArgs(printer string, copies int, file string) []string {
	return []string{"-print-to", printer, "-print-settings", strconv.Itoa(copies) + "x,noscale", "-silent", file}
}

// sumatraExit explains SumatraPDF's exit codes when printing.
var sumatraExit = map[int]string{
	2: "SumatraPDF no pudo abrir el documento",
	3: "SumatraPDF no tiene permiso para imprimir el documento",
	4: "la impresora no existe",
	5: "el controlador de la impresora falló",
	6: "una política del sistema impide imprimir",
}

// Print writes the PDF to a temporary file and has SumatraPDF print it. It
// returns ENOTFOUND when SumatraPDF or the printer does not exist, and
// EUNAVAILABLE with SumatraPDF's reason otherwise.
func (s *Sumatra) Print(ctx context.Context, job Job) (Result, error) {
	const op = "printer.Sumatra.Print"
	job, err := job.normalize(op)
	if err != nil {
		return Result{}, err
	}
	env := DefaultSumatraEnv
	if s.Env != nil {
		env = s.Env
	}
	found, err := FindSumatra(s.Exe, env())
	if err != nil {
		return Result{}, err
	}
	exe := found.Path
	dir, err := os.MkdirTemp("", "cfe-agent-print-")
	if err != nil {
		return Result{}, unavailable(op, err, "no se pudo preparar el documento para imprimir")
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, fileName(job.Name)+".pdf")
	if err := os.WriteFile(file, job.PDF, 0o600); err != nil {
		return Result{}, unavailable(op, err, "no se pudo preparar el documento para imprimir")
	}
	err = exec.CommandContext(ctx, exe, sumatraArgs(s.Printer, job.Copies, file)...).Run()
	if err := sumatraError(op, s.Printer, exe, err); err != nil {
		return Result{}, err
	}
	return Result{Backend: BackendWindows, Printer: s.Printer, State: StateCompleted, Copies: job.Copies}, nil
}

// sumatraError maps the outcome of running SumatraPDF to an error.
func sumatraError(op, printer, exe string, err error) error {
	var exit *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &exit):
		code := exit.ExitCode()
		reason, known := sumatraExit[code]
		if !known {
			reason = "SumatraPDF terminó con el código " + strconv.Itoa(code)
		}
		if code == 4 {
			return notFound(op, err, "no se pudo imprimir en «%s»: %s", printer, reason)
		}
		return unavailable(op, err, "no se pudo imprimir en «%s»: %s", printer, reason)
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, os.ErrNotExist):
		return notFound(op, err, "no se encontró SumatraPDF en %s: instálelo o indique su ubicación", exe)
	}
	return unavailable(op, err, "no se pudo ejecutar SumatraPDF para imprimir en «%s»", printer)
}
