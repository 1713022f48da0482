package app

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/cfe-agent/cfe-agent/printer"
	"github.com/cfe-agent/cfe-agent/profiles"
)

// doctorLines is a doctor that writes its checks' lines to out.
func doctorLines(out *bytes.Buffer) *doctor {
	return &doctor{emit: func(c Check) { fmt.Fprintln(out, c) }}
}

// TestDoctor_sumatra: doctor's SumatraPDF lines, on a fake machine.
func TestDoctor_sumatra(t *testing.T) {
	t.Parallel()
	const installed = "/opt/cfe-agent/SumatraPDF/SumatraPDF.exe"
	machine := func(files ...string) printer.SumatraEnv {
		return printer.SumatraEnv{Executable: "/opt/cfe-agent/cfe-agent.exe", Getenv: func(string) string { return "" },
			IsFile:   func(p string) bool { return strings.Contains(strings.Join(files, "\n"), p) },
			LookPath: func(string) (string, error) { return "", exec.ErrNotFound }}
	}
	win := func(path string) profiles.Printer {
		return profiles.Printer{Backend: profiles.BackendWindows, Queue: "EPSON", SumatraPath: path}
	}
	tests := []struct {
		name     string
		goos     string
		printers map[string]profiles.Printer
		env      printer.SumatraEnv
		want     []string // the lines, in order
	}{
		{"Windows, found beside the agent", "windows", map[string]profiles.Printer{"caja": win("")}, machine(installed),
			[]string{"OK   SumatraPDF: usa " + installed + ", junto al agente (instalado con el agente) (impresoras caja)"}},
		{"Windows, none found and a printer needs it", "windows", map[string]profiles.Printer{"caja": win("")}, machine(),
			[]string{"FAIL SumatraPDF: no se encontró SumatraPDF, que imprime los PDF en Windows: reinstale el agente con su " +
				"instalador (MSI), que lo incluye, o instale SumatraPDF (https://www.sumatrapdfreader.org), o indique su " +
				"ubicación en el perfil (sumatra_path de la impresora) (impresoras caja)"}},
		{"Windows, none found, no printer needs it", "windows", nil, machine(),
			[]string{"WARN SumatraPDF: no se encontró SumatraPDF"}},
		{"the profile's path, missing", "windows", map[string]profiles.Printer{"caja": win("/x/S.exe")}, machine(installed),
			[]string{"FAIL SumatraPDF: no se encontró SumatraPDF en /x/S.exe, la ubicación que indica el perfil"}},
		{"the profile's path and the lookup", "windows",
			map[string]profiles.Printer{"caja": win("/x/S.exe"), "oficina": win("")}, machine(installed, "/x/S.exe"),
			[]string{"OK   SumatraPDF: usa /x/S.exe, indicado en el perfil (sumatra_path) (impresoras caja)",
				"OK   SumatraPDF: usa " + installed}},
		{"ESC/POS on the spooler does not need it", "linux",
			map[string]profiles.Printer{"ticket": {Backend: profiles.BackendWindows, Queue: "TM", Protocol: profiles.ProtocolESCPOS}},
			machine(), nil},
		{"not Windows, no Windows printer: silent", "linux",
			map[string]profiles.Printer{"caja": {Backend: profiles.BackendCUPS, Queue: "Q"}}, machine(), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			d := doctorLines(&out)
			d.sumatra(profiles.Profile{Printers: tt.printers}, tt.goos, tt.env)
			lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			if out.Len() == 0 {
				lines = nil
			}
			if len(lines) != len(tt.want) {
				t.Fatalf("doctor wrote %q; want %d lines like %q", lines, len(tt.want), tt.want)
			}
			for i, want := range tt.want {
				if !strings.HasPrefix(lines[i], want) {
					t.Errorf("line %d = %q; want it to start with %q", i, lines[i], want)
				}
			}
			wantFailed := 0
			for _, l := range tt.want {
				if strings.HasPrefix(l, "FAIL") {
					wantFailed++
				}
			}
			if d.failed != wantFailed {
				t.Errorf("failed = %d, want %d", d.failed, wantFailed)
			}
		})
	}
}

// TestDoctor_windowsPrinter: a Windows printer of the profile checked
// against the spooler's list (EnumPrinters on Windows).
func TestDoctor_windowsPrinter(t *testing.T) {
	t.Parallel()
	spooler := map[string]printer.SystemPrinter{
		"epson tm-t20": {Name: "EPSON TM-T20", State: printer.PrinterIdle, Accepting: true},
		"oficina":      {Name: "Oficina", State: printer.PrinterStopped, Accepting: true, Reason: "sin papel"},
		"vieja":        {Name: "Vieja", State: printer.PrinterStopped, Reason: "desconectada"},
	}
	tests := []struct {
		name    string
		queue   string
		spooler map[string]printer.SystemPrinter
		err     error
		want    string
	}{
		{"ready, any case", "Epson TM-T20", spooler, nil, `OK   impresora caja: impresora de Windows "Epson TM-T20" lista`},
		{"stopped", "Oficina", spooler, nil, `WARN impresora caja: la impresora "Oficina" está detenida: sin papel`},
		{"not accepting", "Vieja", spooler, nil, `FAIL impresora caja: la impresora "Vieja" no acepta trabajos: desconectada`},
		{"missing", "Otra", spooler, nil, `FAIL impresora caja: Windows no tiene la impresora "Otra" (vea cfe-agent printers)`},
		{"spooler unavailable", "Otra", nil, errors.New("el spooler no responde"),
			`FAIL impresora caja: impresora de Windows "Otra": el spooler no responde`},
		{"not Windows: nothing to check against", "Otra", nil, nil, `OK   impresora caja: windows, impresora "Otra"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var out bytes.Buffer
			d := doctorLines(&out)
			d.windowsPrinter("impresora caja", profiles.Printer{Backend: profiles.BackendWindows, Queue: tt.queue}, tt.spooler, tt.err)
			if got := strings.TrimSuffix(out.String(), "\n"); got != tt.want {
				t.Errorf("doctor wrote %q, want %q", got, tt.want)
			}
		})
	}
}
