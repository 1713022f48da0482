package cfe_test

import (
	"testing"
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
)

func TestNextBusinessDay(t *testing.T) {
	t.Parallel()
	d := func(s string) cfe.Date {
		v, err := cfe.ParseDate(s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, c := range []struct{ day, next string }{
		{"2026-11-25", "2026-11-26"}, // Wednesday → Thursday
		{"2026-11-27", "2026-11-30"}, // Friday → Monday
		{"2026-11-28", "2026-11-30"}, // Saturday → Monday
		{"2026-12-24", "2026-12-28"}, // Thursday → Friday 25 is a holiday, then the weekend
		{"2026-12-31", "2027-01-04"}, // Thursday → 1 January (Friday), the weekend
		{"2026-04-30", "2026-05-04"}, // Thursday → 1 May (Friday), the weekend
		{"2027-07-16", "2027-07-19"}, // Friday → Monday 19 (18 July is a Sunday)
		{"2026-08-24", "2026-08-26"}, // Monday → 25 August (Tuesday) skipped
		{"2026-02-13", "2026-02-16"}, // Friday → Carnival Monday counts as a business day
	} {
		if got := cfe.NextBusinessDay(d(c.day)); got != d(c.next) {
			t.Errorf("NextBusinessDay(%s) = %s, want %s", c.day, got, c.next)
		}
	}
	if cfe.Holiday(d("2026-07-18")) == "" || cfe.Holiday(d("2026-07-19")) != "" {
		t.Error("18 July is a holiday, 19 July is not")
	}
}

func TestReportUrgency(t *testing.T) {
	t.Parallel()
	day := cfe.Date{Year: 2026, Month: time.November, Day: 27} // a Friday: its next business day is Monday 30
	at := func(dd, hh, mm int) time.Time {
		return time.Date(2026, time.November, dd, hh, mm, 0, 0, cfe.Montevideo)
	}
	for _, c := range []struct {
		now  time.Time
		want string
	}{
		{at(28, 0, 5), cfe.ReportOnTime},
		{at(29, 13, 0), cfe.ReportOnTime}, // Sunday afternoon is not the next business day
		{at(30, 11, 59), cfe.ReportOnTime},
		{at(30, 12, 0), cfe.ReportLate},
		{at(30, 17, 59), cfe.ReportLate},
		{at(30, 18, 0), cfe.ReportUrgent},
		{time.Date(2026, time.December, 1, 9, 0, 0, 0, time.UTC), cfe.ReportUrgent},
	} {
		got, deadline := cfe.ReportUrgency(day, c.now)
		if got != c.want {
			t.Errorf("at %s: urgency %q, want %q", c.now, got, c.want)
		}
		if !deadline.Equal(at(30, 18, 0)) {
			t.Errorf("deadline %s, want Monday 18:00", deadline)
		}
	}
}
