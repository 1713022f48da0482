package tray

import (
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/cfe-agent/cfe-agent/assets"
	"github.com/cfe-agent/cfe-agent/issuer"
	"github.com/cfe-agent/cfe-agent/localapi/apitype"
)

func TestEscapeMnemonics(t *testing.T) {
	t.Parallel()
	cases := []struct{ goos, in, want string }{
		{"linux", "termica_raster", "termica__raster"},
		{"linux", "caja_1_b & c", "caja__1__b & c"},
		{"windows", "termica_raster", "termica_raster"},
		{"windows", "Caja & Depósito", "Caja && Depósito"},
		{"darwin", "termica_raster & x", "termica_raster & x"},
	}
	for _, c := range cases {
		if got := escapeMnemonics(c.goos, c.in); got != c.want {
			t.Errorf("escapeMnemonics(%s, %q) = %q, want %q", c.goos, c.in, got, c.want)
		}
	}
}

func TestWrapText(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in    string
		width int
		want  []string
	}{
		{"", 10, nil},
		{"uno dos tres", 7, []string{"uno dos", "tres"}},
		{"uno dos tres", 12, []string{"uno dos tres"}},
		{"a abcdefghijkl b", 5, []string{"a", "abcde", "fghij", "kl b"}},
		{"año  ñandú   ópera", 10, []string{"año ñandú", "ópera"}}, // runes, not bytes
	}
	for _, c := range cases {
		if got := wrapText(c.in, c.width); !slices.Equal(got, c.want) {
			t.Errorf("wrapText(%q, %d) = %q, want %q", c.in, c.width, got, c.want)
		}
	}
	if got := clipLines([]string{"uno", "dos", "tres"}, 2, 10); !slices.Equal(got, []string{"uno", "dos…"}) {
		t.Errorf("clipLines = %q", got)
	}
	if got := clipLines([]string{"uno", "0123456789"}, 1, 10); !slices.Equal(got, []string{"uno…"}) {
		t.Errorf("clipLines of one = %q", got)
	}
	if got := clipLines([]string{"abc", "0123456789", "x"}, 2, 10); !slices.Equal(got, []string{"abc", "012345678…"}) {
		t.Errorf("clipLines at width = %q", got)
	}
}

// TestReasonLines_zone: the time zone's reason (the issuer's own message,
// Windows' fix in it) fits the menu in lines of at most 60 characters, the
// fix's start visible, the rest behind "Detalles…".
func TestReasonLines_zone(t *testing.T) {
	t.Parallel()
	zone := issuer.ZoneStatus{Name: "SA Eastern Standard Time", Source: issuer.WindowsZoneSource, Offset: -3 * 3600}.Message()
	a := Assessment{State: assets.IconError, Reason: zone}
	lines := reasonLines(a)
	if len(lines) < 2 || len(lines) > maxReasonLines {
		t.Fatalf("%d lines: %q", len(lines), lines)
	}
	for _, l := range lines {
		if n := utf8.RuneCountInString(l); n > maxLineRunes {
			t.Errorf("line of %d characters: %q", n, l)
		}
	}
	if !strings.HasPrefix(lines[0], "No puede firmar: La zona horaria del equipo") {
		t.Errorf("first line %q", lines[0])
	}
	joined := strings.Join(lines, " ")
	if !strings.Contains(joined, "Corrija la zona horaria") {
		t.Errorf("the fix is cut off: %q", lines)
	}
	// A short reason is one line, untouched.
	if got := reasonLines(Assessment{State: assets.IconWarning, Reason: "quedan 12 números"}); !slices.Equal(got, []string{"Atención: quedan 12 números"}) {
		t.Errorf("short reason: %q", got)
	}
	if got := reasonLines(Assessment{State: assets.IconOK}); got != nil {
		t.Errorf("no reason: %q", got)
	}
}

// TestAssess_testMode: a sandbox profile is test mode whatever its status
// (the first line, the tooltip and the icon's mark follow), production
// and an agent that does not answer are not.
func TestAssess_testMode(t *testing.T) {
	t.Parallel()
	rep := func(env, status string) *apitype.StateReport {
		return &apitype.StateReport{HealthReport: apitype.HealthReport{Environment: env, Status: status}}
	}
	for _, c := range []struct {
		rep  *apitype.StateReport
		test bool
	}{
		{rep("sandbox", "ok"), true}, {rep("sandbox", "error"), true}, {rep("sandbox", "degraded"), true},
		{rep("produccion", "ok"), false}, {nil, false},
	} {
		a := Assess(c.rep, nil)
		if a.Test != c.test {
			t.Errorf("%+v: Test = %v, want %v", c.rep, a.Test, c.test)
		}
		if tip := a.Tooltip("p"); strings.Contains(tip, "MODO PRUEBA") != c.test {
			t.Errorf("%+v: tooltip %q", c.rep, tip)
		}
	}
	if got := Assess(rep("sandbox", "ok"), nil).Tooltip("sandbox"); got != "Agente CFE — MODO PRUEBA (sandbox): funcionando" {
		t.Errorf("tooltip %q", got)
	}
	if utf8.RuneCountInString(testModeLine) > maxLineRunes || !strings.HasPrefix(testModeLine, "MODO PRUEBA") {
		t.Errorf("test mode line %q", testModeLine)
	}
}

// TestFailedJob: a print job that failed on the default printer after the
// last one notified is an error notification; the idle check's findings
// (the amber icon says those), a job that printed and an old failure are
// not notified.
func TestFailedJob(t *testing.T) {
	t.Parallel()
	seen := time.Date(2026, 11, 28, 10, 0, 0, 0, time.UTC)
	rep := func(ok bool, source string, at time.Time) *apitype.StateReport {
		return &apitype.StateReport{Printer: &apitype.PrinterCheck{Alias: "termica", OK: ok, Source: source, At: at,
			Reason: "no se pudo conectar con la impresora en 10.0.0.9:9100"}}
	}
	n, ok := failedJob(rep(false, apitype.PrinterCheckJob, seen.Add(time.Second)), seen)
	if !ok || !n.Failed || n.Urgent || n.Summary != "No se pudo imprimir" ||
		n.Body != "La impresora «termica» no imprimió el comprobante: no se pudo conectar con la impresora en 10.0.0.9:9100" {
		t.Errorf("failed job: %+v, %v", n, ok)
	}
	for name, r := range map[string]*apitype.StateReport{
		"idle check": rep(false, apitype.PrinterCheckIdle, seen.Add(time.Second)),
		"printed":    rep(true, apitype.PrinterCheckJob, seen.Add(time.Second)),
		"old":        rep(false, apitype.PrinterCheckJob, seen),
		"none":       {}, "no report": nil,
	} {
		if n, ok := failedJob(r, seen); ok {
			t.Errorf("%s: notified %+v", name, n)
		}
	}
}
