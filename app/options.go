package app

import "github.com/cfe-agent/cfe-agent/profiles"

// Options are the choices every command shares (the command line's global
// flags, parsed by cmd/cfe-agent).
type Options struct {
	DataDir string // --data-dir
	Profile string // --profile: the profile to use instead of the active one
	// Listen is --listen of the commands that run the agent, kept here so
	// that every load of the configuration in the running agent (reopening,
	// the tray's diagnostics) applies it.
	Listen string
}

// Overrides are the options that override the configuration, for
// profiles.LoadWith: they win over the environment and the file and obey
// the file's rules.
func (o Options) Overrides() profiles.Overrides {
	return profiles.Overrides{Profile: o.Profile, Listen: o.Listen}
}

// LoadConfig reads (on first run: writes, then reads) the configuration and
// picks the profile.
func LoadConfig(opts Options) (dataDir string, cfg *profiles.Config, created bool, err error) {
	dataDir, err = profiles.DataDir(opts.DataDir)
	if err != nil {
		return "", nil, false, err
	}
	// The profile flag wins over the file's active profile; the environment
	// overrides then apply to it, and the listen flag over them.
	cfg, created, err = profiles.EnsureDefaultWith(dataDir, opts.Overrides())
	return dataDir, cfg, created, err
}
