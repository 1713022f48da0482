package printer

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
)

func TestSumatraArgs(t *testing.T) {
	t.Parallel()
	got := sumatraArgs(`EPSON TM-T20 Receipt`, 2, `C:\Temp\e-Ticket_A-1.pdf`)
	want := []string{"-print-to", "EPSON TM-T20 Receipt", "-print-settings", "2x,noscale", "-silent",
		`C:\Temp\e-Ticket_A-1.pdf`}
	if !slices.Equal(got, want) {
		t.Errorf("args %q, want %q", got, want)
	}
}

// fakeSumatra writes a shell script that stands in for SumatraPDF.exe: it
// records its arguments and exits with the code in the file "code" next to
// it (0 when absent), after "delay" seconds when that file exists. When a
// file "meet-PRINTER" names another printer, a job for PRINTER first waits
// (up to 30 s, then exits 9) until a job for that other printer has started.
// Unix only.
func fakeSumatra(t *testing.T) (exe, dir string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the stand-in for SumatraPDF is a shell script")
	}
	dir = t.TempDir()
	exe = filepath.Join(dir, "SumatraPDF")
	script := `#!/bin/sh
d=$(dirname "$0")
echo "start $2" >> "$d/log"
touch "$d/started-$2"
if [ -f "$d/meet-$2" ]; then
  other=$(cat "$d/meet-$2")
  i=0
  while [ ! -f "$d/started-$other" ]; do
    i=$((i+1))
    if [ $i -gt 600 ]; then echo "gave up waiting for $other" >> "$d/log"; exit 9; fi
    sleep 0.05
  done
fi
[ -f "$d/delay" ] && sleep "$(cat "$d/delay")"
printf '%s\n' "$@" > "$d/args"
echo "end $2" >> "$d/log"
exit "$(cat "$d/code" 2>/dev/null || echo 0)"
`
	if err := os.WriteFile(exe, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return exe, dir
}

func TestSumatra_ExitCodes(t *testing.T) {
	t.Parallel()
	exe, dir := fakeSumatra(t)
	ctx := context.Background()
	p := &Sumatra{Exe: exe, Printer: "Caja 1"}

	res, err := p.Print(ctx, Job{Name: "e-Ticket A-1", PDF: testPDF, Copies: 2})
	if err != nil || res.State != StateCompleted || res.Copies != 2 || res.Backend != BackendWindows {
		t.Fatalf("Print: %+v, %v", res, err)
	}
	args, _ := os.ReadFile(filepath.Join(dir, "args"))
	lines := strings.Split(strings.TrimSpace(string(args)), "\n")
	if len(lines) != 6 || lines[1] != "Caja 1" || lines[3] != "2x,noscale" || !strings.HasSuffix(lines[5], "e-Ticket_A-1.pdf") {
		t.Errorf("SumatraPDF got %q", lines)
	}

	tests := []struct {
		code     string
		wantCode string
		want     string
	}{
		{"2", cfe.EUNAVAILABLE, "no pudo abrir el documento"},
		{"3", cfe.EUNAVAILABLE, "no tiene permiso para imprimir"},
		{"4", cfe.ENOTFOUND, "la impresora no existe"},
		{"5", cfe.EUNAVAILABLE, "el controlador de la impresora falló"},
		{"6", cfe.EUNAVAILABLE, "una política del sistema impide imprimir"},
		{"9", cfe.EUNAVAILABLE, "terminó con el código 9"},
	}
	for _, tt := range tests {
		if err := os.WriteFile(filepath.Join(dir, "code"), []byte(tt.code), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := p.Print(ctx, Job{Name: "x", PDF: testPDF})
		wantError(t, err, tt.wantCode, tt.want)
		wantError(t, err, tt.wantCode, "Caja 1")
	}

	_, err = (&Sumatra{Exe: filepath.Join(dir, "no-existe.exe"), Printer: "Caja 1"}).Print(ctx, Job{Name: "x", PDF: testPDF})
	wantError(t, err, cfe.ENOTFOUND, "no se encontró SumatraPDF")
}

// The manager runs one job at a time per printer, and printers in parallel:
// a job for Caja and one for Oficina each wait until the other has started,
// which only a manager that runs them side by side lets happen (a manager
// that ran them in turn would see them give up).
func TestManager_SerializesPerPrinter(t *testing.T) {
	t.Parallel()
	exe, dir := fakeSumatra(t)
	for name, content := range map[string]string{"delay": "0.3", "meet-Caja": "Oficina", "meet-Oficina": "Caja"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m, err := NewManager(Config{Printers: map[string]PrinterConfig{
		"caja":       {Backend: BackendWindows, Queue: "Caja", SumatraPath: exe},
		"caja-copia": {Backend: BackendWindows, Queue: "Caja", SumatraPath: exe}, // same printer, other alias
		"oficina":    {Backend: BackendWindows, Queue: "Oficina", SumatraPath: exe},
	}})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	start := time.Now()
	for _, alias := range []string{"caja", "caja-copia", "caja", "oficina"} {
		wg.Go(func() {
			if _, err := m.Print(context.Background(), alias, Job{Name: alias, PDF: testPDF}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	log, _ := os.ReadFile(filepath.Join(dir, "log"))
	// Lines read "start Caja" / "end Caja": the jobs of Caja never overlap.
	running := 0
	for _, l := range strings.Split(strings.TrimSpace(string(log)), "\n") {
		switch l {
		case "start Caja":
			if running++; running > 1 {
				t.Errorf("two jobs ran at once on Caja:\n%s", log)
			}
		case "end Caja":
			running--
		}
	}
	if strings.Contains(string(log), "gave up") {
		t.Errorf("the jobs of Caja and Oficina did not run side by side:\n%s", log)
	}
	// Three jobs of 0.3 s on Caja take at least 0.9 s (whatever the load:
	// the bound is a lower one); that Oficina's runs beside them is the
	// meeting above, not a time.
	if elapsed < 900*time.Millisecond {
		t.Errorf("4 jobs took %v; want at least 0.9 s (Caja's 3 in a row)", elapsed)
	}
}
