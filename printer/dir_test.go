package printer

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
)

func fixedClock() time.Time { return time.Date(2026, 3, 14, 10, 30, 5, 123e6, cfe.Montevideo) }

// listDir returns the names in dir, sorted.
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	slices.Sort(names)
	return names
}

func TestDir_Print(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := &Dir{Path: dir, Clock: fixedClock}
	ctx := context.Background()

	res, err := p.Print(ctx, Job{Name: "e-Ticket A-1", PDF: testPDF})
	if err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, "20260314-103005.123-e-Ticket_A-1.pdf")
	if !slices.Equal(res.Files, []string{want}) || res.State != StateCompleted || res.Copies != 1 {
		t.Errorf("result %+v, want one completed file %s", res, want)
	}
	if b, _ := os.ReadFile(want); !bytes.Equal(b, testPDF) {
		t.Error("the file does not hold the PDF")
	}

	// Three copies are three files; the same instant and name again does
	// not overwrite the first job.
	res, err = p.Print(ctx, Job{Name: "e-Ticket A-1", PDF: testPDF, Copies: 3})
	if err != nil {
		t.Fatal(err)
	}
	wantFiles := []string{
		"20260314-103005.123-e-Ticket_A-1-2.pdf",
		"20260314-103005.123-e-Ticket_A-1-copia2.pdf",
		"20260314-103005.123-e-Ticket_A-1-copia3.pdf",
	}
	for i, f := range res.Files {
		res.Files[i] = filepath.Base(f)
	}
	slices.Sort(res.Files)
	if !slices.Equal(res.Files, wantFiles) {
		t.Errorf("files %v, want %v", res.Files, wantFiles)
	}
	// Nothing else is left in the folder (no temporary file).
	if got := listDir(t, dir); len(got) != 4 {
		t.Errorf("the folder holds %v, want the 4 PDFs", got)
	}
}

func TestDir_Errors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, err := (&Dir{Path: filepath.Join(t.TempDir(), "no-existe")}).Print(ctx, Job{Name: "x", PDF: testPDF})
	wantError(t, err, cfe.ENOTFOUND, "no-existe")

	dir := t.TempDir()
	for _, job := range []Job{
		{Name: "not a PDF", PDF: []byte("hola")},
		{Name: "too many copies", PDF: testPDF, Copies: MaxCopies + 1},
		{Name: "negative copies", PDF: testPDF, Copies: -1},
	} {
		_, err := (&Dir{Path: dir}).Print(ctx, job)
		wantError(t, err, cfe.EINVALID, "inválido")
	}
	if got := listDir(t, dir); len(got) != 0 {
		t.Errorf("a rejected job left %v", got)
	}
}

func TestFileName(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"e-Ticket A-1":         "e-Ticket_A-1",
		"Nota de Crédito A/12": "Nota_de_Crédito_A_12",
		"../../etc/passwd":     "etc_passwd",
		"  ":                   "documento",
		`C:\x:y*z?"<>|`:        "C__x_y_z",
		"":                     "documento",
	}
	for in, want := range tests {
		if got := fileName(in); got != want {
			t.Errorf("fileName(%q) = %q, want %q", in, got, want)
		}
	}
}
