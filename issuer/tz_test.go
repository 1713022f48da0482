package issuer

import (
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the rules do not depend on the machine's zoneinfo files
)

func TestMachineZone_TZ(t *testing.T) {
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	dst2014 := time.Date(2014, 12, 15, 12, 0, 0, 0, time.UTC) // Uruguay still had summer time (-02:00)
	tests := []struct {
		tz     string
		at     time.Time
		ok     bool
		name   string
		offset string
	}{
		{"America/Montevideo", now, true, "America/Montevideo", "-03:00"},
		{":America/Montevideo", now, true, "America/Montevideo", "-03:00"},
		{"/usr/share/zoneinfo/America/Montevideo", now, true, "America/Montevideo", "-03:00"},
		// Right offset, wrong zone.
		{"America/Argentina/Buenos_Aires", now, false, "America/Argentina/Buenos_Aires", "-03:00"},
		{"America/Sao_Paulo", now, false, "America/Sao_Paulo", "-03:00"},
		// Right zone, wrong offset (the zone's own summer time in 2014).
		{"America/Montevideo", dst2014, false, "America/Montevideo", "-02:00"},
		{"UTC", now, false, "UTC", "+00:00"},
		{"", now, false, "UTC", "+00:00"},
		{"Europe/Madrid", now, false, "Europe/Madrid", "+01:00"},
		{"Not/AZone", now, false, "Not/AZone", "+00:00"},
	}
	for _, tc := range tests {
		t.Run(tc.tz, func(t *testing.T) {
			t.Setenv("TZ", tc.tz)
			z := MachineZone(tc.at)
			if z.OK() != tc.ok || z.Name != tc.name || FormatOffset(z.Offset) != tc.offset || z.Source != "TZ" {
				t.Fatalf("MachineZone with TZ=%q = %+v (ok=%v), want name %s offset %s ok=%v",
					tc.tz, z, z.OK(), tc.name, tc.offset, tc.ok)
			}
			msg := z.Message()
			if !tc.ok && (!strings.Contains(msg, tc.name) || !strings.Contains(msg, tc.offset) ||
				!strings.Contains(msg, "America/Montevideo con desfase -03:00")) {
				t.Errorf("message %q does not say what was found (%s %s) and what is required", msg, tc.name, tc.offset)
			}
		})
	}
}

func TestZoneStatus_WindowsName(t *testing.T) {
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
	for sec, want := range map[int]string{-10800: "-03:00", 0: "+00:00", 19800: "+05:30", -9000: "-02:30"} {
		if got := FormatOffset(sec); got != want {
			t.Errorf("FormatOffset(%d) = %s, want %s", sec, got, want)
		}
	}
}

// TestLoadLocation: a zone is read from the zoneinfo files once, then served
// from memory; a zone that does not exist is not remembered.
func TestLoadLocation(t *testing.T) {
	first, err := loadLocation("America/Montevideo")
	if err != nil {
		t.Fatal(err)
	}
	again, err := loadLocation("America/Montevideo")
	if err != nil || again != first {
		t.Errorf("second load: %p, %v; want the first location %p again", again, err, first)
	}
	if _, err := loadLocation("Not/AZone"); err == nil {
		t.Fatal("an unknown zone loaded")
	}
	if _, ok := locations.Load("Not/AZone"); ok {
		t.Error("an unknown zone was cached")
	}
}
