package printer

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/cfe"
)

func TestNewManager_RejectsBadConfig(t *testing.T) {
	t.Parallel()
	_, err := NewManager(Config{Printers: map[string]PrinterConfig{
		"caja":    {Backend: BackendCUPS},
		"archivo": {Backend: BackendDir},
		"rara":    {Backend: "fax", Queue: "x"},
		"copias":  {Backend: BackendLP, Queue: "x", Copies: map[cfe.Type]int{cfe.ETicket: 11}, DefaultCopies: -1},
	}, RawQueues: "lp"})
	var e *cfe.Error
	if !errors.As(err, &e) || e.Code != cfe.EINVALID {
		t.Fatalf("NewManager: %v, want EINVALID", err)
	}
	var fields []string
	for _, f := range e.Fields {
		fields = append(fields, f.Campo)
	}
	want := []string{"printers.archivo.dir", "printers.caja.queue", "printers.copias.copies[101]",
		"printers.copias.default_copies", "printers.rara.backend", "raw_queues"}
	slices.Sort(fields)
	if !slices.Equal(fields, want) {
		t.Errorf("fields %v, want %v", fields, want)
	}
}

func TestManager_Resolve(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	m, err := NewManager(Config{Printers: map[string]PrinterConfig{
		"Archivo": {Backend: BackendDir, Dir: dir, DefaultCopies: 2, Copies: map[cfe.Type]int{cfe.EFactura: 3}},
	}, Clock: fixedClock})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// Aliases are case-insensitive.
	res, err := m.Print(ctx, " archivo ", Job{Name: "e-Factura A-1", PDF: testPDF, Copies: m.Copies("ARCHIVO", cfe.EFactura, 1)})
	if err != nil || len(res.Files) != 3 {
		t.Fatalf("Print: %+v, %v; want 3 files", res, err)
	}
	// Without RawQueues, a name that is no alias is not found.
	_, err = m.Print(ctx, "Caja", Job{Name: "x", PDF: testPDF})
	wantError(t, err, cfe.ENOTFOUND, "Caja")
	_, err = m.Print(ctx, "", Job{Name: "x", PDF: testPDF})
	wantError(t, err, cfe.EINVALID, "impresora")
	if got := m.Aliases(); !slices.Equal(got, []string{"archivo"}) {
		t.Errorf("aliases %v", got)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*.pdf")); len(files) != 3 {
		t.Errorf("the folder has %d PDFs, want 3", len(files))
	}
}

func TestManager_Copies(t *testing.T) {
	t.Parallel()
	m, err := NewManager(Config{Printers: map[string]PrinterConfig{
		"caja":    {Backend: BackendLP, Queue: "caja", Copies: map[cfe.Type]int{cfe.EFactura: 2}},
		"oficina": {Backend: BackendLP, Queue: "oficina", DefaultCopies: 3},
	}, RawQueues: BackendCUPS})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		typ      cfe.Type
		fallback int
		want     int
	}{
		{"caja", cfe.EFactura, 5, 2},   // the profile's count for the type
		{"caja", cfe.ETicket, 5, 5},    // no count, no default: the request's fallback
		{"caja", cfe.ETicket, 0, 1},    // nothing at all: one
		{"oficina", cfe.ETicket, 5, 3}, // the printer's default
		{"Cola-Cruda", cfe.ETicket, 2, 2},
		{"caja", cfe.ETicket, 99, 1}, // a fallback out of range is ignored
	}
	for _, tt := range tests {
		if got := m.Copies(tt.name, tt.typ, tt.fallback); got != tt.want {
			t.Errorf("Copies(%s, %d, %d) = %d, want %d", tt.name, tt.typ, tt.fallback, got, tt.want)
		}
	}
}

func TestLP_Args(t *testing.T) {
	t.Parallel()
	p := &LP{Server: "127.0.0.1:8631", Queue: "caja"}
	got := strings.Join(p.args(Job{Name: "e-Ticket A-1", Copies: 2, Media: "oe_roll-80mm_80x297mm"}), " ")
	want := "-h 127.0.0.1:8631 -d caja -n 2 -t e-Ticket A-1 -o media=oe_roll-80mm_80x297mm -o print-scaling=none -- -"
	if got != want {
		t.Errorf("args %q, want %q", got, want)
	}
	if got := strings.Join((&LP{Queue: "caja"}).args(Job{Name: "x", Copies: 1}), " "); got != "-d caja -n 1 -t x -o print-scaling=none -- -" {
		t.Errorf("args without server and media: %q", got)
	}
}
