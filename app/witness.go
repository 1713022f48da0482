package app

import (
	"log/slog"
	"strings"

	"github.com/cfe-agent/cfe-agent/profiles"
	"github.com/cfe-agent/cfe-agent/store"
)

// WitnessKey is whose numbering a profile's witness records.
func WitnessKey(p profiles.Profile, name string) store.WitnessKey {
	return store.WitnessKey{RUC: p.Company.RUC, Environment: string(p.Environment), Profile: strings.ToLower(name)}
}

// WitnessPath is the numbering witness of a profile (store.Options.Witness,
// docs/numbering.md "The witness"): in profiles.WitnessDir, outside the data
// directory. "" with the reason when there is no place for it: the agent
// then works without one, as before witnesses, and says so.
func WitnessPath(dataDir string, p profiles.Profile, name string) (string, error) {
	dir, err := profiles.WitnessDir(dataDir)
	if err != nil {
		return "", err
	}
	return store.WitnessFile(dir, WitnessKey(p, name)), nil
}

// logWitness logs what Open found in the witness and whether it could be
// written.
func logWitness(log *slog.Logger, db *store.DB) {
	st := db.WitnessStatus()
	if st == nil {
		return
	}
	for _, d := range st.Detail {
		log.Warn("numbering witness", "file", st.Path, "detail", d)
	}
	if st.Problem != "" {
		log.Warn("numbering witness not in order: copies of the data directory put back are not detected until it is",
			"file", st.Path, "problem", st.Problem)
	}
}
