package profiles

import (
	"time"
)

// Defaults of Backup.
const (
	DefaultBackupKeep   = 7
	DefaultBackupPeriod = 24 * time.Hour
	maxBackupKeep       = 1000
	minBackupPeriod     = time.Minute
)

// Backup configures the agent's automatic backups of its store (cfe-agent
// backup). Without Folder there are none; "cfe-agent backup" still works.
type Backup struct {
	// Folder receives the automatic backups: a second disk or a network share
	// is the expected use (relative paths are under the data directory).
	Folder string `yaml:"folder,omitempty"`
	// Keep is how many automatic backups are kept, the newest (default 7).
	Keep int `yaml:"keep,omitempty"`
	// Period is how often one is taken (default 24h); a backup older than it
	// is reported as late.
	Period time.Duration `yaml:"period,omitempty"`
	// EveryN takes one more after every N CFEs signed since the last one (0:
	// only by period).
	EveryN int `yaml:"every_n,omitempty"`
}

// Enabled reports whether automatic backups are configured.
func (b Backup) Enabled() bool { return b.Folder != "" }

// KeepOrDefault is Keep, or its default when unset.
func (b Backup) KeepOrDefault() int {
	if b.Keep <= 0 {
		return DefaultBackupKeep
	}
	return b.Keep
}

// PeriodOrDefault is Period, or its default when unset.
func (b Backup) PeriodOrDefault() time.Duration {
	if b.Period <= 0 {
		return DefaultBackupPeriod
	}
	return b.Period
}

func (v *validator) backup(at string, b Backup) {
	if b.Keep < 0 || b.Keep > maxBackupKeep {
		v.fail(at+".keep", "debe estar entre 1 y %d (0: %d)", maxBackupKeep, DefaultBackupKeep)
	}
	if b.Period != 0 && b.Period < minBackupPeriod {
		v.fail(at+".period", "debe ser de al menos %s (por ejemplo 24h)", minBackupPeriod)
	}
	if b.EveryN < 0 {
		v.fail(at+".every_n", "debe ser 0 (solo por período) o un número positivo de comprobantes")
	}
	if b.Folder == "" && (b.Keep != 0 || b.Period != 0 || b.EveryN != 0) {
		v.fail(at+".folder", "es obligatoria para las copias automáticas (keep, period o every_n sin folder no hacen nada)")
	}
}
