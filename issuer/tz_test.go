package issuer

import (
	"strings"
	"testing"
)

func TestZoneStatus_WindowsName(t *testing.T) {
	t.Parallel()
	z := ZoneStatus{Name: "Montevideo Standard Time", Source: "registry", Offset: -3 * 3600}
	if !z.OK() {
		t.Fatal("the Windows name of America/Montevideo must be accepted")
	}
	z.Offset = -2 * 3600
	if z.OK() {
		t.Fatal("a Montevideo zone at -02:00 must be rejected")
	}
	if (ZoneStatus{Name: "Argentina Standard Time", Offset: -3 * 3600}).OK() {
		t.Fatal("another zone at -03:00 must be rejected")
	}
}

func TestFormatOffset(t *testing.T) {
	t.Parallel()
	for sec, want := range map[int]string{-10800: "-03:00", 0: "+00:00", 19800: "+05:30", -9000: "-02:30"} {
		if got := FormatOffset(sec); got != want {
			t.Errorf("FormatOffset(%d) = %s, want %s", sec, got, want)
		}
	}
}

// TestZoneStatus_MessageSaysWhereToFix checks that a Windows machine (the
// zone read from the registry) is told where Windows sets the zone, and
// other machines are not given Windows' path.
func TestZoneStatus_MessageSaysWhereToFix(t *testing.T) {
	t.Parallel()
	win := ZoneStatus{Name: "SA Eastern Standard Time", Source: WindowsZoneSource, Offset: -3 * 3600}.Message()
	if want := "Corrija la zona horaria en Configuración > Hora e idioma > Fecha y hora > Zona horaria: «(UTC-03:00) Montevideo» y reintente"; !strings.Contains(win, want) {
		t.Errorf("Windows message %q lacks %q", win, want)
	}
	linux := ZoneStatus{Name: "UTC", Source: "/etc/localtime"}.Message()
	if strings.Contains(linux, "Configuración >") || !strings.Contains(linux, "Corrija la zona horaria del sistema y reintente") {
		t.Errorf("Linux message %q", linux)
	}
}
