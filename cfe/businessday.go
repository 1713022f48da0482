package cfe

import "time"

// Business days for the daily report's deadline. DGI expects a day's report
// within the first 18 hours of the next business day (dgi-lifecycle.md §4,
// a secondary source). Which days are business days is read here as
// narrowly as the law allows, so that a warning comes early rather than
// late: Saturdays, Sundays and Uruguay's five non-movable, non-working
// national holidays (feriados no laborables: 1 January, 1 May, 18 July,
// 25 August, 25 December; Ley 16.805 art. 1 as amended by Ley 17.414).
// Carnival, Holy Week (Semana de Turismo) and the working holidays
// (feriados laborables, some moved to a Monday by Ley 16.805) are counted
// as business days: a shop warned a day early loses nothing, one warned a
// day late may miss DGI's deadline. No maintained Go calendar library
// knows Uruguay's holidays (github.com/rickar/cal/v2 v2.1.13 has no uy
// package), so the five dates are kept here.

// nonWorkingHolidays are the national holidays on which no one works, by
// month and day.
var nonWorkingHolidays = map[[2]int]string{
	{1, 1}:   "Año Nuevo",
	{5, 1}:   "Día de los Trabajadores",
	{7, 18}:  "Jura de la Constitución",
	{8, 25}:  "Declaratoria de la Independencia",
	{12, 25}: "Día de la Familia",
}

// Holiday returns the name of the non-working national holiday on d, ""
// when d is none.
func Holiday(d Date) string { return nonWorkingHolidays[[2]int{int(d.Month), d.Day}] }

// BusinessDay reports whether d is a business day: not a Saturday, a
// Sunday or a non-working national holiday (see the comment above).
func BusinessDay(d Date) bool {
	switch d.Time(time.UTC).Weekday() {
	case time.Saturday, time.Sunday:
		return false
	}
	return Holiday(d) == ""
}

// NextBusinessDay returns the first business day after d.
func NextBusinessDay(d Date) Date {
	for n := d.AddDays(1); ; n = n.AddDays(1) {
		if BusinessDay(n) {
			return n
		}
	}
}

// Report urgency: how late a day's report is (ReportUrgency).
const (
	ReportOnTime = ""      // not late yet
	ReportLate   = "ambar" // 12:00 of the next business day has passed
	ReportUrgent = "roja"  // 18:00 of the next business day has passed: DGI's deadline
)

// ReportUrgency says how late the report of day d is at now, while DGI has
// not received it (no AR or DR): ReportLate from 12:00 of the next business
// day in Montevideo, ReportUrgent from 18:00 (the end of the first 18 hours
// of that day, DGI's deadline), ReportOnTime before; deadline is that
// 18:00.
func ReportUrgency(d Date, now time.Time) (level string, deadline time.Time) {
	next := NextBusinessDay(d).Time(Montevideo)
	amber, red := next.Add(12*time.Hour), next.Add(18*time.Hour)
	switch {
	case !now.Before(red):
		return ReportUrgent, red
	case !now.Before(amber):
		return ReportLate, red
	}
	return ReportOnTime, red
}
