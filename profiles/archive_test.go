package profiles

import (
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
)

func TestArchive_Before(t *testing.T) {
	t.Parallel()
	// 2026-01-01 01:30 UTC is still 2025 in Montevideo.
	newYearUTC := time.Date(2026, time.January, 1, 1, 30, 0, 0, time.UTC)
	mid := time.Date(2026, time.June, 15, 12, 0, 0, 0, cfe.Montevideo)
	for _, tc := range []struct {
		name string
		a    Archive
		now  time.Time
		want cfe.Date
	}{
		{"default", Archive{}, mid, cfe.Date{Year: 2026, Month: time.January, Day: 1}},
		{"one", Archive{KeepYears: 1}, mid, cfe.Date{Year: 2026, Month: time.January, Day: 1}},
		{"three", Archive{KeepYears: 3}, mid, cfe.Date{Year: 2024, Month: time.January, Day: 1}},
		{"montevideo-year", Archive{}, newYearUTC, cfe.Date{Year: 2025, Month: time.January, Day: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.a.Before(tc.now); got != tc.want {
				t.Errorf("Before(%s) = %s, want %s", tc.now, got, tc.want)
			}
		})
	}
}

func TestArchive_Validate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		keep int
		ok   bool
	}{{0, true}, {1, true}, {50, true}, {-1, false}, {51, false}} {
		v := &validator{}
		v.archive("profiles.p.archive", Archive{KeepYears: tc.keep})
		if ok := len(v.fields) == 0; ok != tc.ok {
			t.Errorf("keep_years %d: errors %v, want ok=%v", tc.keep, v.fields, tc.ok)
		}
		if !tc.ok && (len(v.fields) != 1 || v.fields[0].Campo != "profiles.p.archive.keep_years") {
			t.Errorf("keep_years %d: %v", tc.keep, v.fields)
		}
	}
}
