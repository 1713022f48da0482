package main

import (
	"context"
	"fmt"
	"io"

	"github.com/cfe-agent/cfe-agent/localapi/apitype"
	"github.com/cfe-agent/cfe-agent/profiles"
)

// liveAgent is a running agent of a profile: while it runs it holds the
// store's lock, so the technician's read-only commands (cae list, cert show,
// doctor) read from its local module instead.
type liveAgent struct {
	baseURL string
	state   *apitype.StateReport
}

// findLiveAgent looks for the profile's running agent where its run file
// says it serves, else at the profile's address, and returns it when it
// answers /state for that profile.
func findLiveAgent(ctx context.Context, dataDir, name string, p profiles.Profile) (*liveAgent, bool) {
	base := "http://" + p.Listen
	if info, ok := readRunFile(dataDir, name); ok {
		base = info.BaseURL
	}
	r, err := stateAt(ctx, base)
	if err != nil || r.Profile != name {
		return nil, false
	}
	return &liveAgent{baseURL: base, state: r}, true
}

// note tells the technician, on w (stderr), that the data come from the
// running agent.
func (l *liveAgent) note(w io.Writer) {
	fmt.Fprintf(w, "(el agente está en ejecución: datos leídos de su módulo local en %s)\n", l.baseURL)
}

// openLive finds the active profile's running agent; when there is none it
// returns nil and the caller opens the store itself.
func openLive(ctx context.Context, opts globalOptions) (*liveAgent, error) {
	dataDir, cfg, _, err := loadConfig(opts)
	if err != nil {
		return nil, err
	}
	p, ok := cfg.ActiveProfile()
	if !ok {
		return nil, nil // openAgent says that the profile does not exist
	}
	if l, ok := findLiveAgent(ctx, dataDir, cfg.Active, p.Resolve(dataDir)); ok {
		return l, nil
	}
	return nil, nil
}
