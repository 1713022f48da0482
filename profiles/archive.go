package profiles

import (
	"time"

	"github.com/cfe-agent/cfe-agent/cfe"
)

// Archive is when the agent moves old CFEs out of its store into yearly
// archive files (store.DB.Archive): once a day while it serves, and with
// `cfe-agent archive`.
type Archive struct {
	// KeepYears is how many calendar years stay in the store, the current
	// one included (default 1: the CFEs of previous calendar years move).
	KeepYears int `yaml:"keep_years,omitempty"`
	// Disabled stops the daily archive while the agent serves; `cfe-agent
	// archive` still works.
	Disabled bool `yaml:"disabled,omitempty"`
}

// maxKeepYears bounds KeepYears: DGI asks shops to keep CFEs for years, not
// the agent's live store.
const maxKeepYears = 50

// Before returns the date before which signed CFEs move, at now: January 1
// of the oldest calendar year kept.
func (a Archive) Before(now time.Time) cfe.Date {
	keep := max(a.KeepYears, 1)
	return cfe.Date{Year: now.In(cfe.Montevideo).Year() - keep + 1, Month: time.January, Day: 1}
}

func (v *validator) archive(at string, a Archive) {
	if a.KeepYears < 0 || a.KeepYears > maxKeepYears {
		v.fail(at+".keep_years", "debe ser de 1 a %d años (0: el año en curso)", maxKeepYears)
	}
}
