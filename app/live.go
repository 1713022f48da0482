package app

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/cfe-agent/cfe-agent/localapi/apitype"
	"github.com/cfe-agent/cfe-agent/localapi/localclient"
	"github.com/cfe-agent/cfe-agent/profiles"
)

// Live is a running agent of a profile: while it runs it holds the store's
// lock, so the technician's read-only commands (cae list, cert show, doctor)
// read from its local module instead.
type Live struct {
	BaseURL string
	State   *apitype.StateReport
}

// FindLive looks for the profile's running agent where its run file says it
// serves, else at the profile's address, and returns it when it answers
// /state for that profile.
func FindLive(ctx context.Context, dataDir, name string, p profiles.Profile) (*Live, bool) {
	base := "http://" + p.Listen
	if info, ok := ReadRunFile(dataDir, name); ok {
		base = info.BaseURL
	}
	r, err := StateAt(ctx, base)
	if err != nil || r.Profile != name {
		return nil, false
	}
	return &Live{BaseURL: base, State: r}, true
}

// Note tells the technician, on w (stderr), that the data come from the
// running agent.
func (l *Live) Note(w io.Writer) {
	fmt.Fprintf(w, "(el agente está en ejecución: datos leídos de su módulo local en %s)\n", l.BaseURL)
}

// OpenLive finds the active profile's running agent; when there is none it
// returns nil and the caller opens the store itself.
func OpenLive(ctx context.Context, opts Options) (*Live, error) {
	dataDir, cfg, _, err := LoadConfig(opts)
	if err != nil {
		return nil, err
	}
	p, ok := cfg.ActiveProfile()
	if !ok {
		return nil, nil // Open says that the profile does not exist
	}
	if l, ok := FindLive(ctx, dataDir, cfg.Active, p.Resolve(dataDir)); ok {
		return l, nil
	}
	return nil, nil
}

// StateAt reads the state report of the local module at baseURL, waiting at
// most a few seconds.
func StateAt(ctx context.Context, baseURL string) (*apitype.StateReport, error) {
	c, err := localclient.New(baseURL, localclient.Options{HTTPClient: &http.Client{Timeout: 3 * time.Second}})
	if err != nil {
		return nil, err
	}
	return c.State(ctx)
}
