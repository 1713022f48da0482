package machinezone

import (
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // the rules do not depend on the machine's zoneinfo files

	"github.com/cfe-agent/cfe-agent/issuer"
)

// TestRead_TZ: the zone TZ names, read as the C library and Go read it, and
// the issuer's rule on what was read. It sets TZ, so it does not run in
// parallel.
func TestRead_TZ(t *testing.T) {
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
			z := Read(tc.at)
			if z.OK() != tc.ok || z.Name != tc.name || issuer.FormatOffset(z.Offset) != tc.offset || z.Source != "TZ" {
				t.Fatalf("Read with TZ=%q = %+v (ok=%v), want name %s offset %s ok=%v",
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

// TestLoadLocation: a zone is read from the zoneinfo files once, then served
// from memory; a zone that does not exist is not remembered.
func TestLoadLocation(t *testing.T) {
	t.Parallel()
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
