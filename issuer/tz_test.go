package issuer

import "testing"

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
