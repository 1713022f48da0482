package printer

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"
	"unicode"
)

// Dir is a printer that writes each job as PDF files into a directory:
// <dir>/<timestamp>-<name>.pdf, and for more than one copy one file per
// copy (<timestamp>-<name>-copia2.pdf, ...), so that a program watching the
// folder prints each file once and the copies come out as asked. Files
// appear whole: they are written under a temporary name and renamed, never
// over an existing file.
type Dir struct {
	Path  string
	Clock func() time.Time // nil means time.Now

	mu sync.Mutex // one job at a time: names are chosen, then taken
}

// Print writes the job's files. It returns ENOTFOUND when the directory
// does not exist and EUNAVAILABLE when it cannot be written.
func (d *Dir) Print(ctx context.Context, job Job) (Result, error) {
	const op = "printer.Dir.Print"
	job, err := job.normalize(op)
	if err != nil {
		return Result{}, err
	}
	if info, err := os.Stat(d.Path); err != nil || !info.IsDir() {
		return Result{}, notFound(op, err, "la carpeta de impresión %s no existe", d.Path)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	now := time.Now
	if d.Clock != nil {
		now = d.Clock
	}
	base := now().Format("20060102-150405.000") + "-" + fileName(job.Name)
	res := Result{Backend: BackendDir, Printer: d.Path, State: StateCompleted, Copies: job.Copies}
	for copy := 1; copy <= job.Copies; copy++ {
		if err := ctx.Err(); err != nil {
			return res, unavailable(op, err, "impresión cancelada después de %d de %d copias", copy-1, job.Copies)
		}
		name := base
		if copy > 1 {
			name += fmt.Sprintf("-copia%d", copy)
		}
		f, err := d.write(name, job.PDF)
		if err != nil {
			return res, unavailable(op, err, "no se pudo escribir el PDF en la carpeta %s", d.Path)
		}
		res.Files = append(res.Files, f)
	}
	return res, nil
}

// write writes b to <dir>/<name>.pdf, or <name>-2.pdf ... when a file of
// that name exists, and returns the file's path.
func (d *Dir) write(name string, b []byte) (string, error) {
	tmp, err := os.CreateTemp(d.Path, ".imprimiendo-*.tmp")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name()) // after a rename, there is nothing left to remove
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	for n := 1; n <= 100; n++ {
		final := filepath.Join(d.Path, name+".pdf")
		if n > 1 {
			final = filepath.Join(d.Path, fmt.Sprintf("%s-%d.pdf", name, n))
		}
		if _, err := os.Lstat(final); errors.Is(err, fs.ErrNotExist) {
			return final, os.Rename(tmp.Name(), final)
		}
	}
	return "", fmt.Errorf("100 files named %s already exist", name)
}

// fileName makes a job name safe as a file name on every system.
func fileName(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '-' || r == '_' || r == '.':
			return r
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			return r
		}
		return '_'
	}, strings.TrimSpace(s))
	s = strings.Trim(s, "._")
	if s == "" {
		return "documento"
	}
	if r := []rune(s); len(r) > 80 {
		s = string(r[:80])
	}
	return s
}
