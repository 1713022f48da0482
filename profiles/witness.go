package profiles

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// EnvWitnessDir is the folder of the numbering witness, instead of the
// default WitnessDir chooses.
const EnvWitnessDir = EnvPrefix + "WITNESS_DIR"

// WitnessDir returns the folder of the numbering witness of an agent whose
// data directory is dataDir (absolute): a record of how far numbering went,
// kept per machine outside the data directory so that an old copy of the
// data directory put back is found out (store.Options.Witness,
// docs/numbering.md "The witness").
//
// It is $CFE_AGENT_WITNESS_DIR when set; else, per user and machine:
//   - Windows: %LOCALAPPDATA%\cfe-agent\witness, the local (not roaming)
//     application data: a roaming profile carries the data directory
//     (%APPDATA%) to other machines, not this folder. The service, which
//     runs as LocalSystem, gets LocalSystem's own, which only
//     administrators can change;
//   - elsewhere: $XDG_STATE_HOME/cfe-agent/witness, by default
//     ~/.local/state/cfe-agent/witness (XDG's place for state that stays on
//     the machine).
//
// When that folder lies inside the data directory (a system user whose home
// is its data directory, as the .deb's cfe-agent, home /var/lib/cfe-agent),
// a copy of the data directory would carry it: the folder beside the data
// directory is used instead, <data dir>-witness (/var/lib/cfe-agent-witness,
// which the .deb's unit has systemd make). A $CFE_AGENT_WITNESS_DIR inside
// the data directory is an error, as is a machine with no home folder.
func WitnessDir(dataDir string) (string, error) {
	dataDir = filepath.Clean(dataDir)
	if dir := os.Getenv(EnvWitnessDir); dir != "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return "", err
		}
		if within(dataDir, abs) {
			return "", fmt.Errorf("profiles: %s (%s) lies inside the data directory %s: a copy of the data directory would carry the witness", EnvWitnessDir, abs, dataDir)
		}
		return abs, nil
	}
	dir, err := defaultWitnessDir()
	if err != nil {
		return "", err
	}
	return outside(dataDir, dir), nil
}

// ServiceWitnessDir is WitnessDir as a Linux system service sees it: systemd
// sets HOME to the service user's home, and nothing else, so the folder is
// home/.local/state/cfe-agent/witness, or <data dir>-witness when that lies
// inside the data directory ("cfe-agent service install" makes it and names
// it in the unit).
func ServiceWitnessDir(dataDir, home string) string {
	return outside(filepath.Clean(dataDir), filepath.Join(home, ".local", "state", "cfe-agent", "witness"))
}

// outside is dir, or the folder beside dataDir when dir lies inside it.
func outside(dataDir, dir string) string {
	if within(dataDir, dir) {
		return dataDir + "-witness"
	}
	return dir
}

// defaultWitnessDir is the user's own witness folder (see WitnessDir).
func defaultWitnessDir() (string, error) {
	if runtime.GOOS == "windows" {
		base, err := os.UserCacheDir() // %LocalAppData% on Windows
		if err != nil {
			return "", fmt.Errorf("profiles: no local application data folder for the numbering witness (set %s): %w", EnvWitnessDir, err)
		}
		return filepath.Join(base, "cfe-agent", "witness"), nil
	}
	if s := os.Getenv("XDG_STATE_HOME"); filepath.IsAbs(s) {
		return filepath.Join(s, "cfe-agent", "witness"), nil
	}
	home := os.Getenv("HOME")
	if !filepath.IsAbs(home) {
		return "", errors.New("profiles: no home folder for the numbering witness (set " + EnvWitnessDir + ")")
	}
	return filepath.Join(home, ".local", "state", "cfe-agent", "witness"), nil
}

// within reports whether path is dir or lies inside it.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, filepath.Clean(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
